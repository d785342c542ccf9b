#pragma once
// Shape inference: the per-example shape on every edge (the batch dimension is implicit),
// recomputed by the editor after each edit, so it is a single topological pass with no
// allocation per node beyond the shapes themselves.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "graph/problem.h"
#include "graph/registry.h"

namespace plexus::graph {

struct InferenceResult {
  // node id -> one shape per output port; absent when it could not be inferred (a problem
  // upstream, an open port, a cycle).
  std::unordered_map<std::string, std::vector<Shape>> outputs;
  std::vector<std::optional<Shape>> edge_shapes;  // per graph.edges index
  std::vector<Problem> problems;                  // shape problems found by the layer rules
  std::vector<std::string> order;                 // node ids in topological order (cycles left out)
  std::vector<std::string> in_cycle;              // node ids on or behind a cycle
};

InferenceResult infer_shapes(const Graph& graph, const DatasetInfo* dataset);

// The edges into each input port of `node`, in port order (variadic ports keep edge order).
std::vector<std::pair<const PortSpec*, std::vector<size_t>>> input_edges(const Graph& graph, const Node& node,
                                                                          const LayerType& type);

}  // namespace plexus::graph
