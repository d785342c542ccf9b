#pragma once
// Questions about the blocks of a graph (Graph::blocks): which block holds a node, which nodes a
// block holds, which of its members' ports face the outside, and whether the annotation is
// well formed. Blocks are an annotation over the flat graph: nothing here changes what trains.
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace plexus::graph {

// The block whose members list `id` (a node or block id); null for one at the top level.
const Block* parent_block(const Graph& graph, const std::string& id);

// The node ids inside `block`, through nested blocks, in graph order.
std::vector<std::string> block_nodes(const Graph& graph, const Block& block);

// The nested block ids inside `block` (children before their own children), not `block` itself.
std::vector<std::string> block_descendants(const Graph& graph, const Block& block);

// True when `id` (a node or block) is `block` or lies inside it, at any depth.
bool block_contains(const Graph& graph, const Block& block, const std::string& id);

// The outermost collapsed block that hides `id` (a node or block: strict ancestors only); null
// when every block around it is open. The editor draws hidden items through this block.
const Block* hiding_block(const Graph& graph, const std::string& id);

// The ports of a block's member nodes that face the outside: inputs fed from outside the block
// or not fed at all (but for optional ones), outputs feeding outside or, of a node feeding
// nothing, every output. Ordered by the members' graph order,
// then by the order of the type's ports (ports of unknown types: those edges name, by name).
struct BlockPorts {
  std::vector<PortRef> inputs, outputs;
};
BlockPorts open_ports(const Graph& graph, const Block& block);

// `members` ordered canonically: nodes in graph order, then blocks in graph order; ids that
// are neither are dropped. The editor keeps members in this order, so that grouping and then
// ungrouping gives back exactly the list it started from.
std::vector<std::string> canonical_members(const Graph& graph, const std::vector<std::string>& members);

// What is wrong with the graph's blocks, the first thing found: a bad or repeated id (nodes and
// blocks share ids), a member that is no node or block, a member of two blocks, a block inside
// itself. `block` and `member` index where (member: nullopt when the block itself is wrong).
struct BlockIssue {
  size_t block = 0;
  std::optional<size_t> member;
  std::string message;  // names the block id and what
};
std::optional<BlockIssue> check_blocks(const Graph& graph);

}  // namespace plexus::graph
