#pragma once
// What training a graph holds in memory, estimated before anything is allocated, from the
// registry (each type's parameter_count) and the inferred shapes: every learned value with its
// gradient and the optimizer's state for it; every node's outputs for one batch, kept for the
// backward pass, with their gradients; the batch of examples; and the dataset itself as
// float32 when its size is known. It is rough: workspaces of single operations are left out,
// and outputs that are views (Flatten) count as copies. Counts are doubles, so absurd sizes
// stay large instead of wrapping around to small numbers.
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/inference.h"
#include "graph/registry.h"

namespace plexus::graph {

inline constexpr double kBytesPerValue = 4;  // float32, the only element type training uses

struct NodeMemory {
  std::string node;             // node id
  double parameters = 0;        // values it learns
  double parameter_bytes = 0;   // those, their gradients and the optimizer's state for them
  double activation_bytes = 0;  // its outputs for one batch (with their gradients, except the Input's)
  double dataset_bytes = 0;     // the Input only: every example of the dataset, when their number is known
  double bytes() const { return parameter_bytes + activation_bytes + dataset_bytes; }
};

struct MemoryEstimate {
  int64_t batch_size = 1;         // the graph's training batch size (at least 1)
  int optimizer_state = 0;        // parameter-sized tensors the optimizer keeps per parameter
  double parameters = 0;          // values the model learns
  double bytes = 0;               // the sum over `nodes`
  std::vector<NodeMemory> nodes;  // the nodes counted, in topological order
  const NodeMemory* largest() const;  // the node holding the most; null when none is counted
  double activation_bytes() const;    // the nodes' outputs for one batch (with gradients)
};

// Per node index: whether training computes the node: it feeds a loss (every node while the
// graph has no loss, so that an unfinished graph is still estimated).
std::vector<char> trained_nodes(const GraphIndex& index);

// Counts the nodes that lead to a loss (every node while the graph has no loss) whose output
// shapes `shapes` knows, with the graph's batch size and optimizer settings.
MemoryEstimate estimate_memory(const GraphIndex& index, const InferenceResult& shapes, const DatasetInfo* dataset);

}  // namespace plexus::graph
