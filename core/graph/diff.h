#pragma once
// What changed between two graphs: nodes added, removed, retyped, renamed or with other
// parameters; edges added and removed; dataset and training settings that differ. The run
// comparison draws it on the canvas, an edit made while training was paused is marked on the
// curves with it, and continuing a run checks with it that the structure is the same.
// Positions and the editor's view state are not part of a difference.
#include <string>
#include <vector>

#include "graph/graph.h"

namespace plexus::graph {

struct ParamChange {
  std::string name;           // parameter (or setting) name
  std::string before, after;  // to_string of the values, the type's defaults filled in
};

// A node with the same id in both graphs that differs in type, name, parameters or its own
// training settings.
struct NodeChange {
  std::string id;
  std::string type_before, type_after;  // equal unless the node was replaced by another type
  std::string name_before, name_after;
  std::vector<ParamChange> params;      // by the parameter's order in its type (after's type)
  // Its training settings (graph/node_settings.h: lr_mult, ...): how it trains, not what it is,
  // so not a change of structure.
  std::vector<ParamChange> settings;
  bool retyped() const { return type_before != type_after; }
  bool renamed() const { return name_before != name_after; }
};

struct GraphDiff {
  std::vector<std::string> added;    // node ids only in `after`, in its order
  std::vector<std::string> removed;  // node ids only in `before`, in its order
  std::vector<NodeChange> changed;   // in `after`'s order
  std::vector<Edge> edges_added, edges_removed;
  // "dataset.path", "training.lr", ...: every setting that differs (file keys).
  std::vector<ParamChange> settings;

  // No difference in nodes (ids, types, parameters; names and node settings aside) or edges.
  bool same_structure() const;
  bool empty() const { return same_structure() && settings.empty() && !any_renamed() && !any_node_settings(); }
  bool any_renamed() const;
  bool any_node_settings() const;
  const NodeChange* change(const std::string& id) const;  // null when the node did not change
};

GraphDiff diff(const Graph& before, const Graph& after);

// One line per difference, for people: "added Linear 'fc3'", "removed ReLU 'relu2'",
// "Linear 'fc1': out_features 128 → 64" (a node setting alike: "Linear 'fc1': lr_mult 1 → 0"),
// "'fc1' renamed to 'hidden'", "Conv2d 'c1' became MaxPool2d", "wire fc1.out → relu1.in added",
// "training.lr 0.01 → 0.001". Node labels are `after`'s (removed nodes: `before`'s).
std::vector<std::string> describe(const GraphDiff& diff, const Graph& before, const Graph& after);

// The counts at a glance: "2 nodes added, 1 removed, 3 parameters changed, 1 wire added,
// 2 settings differ" (nodes: added, removed, retyped, renamed; parameters of retyped nodes are
// not counted; settings: the project's and the nodes' own), or "no differences".
std::string summary(const GraphDiff& diff);

// Both graphs in one, as a comparison draws them: `after`'s nodes and wires, then the nodes and
// wires removed since `before`, at their places there. Nodes and wires only: no dataset, no
// settings, no view.
Graph union_graph(const Graph& before, const Graph& after);

}  // namespace plexus::graph
