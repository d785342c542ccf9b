#include "graph/blocks.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "graph/json_text.h"
#include "graph/registry.h"
#include "util/text.h"

namespace plexus::graph {
namespace {

using json::cat;
using json::shown;

// Every port name of `node`'s side, in the type's order; an unknown type's from the edges.
std::vector<std::string> port_names(const Graph& graph, const Node& node, bool input) {
  std::vector<std::string> names;
  if (const LayerType* type = Registry::instance().find(node.type)) {
    for (const PortSpec& p : input ? type->inputs : type->outputs_of(node)) names.push_back(p.name);
    return names;
  }
  for (const Edge& e : graph.edges) {
    const PortRef& end = input ? e.to : e.from;
    if (end.node == node.id && std::find(names.begin(), names.end(), end.port) == names.end()) names.push_back(end.port);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool optional_input(const Node& node, const std::string& port) {
  const LayerType* type = Registry::instance().find(node.type);
  const PortSpec* spec = type ? type->input(port) : nullptr;
  return spec && !spec->required;
}

}  // namespace

const Block* parent_block(const Graph& graph, const std::string& id) {
  for (const Block& b : graph.blocks)
    if (std::find(b.members.begin(), b.members.end(), id) != b.members.end()) return &b;
  return nullptr;
}

bool block_contains(const Graph& graph, const Block& block, const std::string& id) {
  // Upwards from `id`; the walk is bounded, so a malformed cycle cannot hang it.
  std::string current = id;
  for (size_t steps = 0; steps <= graph.blocks.size(); ++steps) {
    if (current == block.id) return true;
    const Block* parent = parent_block(graph, current);
    if (!parent) return false;
    current = parent->id;
  }
  return false;
}

std::vector<std::string> block_nodes(const Graph& graph, const Block& block) {
  std::vector<std::string> out;
  for (const Node& n : graph.nodes)
    if (block_contains(graph, block, n.id)) out.push_back(n.id);
  return out;
}

std::vector<std::string> block_descendants(const Graph& graph, const Block& block) {
  std::vector<std::string> out;
  std::vector<const Block*> queue{&block};
  for (size_t i = 0; i < queue.size() && queue.size() <= graph.blocks.size(); ++i)
    for (const std::string& m : queue[i]->members)
      if (const Block* b = graph.find_block(m)) {
        out.push_back(b->id);
        queue.push_back(b);
      }
  return out;
}

const Block* hiding_block(const Graph& graph, const std::string& id) {
  const Block* hiding = nullptr;
  const Block* parent = parent_block(graph, id);
  for (size_t steps = 0; parent && steps < graph.blocks.size(); ++steps) {
    if (parent->collapsed) hiding = parent;
    parent = parent_block(graph, parent->id);
  }
  return hiding;
}

BlockPorts open_ports(const Graph& graph, const Block& block) {
  const std::vector<std::string> inside_ids = block_nodes(graph, block);
  const std::unordered_set<std::string> inside(inside_ids.begin(), inside_ids.end());
  BlockPorts ports;
  for (const Node& n : graph.nodes) {
    if (!inside.contains(n.id)) continue;
    const bool feeds = std::any_of(graph.edges.begin(), graph.edges.end(), [&](const Edge& e) { return e.from.node == n.id; });
    for (const bool input : {true, false})
      for (const std::string& port : port_names(graph, n, input)) {
        bool wired = false, outside = false;
        for (const Edge& e : graph.edges) {
          const PortRef& end = input ? e.to : e.from;
          if (end.node != n.id || end.port != port) continue;
          wired = true;
          outside = outside || !inside.contains(input ? e.from.node : e.to.node);
        }
        // An optional input left unwired (attention's key) is no opening the block needs, nor is
        // an unwired output of a node that feeds others (a recurrent layer's state, a Split's
        // unused piece): only a node feeding nothing offers its results.
        if (!wired && (input ? optional_input(n, port) : feeds)) continue;
        if (!wired || outside) (input ? ports.inputs : ports.outputs).push_back(PortRef{n.id, port});
      }
  }
  return ports;
}

std::vector<std::string> canonical_members(const Graph& graph, const std::vector<std::string>& members) {
  const std::unordered_set<std::string> wanted(members.begin(), members.end());
  std::vector<std::string> out;
  for (const Node& n : graph.nodes)
    if (wanted.contains(n.id)) out.push_back(n.id);
  for (const Block& b : graph.blocks)
    if (wanted.contains(b.id)) out.push_back(b.id);
  return out;
}

std::optional<BlockIssue> check_blocks(const Graph& graph) {
  std::unordered_set<std::string> nodes;
  for (const Node& n : graph.nodes) nodes.insert(n.id);
  std::unordered_map<std::string, size_t> blocks;  // id -> index
  for (size_t i = 0; i < graph.blocks.size(); ++i) {
    const std::string& id = graph.blocks[i].id;
    if (!valid_node_id(id))
      return BlockIssue{i, std::nullopt,
                        cat(shown(id), " is not a valid block id; ids use letters, digits, '_' and '-', start with a "
                                       "letter or '_' and have at most 128 characters")};
    if (nodes.contains(id)) return BlockIssue{i, std::nullopt, cat("block id ", shown(id), " is also a node's id")};
    if (const auto [it, fresh] = blocks.emplace(id, i); !fresh)
      return BlockIssue{i, std::nullopt,
                        cat("duplicate block id ", shown(id), ", also used by blocks[", std::to_string(it->second), ']')};
  }
  std::unordered_map<std::string, size_t> owner;  // member -> index of its block
  for (size_t i = 0; i < graph.blocks.size(); ++i) {
    const Block& b = graph.blocks[i];
    for (size_t k = 0; k < b.members.size(); ++k) {
      const std::string& m = b.members[k];
      if (m == b.id) return BlockIssue{i, k, cat("block ", shown(b.id), " lists itself as a member")};
      if (!nodes.contains(m) && !blocks.contains(m))
        return BlockIssue{i, k, cat("block ", shown(b.id), " has an unknown member ", shown(m), ": no node or block has that id")};
      if (const auto [it, fresh] = owner.emplace(m, i); !fresh)
        return BlockIssue{i, k,
                          it->second == i ? cat("block ", shown(b.id), " lists ", shown(m), " twice")
                                          : cat("block ", shown(b.id), " lists ", shown(m), ", already a member of block ",
                                                shown(graph.blocks[it->second].id), " (a member is in one block at most)")};
    }
  }
  // Each member has one owner, so following owners upwards from a block either ends at the top
  // or comes back round: a cycle.
  for (size_t i = 0; i < graph.blocks.size(); ++i) {
    std::vector<std::string> chain{graph.blocks[i].id};
    for (auto it = owner.find(chain.back()); it != owner.end() && chain.size() <= graph.blocks.size();
         it = owner.find(chain.back())) {
      chain.push_back(graph.blocks[it->second].id);
      if (chain.back() == chain.front()) {
        std::reverse(chain.begin(), chain.end());
        return BlockIssue{i, std::nullopt,
                          cat("block ", shown(chain.front()), " is inside itself: ", join(chain, " contains "))};
      }
    }
  }
  return std::nullopt;
}

}  // namespace plexus::graph
