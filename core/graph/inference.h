#pragma once
// Shape inference: the per-example shape on every edge (the batch dimension is implicit),
// recomputed by the editor after each edit, so it is a single topological pass with no
// allocation per node beyond the shapes themselves.
#include <optional>
#include <string>
#include <string_view>
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

// Lookups built once per pass, so a pass over the graph is linear in its size: the node with
// each id (the first, if ids repeat) and the edges into and out of it. Refers to `graph`,
// which must outlive it and stay unchanged.
struct GraphIndex {
  explicit GraphIndex(const Graph& graph);
  const Graph& graph;
  std::unordered_map<std::string_view, size_t> node;  // id -> index of the first node with it
  std::vector<std::vector<size_t>> into, from;         // per node index: edge indices, in edge order
  static constexpr size_t npos = size_t(-1);
  std::vector<size_t> source, target;                  // per edge: node index of each end, or npos
  const Node* find(std::string_view id) const;         // null if no node has it
  // The edges into / out of the node with this id (empty for an unknown id).
  const std::vector<size_t>& edges_into(std::string_view id) const;
  const std::vector<size_t>& edges_from(std::string_view id) const;
  // Per node index: 1 for the nodes `ends` (node indices) and every node that feeds one of
  // them through some path, else 0.
  std::vector<char> feeding(std::vector<size_t> ends) const;
};

InferenceResult infer_shapes(const Graph& graph, const DatasetInfo* dataset);
InferenceResult infer_shapes(const GraphIndex& index, const DatasetInfo* dataset);

// "[N, 1, 28, 28]": a per-example shape with the batch written as N, as messages show shapes.
std::string batched(const Shape& s);

// Values per example above this are refused by shape inference ("too large"), so element
// counts and the sums of a Concat always fit in int64.
inline constexpr int64_t kMaxValuesPerExample = int64_t(1) << 62;

// The edges into each input port of `node`, in port order (variadic ports keep edge order).
std::vector<std::pair<const PortSpec*, std::vector<size_t>>> input_edges(const Graph& graph, const Node& node,
                                                                          const LayerType& type);
std::vector<std::pair<const PortSpec*, std::vector<size_t>>> input_edges(const GraphIndex& index, const Node& node,
                                                                          const LayerType& type);

// The shapes arriving at `node`'s inputs in port order (variadic ports in edge order), for a
// node whose outputs `shapes` knows (so every input shape is known).
std::vector<Shape> input_shapes(const GraphIndex& index, const InferenceResult& shapes, const Node& node,
                                const LayerType& type);

}  // namespace plexus::graph
