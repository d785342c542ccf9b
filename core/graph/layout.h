#pragma once
// Auto layout for the node editor: a layered left-to-right drawing of the graph, data flowing
// from the inputs on the left to the losses on the right. Pure geometry, no Qt.
#include <functional>
#include <map>
#include <string>

#include "graph/graph.h"

namespace plexus::graph {

struct LayoutSize {
  double width = 180, height = 100;
};

struct LayoutOptions {
  std::function<LayoutSize(const Node&)> node_size;  // null = every node 180 x 100
  double column_gap = 70;                            // horizontal space between layers
  double row_gap = 40;                               // vertical space between nodes in a layer
  double component_gap = 80;                         // vertical space between disconnected components
};

// New top-left positions for every node, id -> position (whole numbers), the whole drawing's
// top-left at (0, 0). Each node's column is the longest path to it from a source; cycles are
// broken at the back edges of a depth-first search in node order, and edges to missing nodes are
// ignored. Nodes in a column are ordered by barycenter sweeps to reduce crossings, columns are
// centred vertically, and weakly connected components are stacked top to bottom in the order of
// their first node. A repeated id gets the position of its first node. Deterministic; linear
// in the graph's size apart from sorting inside columns.
std::map<std::string, Position> auto_layout(const Graph& graph, const LayoutOptions& options = {});

// The same for what the editor shows of a graph with blocks: the nodes no closed block hides, and
// one card per outermost closed block (at its first member's place in node order) with the wires
// between them. New positions of those nodes, and of those blocks' cards (`block_size`: a card's
// size, null = a node's default).
struct ShownLayout {
  std::map<std::string, Position> nodes, blocks;
};
ShownLayout auto_layout_shown(const Graph& graph, const LayoutOptions& options = {},
                              const std::function<LayoutSize(const Block&)>& block_size = {});

}  // namespace plexus::graph
