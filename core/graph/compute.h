#pragma once
// What one training step of a graph computes, counted from the registry (each type's `macs`
// rule) and the inferred shapes, so that a run's speed can be set against the machine's peak
// (the train events' gflops and peak_gflops). Per example and per layer with products:
//   forward pass     M multiply-adds (LayerType::macs)
//   weight gradient  M again: dL/dW is a product of the same size
//   input gradient   M again, except where the layer's input depends on nothing learned (the
//                    layers right after the Input): autograd computes no gradient there
// and a multiply-add is 2 FLOPs: 6M FLOPs a layer, 4M for those first ones. Elementwise
// work, pooling and normalisation are not counted (LayerType::macs). bench/bench_cpu.cpp
// counts the same by hand for its models, and tests/test_graph.cpp holds the two together.
#include <string>
#include <vector>

#include "graph/inference.h"

namespace plexus::graph {

struct NodeCompute {
  std::string node;         // node id
  double macs = 0;          // forward multiply-adds per example
  bool input_grad = false;  // its input depends on something learned, so backward computes its gradient
};

struct ComputeEstimate {
  double forward_macs = 0;        // per example
  double training_flops = 0;      // per example: forward and backward, as above
  std::vector<NodeCompute> nodes; // the nodes with products, in topological order
};

// Counts the nodes that lead to a loss (every node while the graph has no loss) whose shapes
// `shapes` knows.
ComputeEstimate estimate_compute(const GraphIndex& index, const InferenceResult& shapes);

}  // namespace plexus::graph
