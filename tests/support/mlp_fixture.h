#pragma once
// The small MLP many app and training tests build: in -> flat -> Linear -> ReLU -> ... ->
// Linear -> CrossEntropy, on an MNIST-format folder (the tests write generated digits there).
// The ReLUs are "act", "act2", "act3", ...; the callers set the training settings they test.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace plexus::testing {

struct MlpLayer {
  std::string id;
  int64_t out_features;
};

inline graph::Graph mlp_graph(const std::string& data, const std::vector<MlpLayer>& linears) {
  graph::Graph g;
  const auto node = [&](const std::string& id, const std::string& type, std::map<std::string, graph::ParamValue> params = {}) {
    g.nodes.push_back({id, type, id, std::move(params), {}});
  };
  const auto edge = [&](const std::string& a, const std::string& ap, const std::string& b, const std::string& bp) {
    g.edges.push_back({{a, ap}, {b, bp}});
  };
  node("in", "Input");
  node("flat", "Flatten");
  edge("in", "x", "flat", "input");
  std::string last = "flat";
  for (size_t i = 0; i < linears.size(); ++i) {
    node(linears[i].id, "Linear", {{"out_features", linears[i].out_features}});
    edge(last, "output", linears[i].id, "input");
    last = linears[i].id;
    if (i + 1 == linears.size()) break;
    const std::string act = i == 0 ? "act" : "act" + std::to_string(i + 1);
    node(act, "ReLU");
    edge(last, "output", act, "input");
    last = act;
  }
  node("loss", "CrossEntropy");
  edge(last, "output", "loss", "input");
  edge("in", "y", "loss", "target");
  g.dataset = {.kind = "mnist", .path = data};
  return g;
}

// The MLP with a Dropout ("drop") after its first ReLU, trained with Adam on a step schedule
// for 3 epochs: a run whose random generator, optimizer state and learning rate must all carry
// on when it resumes (the resume suites of the CLI and the app).
inline graph::Graph resumable_mlp(const std::string& data, int64_t hidden, double lr, int64_t batch_size,
                                  int64_t seed) {
  graph::Graph g = mlp_graph(data, {{"fc1", hidden}, {"fc2", 10}});
  g.nodes.push_back({"drop", "Dropout", "drop", {{"p", 0.2}}, {}});
  for (graph::Edge& e : g.edges)
    if (e.from.node == "act") e.from.node = "drop";
  g.edges.push_back({{"act", "output"}, {"drop", "input"}});
  g.training.optimizer = "adam";
  g.training.lr = lr;
  g.training.batch_size = batch_size;
  g.training.epochs = 3;
  g.training.seed = seed;
  g.training.schedule = "step";
  g.training.step_size = 1;
  return g;
}

// The pair the partial-loading tests compare: in -> flat -> fc1(32) -> act -> fc2(`hidden`) ->
// act2 -> `head`(10) -> loss, Adam; two of them differ in fc2's width and the head's id.
inline graph::Graph partial_load_mlp(const std::string& data, int64_t hidden, const std::string& head) {
  graph::Graph g = mlp_graph(data, {{"fc1", 32}, {"fc2", hidden}, {head, 10}});
  g.training.optimizer = "adam";
  g.training.lr = 0.01;
  g.training.batch_size = 20;
  g.training.epochs = 1;
  return g;
}

}  // namespace plexus::testing
