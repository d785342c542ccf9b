#include "graph/graph.h"

#include <cctype>
#include <set>
#include <sstream>

namespace plexus::graph {

std::string to_string(const ParamValue& v) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          os << (x ? "true" : "false");
        } else if constexpr (!std::is_same_v<T, std::string> && !std::is_arithmetic_v<T>) {  // a list
          os << '[';
          for (size_t i = 0; i < x.size(); ++i) os << (i ? ", " : "") << x[i];
          os << ']';
        } else {
          os << x;
        }
      },
      v);
  return os.str();
}

std::string Node::label() const { return type + " '" + (name.empty() ? id : name) + "'"; }

const Node* Graph::find(const std::string& id) const {
  for (const Node& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

Node* Graph::find(const std::string& id) {
  for (Node& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

const Block* Graph::find_block(const std::string& id) const {
  for (const Block& b : blocks)
    if (b.id == id) return &b;
  return nullptr;
}

std::vector<const Edge*> Graph::edges_into(const std::string& node) const {
  std::vector<const Edge*> out;
  for (const Edge& e : edges)
    if (e.to.node == node) out.push_back(&e);
  return out;
}

std::vector<const Edge*> Graph::edges_from(const std::string& node) const {
  std::vector<const Edge*> out;
  for (const Edge& e : edges)
    if (e.from.node == node) out.push_back(&e);
  return out;
}

std::vector<std::string> Graph::upstream(const std::string& node) const {
  if (!find(node)) return {};
  std::set<std::string> reached{node};
  std::vector<std::string> todo{node};
  while (!todo.empty()) {
    const std::string at = todo.back();
    todo.pop_back();
    for (const Edge* e : edges_into(at))
      if (reached.insert(e->from.node).second) todo.push_back(e->from.node);
  }
  std::vector<std::string> out;
  for (const Node& n : nodes)
    if (reached.count(n.id)) out.push_back(n.id);
  return out;
}

bool valid_node_id(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  if (!(std::isalpha(static_cast<unsigned char>(id[0])) || id[0] == '_')) return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

}  // namespace plexus::graph
