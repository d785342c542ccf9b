#include "graph/module_blocks.h"

#include <algorithm>
#include <map>

#include "graph/blocks.h"

namespace plexus::graph {

void blocks_from_module_names(Graph& graph, const std::function<std::string(const std::string&)>& new_id) {
  // prefix -> the nodes under it (at any depth)
  std::map<std::string, int> under;
  auto prefixes = [](const std::string& name) {
    std::vector<std::string> out;
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
      out.push_back(name.substr(0, dot));
    return out;
  };
  for (const Node& n : graph.nodes)
    for (const std::string& p : prefixes(n.name)) ++under[p];
  // The innermost prefix of a name that makes a block: shared by two nodes or more.
  auto enclosing = [&](const std::string& name) -> std::string {
    const std::vector<std::string> ps = prefixes(name);
    for (auto it = ps.rbegin(); it != ps.rend(); ++it)
      if (under[*it] > 1) return *it;
    return "";
  };
  graph.blocks.clear();
  std::map<std::string, size_t> block_of;  // prefix -> index in graph.blocks
  // Blocks outermost first, so that each finds its parent made already.
  std::vector<std::string> order;
  for (const auto& [prefix, count] : under)
    if (count > 1) order.push_back(prefix);
  std::stable_sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
    return std::count(a.begin(), a.end(), '.') < std::count(b.begin(), b.end(), '.');
  });
  for (const std::string& prefix : order) {
    Block b;
    b.id = new_id(prefix);
    b.name = prefix.substr(prefix.rfind('.') == std::string::npos ? 0 : prefix.rfind('.') + 1);
    block_of[prefix] = graph.blocks.size();
    graph.blocks.push_back(b);
    const std::string parent = enclosing(prefix);
    if (!parent.empty()) graph.blocks[block_of.at(parent)].members.push_back(b.id);
  }
  for (const Node& n : graph.nodes) {
    const std::string parent = enclosing(n.name);
    if (parent.empty()) continue;
    Block& b = graph.blocks[block_of.at(parent)];
    b.members.push_back(n.id);
  }
  for (Block& b : graph.blocks) {
    b.members = canonical_members(graph, b.members);
    bool first = true;
    for (const std::string& id : block_nodes(graph, b)) {
      const Position& p = graph.find(id)->position;
      b.position = first ? p : Position{std::min(b.position.x, p.x), std::min(b.position.y, p.y)};
      first = false;
    }
  }
}

}  // namespace plexus::graph
