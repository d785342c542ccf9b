// bench_graph: shape inference and validation on large graphs, against the editor's budget.
//
//   bench_graph [--quick]
//
// The editor re-runs validate() (which includes shape inference) after every edit, so a call
// must take well under 1 ms for a graph a person draws (~100 nodes). The graphs: Input ->
// Flatten -> blocks of Linear(64) -> ReLU, every third block closed by a residual Add, ->
// Linear(10) -> CrossEntropy, padded to exactly 100 and 1000 nodes. For each size and each
// function: warm up, then time single calls until 0.5 s have passed (0.1 s with --quick), and
// print the median and best microseconds per call and the median as a share of 1 ms.
// Always exits 0; the last line is "validate 100 nodes: X us (Y of the 1 ms budget)".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "graph/inference.h"
#include "graph/validate.h"

using namespace plexus;
using namespace plexus::graph;
using Clock = std::chrono::steady_clock;

namespace {

graph::Node node(const std::string& id, std::string type, std::map<std::string, ParamValue> params = {}) {
  return graph::Node{id, std::move(type), id, std::move(params), {}};
}
graph::Edge edge(std::string from, std::string from_port, std::string to, std::string to_port = "input") {
  return graph::Edge{{std::move(from), std::move(from_port)}, {std::move(to), std::move(to_port)}};
}

// A valid graph with exactly `n` nodes (n >= 8).
Graph residual_mlp(size_t n) {
  Graph g;
  g.nodes = {node("in", "Input"), node("flat", "Flatten"), node("fc0", "Linear", {{"out_features", int64_t(64)}})};
  g.edges = {edge("in", "x", "flat"), edge("flat", "output", "fc0")};
  std::string last = "fc0", skip = "fc0";
  size_t block = 0;
  // The tail (head Linear, loss) takes 2 nodes; each block 2 (Linear, ReLU) or 3 (with an Add).
  while (g.nodes.size() + 2 < n) {
    const size_t room = n - 2 - g.nodes.size();
    const std::string b = std::to_string(++block);
    if (room == 1) {  // one node left: a Dropout keeps the count exact
      g.nodes.push_back(node("drop" + b, "Dropout"));
      g.edges.push_back(edge(last, "output", "drop" + b));
      last = "drop" + b;
      continue;
    }
    g.nodes.push_back(node("fc" + b, "Linear", {{"out_features", int64_t(64)}}));
    g.nodes.push_back(node("act" + b, "ReLU"));
    g.edges.push_back(edge(last, "output", "fc" + b));
    g.edges.push_back(edge("fc" + b, "output", "act" + b));
    last = "act" + b;
    if (block % 3 == 0 && room >= 3) {
      g.nodes.push_back(node("add" + b, "Add"));
      g.edges.push_back(edge(last, "output", "add" + b, "inputs"));
      g.edges.push_back(edge(skip, "output", "add" + b, "inputs"));
      last = skip = "add" + b;
    }
  }
  g.nodes.push_back(node("head", "Linear", {{"out_features", int64_t(10)}}));
  g.nodes.push_back(node("loss", "CrossEntropy"));
  g.edges.push_back(edge(last, "output", "head"));
  g.edges.push_back(edge("head", "output", "loss"));
  g.edges.push_back(edge("in", "y", "loss", "target"));
  return g;
}

struct Timing {
  double median_us, best_us;
  size_t calls;
};

Timing time_calls(const std::function<void()>& f, double seconds) {
  for (int i = 0; i < 20; ++i) f();
  std::vector<double> us;
  const auto start = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds || us.size() < 50) {
    const auto t0 = Clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front(), us.size()};
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
  const double seconds = quick ? 0.1 : 0.5;
  const DatasetInfo mnist{{1, 28, 28}, {}, 10};
  std::printf("%-12s %6s %6s %12s %10s %10s %8s\n", "function", "nodes", "edges", "calls", "median us", "best us",
              "of 1 ms");
  double validate100 = 0;
  for (const size_t n : {size_t(100), size_t(1000)}) {
    const Graph g = residual_mlp(n);
    const Validation check = validate(g, &mnist);
    if (g.nodes.size() != n || !check.ok() || !check.problems.empty()) {
      std::fprintf(stderr, "bench graph of %zu nodes is not clean (%zu nodes, %zu problems)\n", n, g.nodes.size(),
                   check.problems.size());
      return 1;
    }
    size_t sink = 0;
    const Timing inf = time_calls([&] { sink += infer_shapes(g, &mnist).order.size(); }, seconds);
    const Timing val = time_calls([&] { sink += validate(g, &mnist).problems.size(); }, seconds);
    for (const auto& [name, t] : {std::pair<const char*, Timing>{"infer_shapes", inf}, {"validate", val}})
      std::printf("%-12s %6zu %6zu %12zu %10.1f %10.1f %7.1f%%\n", name, g.nodes.size(), g.edges.size(), t.calls,
                  t.median_us, t.best_us, t.median_us / 10.0);
    if (n == 100) validate100 = val.median_us;
    if (sink == 0) std::printf("(no work)\n");
  }
  std::printf("validate 100 nodes: %.1f us (%.1f%% of the 1 ms budget)\n", validate100, validate100 / 10.0);
  return 0;
}
