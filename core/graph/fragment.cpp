#include "graph/fragment.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "graph/blocks.h"
#include "graph/project.h"

namespace plexus::graph {
namespace {

using Taken = std::unordered_set<std::string>;

Taken ids_of(const Graph& graph) {
  Taken ids;
  for (const Node& n : graph.nodes) ids.insert(n.id);
  for (const Block& b : graph.blocks) ids.insert(b.id);  // one namespace for both
  return ids;
}

// `stem` plus the smallest n >= 1 that `taken` does not hold. A stem that is not a valid id
// becomes "node"; a long one is cut so that the digits still fit the 128-character limit.
std::string numbered(std::string stem, const Taken& taken) {
  if (stem.size() > 100) stem.resize(100);  // ids are ASCII: cutting keeps them whole
  if (!valid_node_id(stem)) stem = "node";
  for (uint64_t n = 1;; ++n)
    if (std::string id = stem + std::to_string(n); !taken.contains(id)) return id;
}

std::string unique_in(const std::string& wanted, const Taken& taken) {
  if (valid_node_id(wanted) && !taken.contains(wanted)) return wanted;
  std::string stem = wanted;
  while (!stem.empty() && std::isdigit(static_cast<unsigned char>(stem.back()))) stem.pop_back();
  return numbered(std::move(stem), taken);
}

}  // namespace

std::string new_node_id(const Graph& graph, const std::string& type) {
  std::string stem = type;
  for (char& c : stem) c = char(std::tolower(static_cast<unsigned char>(c)));
  return numbered(std::move(stem), ids_of(graph));
}

std::string unique_node_id(const Graph& graph, const std::string& wanted, const std::set<std::string>& also_taken) {
  Taken taken = ids_of(graph);
  taken.insert(also_taken.begin(), also_taken.end());
  return unique_in(wanted, taken);
}

Graph extract_fragment(const Graph& graph, const std::vector<std::string>& node_ids) {
  const std::unordered_set<std::string_view> selected(node_ids.begin(), node_ids.end());
  Graph fragment;
  for (const Node& n : graph.nodes)
    if (selected.contains(n.id)) fragment.nodes.push_back(n);
  for (const Edge& e : graph.edges)
    if (selected.contains(e.from.node) && selected.contains(e.to.node)) fragment.edges.push_back(e);
  // A block comes along when all of its members do; nested blocks first, until none is added.
  std::unordered_set<std::string> carried;
  for (bool added = true; added;) {
    added = false;
    for (const Block& b : graph.blocks) {
      if (carried.contains(b.id)) continue;
      const bool whole = std::all_of(b.members.begin(), b.members.end(), [&](const std::string& m) {
        return selected.contains(m) || carried.contains(m);
      });
      if (whole && !b.members.empty()) {
        carried.insert(b.id);
        added = true;
      }
    }
  }
  for (const Block& b : graph.blocks)
    if (carried.contains(b.id)) fragment.blocks.push_back(b);
  return fragment;
}

Graph extract_block(const Graph& graph, const std::string& block_id) {
  const Block* block = graph.find_block(block_id);
  if (!block) return {};
  Graph fragment = extract_fragment(graph, block_nodes(graph, *block));
  for (Block& b : fragment.blocks)
    if (b.id == block_id) b.collapsed = true;
  return fragment;
}

Pasted paste_fragment(const Graph& target, const Graph& fragment, Position offset) {
  Taken taken = ids_of(target);
  std::unordered_map<std::string, std::string> renamed;  // fragment id -> pasted id
  Pasted pasted;
  for (const Node& n : fragment.nodes) {
    Node& p = pasted.nodes.emplace_back(n);
    p.id = unique_in(n.id, taken);
    if (n.name == n.id) p.name = p.id;
    p.position = {n.position.x + offset.x, n.position.y + offset.y};
    taken.insert(p.id);
    renamed.emplace(n.id, p.id);  // the first node with an id keeps its edges
  }
  for (const Edge& e : fragment.edges) {
    const auto from = renamed.find(e.from.node), to = renamed.find(e.to.node);
    if (from == renamed.end() || to == renamed.end()) continue;
    pasted.edges.push_back(Edge{{from->second, e.from.port}, {to->second, e.to.port}});
  }
  // Blocks after the nodes, so that their ids are fresh among the pasted nodes' too; a member
  // that was not pasted is dropped.
  for (const Block& b : fragment.blocks) {
    Block& p = pasted.blocks.emplace_back(b);
    p.id = unique_in(b.id, taken);
    p.position = {b.position.x + offset.x, b.position.y + offset.y};
    taken.insert(p.id);
    renamed.emplace(b.id, p.id);
  }
  for (Block& p : pasted.blocks) {
    std::vector<std::string> members;
    for (const std::string& m : p.members)
      if (const auto it = renamed.find(m); it != renamed.end()) members.push_back(it->second);
    p.members = std::move(members);
  }
  return pasted;
}

std::string fragment_to_text(const Graph& fragment) { return serialize_project(fragment); }

Graph fragment_from_text(std::string_view text) { return parse_project(text, "the clipboard"); }

}  // namespace plexus::graph
