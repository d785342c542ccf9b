#pragma once
// Graphs written node by node in tests: node(), edge(), and the table model with two Inputs
// that the several-inputs suites share.
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace plexus::testing {

inline graph::Node node(std::string id, std::string type, std::map<std::string, graph::ParamValue> params = {}) {
  return graph::Node{id, std::move(type), id, std::move(params), {}};
}
inline graph::Edge edge(std::string from, std::string from_port, std::string to, std::string to_port = "input") {
  return graph::Edge{{std::move(from), std::move(from_port)}, {std::move(to), std::move(to_port)}};
}

// Keras' wide-and-deep table model: the `measurements` columns through a Linear (Input "num"),
// the category column "kind" (indices 0..5, unstandardised; Input "kind") through an Embedding,
// joined, through a ReLU, and classified into 3 classes by CrossEntropy against num's labels.
inline graph::Graph measurements_and_kind(const std::vector<std::string>& measurements = {"a", "b", "c", "d"}) {
  using P = std::map<std::string, graph::ParamValue>;
  graph::Graph g;
  g.nodes = {node("num", "Input", P{{"columns", measurements}}),
             node("kind", "Input", P{{"columns", std::vector<std::string>{"kind"}}, {"standardize", false}}),
             node("fc", "Linear", P{{"out_features", int64_t(6)}}),
             node("emb", "Embedding", P{{"num_embeddings", int64_t(6)}, {"embedding_dim", int64_t(4)}}),
             node("flat", "Flatten"),
             node("join", "Concat"),
             node("act", "ReLU"),
             node("out", "Linear", P{{"out_features", int64_t(3)}}),
             node("ce", "CrossEntropy")};
  g.edges = {edge("num", "x", "fc"),
             edge("kind", "x", "emb"),
             edge("emb", "output", "flat"),
             edge("fc", "output", "join", "inputs"),
             edge("flat", "output", "join", "inputs"),
             edge("join", "output", "act"),
             edge("act", "output", "out"),
             edge("out", "output", "ce"),
             edge("num", "y", "ce", "target")};
  return g;
}

}  // namespace plexus::testing
