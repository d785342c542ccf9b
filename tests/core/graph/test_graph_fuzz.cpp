// Fuzzing the validator, shape inference and the compiler with random mutations of valid
// graphs, at the Graph level: random node types from the registry (and unknown ones), random
// parameters (in range, out of range, wrongly typed, huge: 2^24, 2^62, INT64_MAX), random
// edges (cycles, self-loops, duplicates, dangling ends, unknown ports), removed and duplicated
// nodes. For every mutant:
//   - validate() returns problems and never throws or crashes (the sanitizer build catches
//     integer overflow and out-of-bounds reads in the shape rules);
//   - every problem is one line and names a node of the graph (or none);
//   - validate() is deterministic (checked on every 4th mutant);
//   - if validate() says ok, compile() succeeds (nothing is caught), and when the model is
//     small (by the validator's memory estimate: at most 1e6 parameters and 8 MB of outputs per
//     example) a forward pass and the loss on a batch of two run and the prediction has the
//     inferred shape;
//   - the mutant survives serialize_project -> parse_project unchanged (every 4th only in the
//     sanitizer build, where the unoptimised JSON parser would dominate the run time);
//   - (loadedMutants) text mutations of the same graphs (tests/project_fuzz.h) that the loader
//     accepts go through the same checks.
//
//   PLEXUS_FUZZ_SEED=N       another seed (default 1)
//   PLEXUS_FUZZ_ITERS=N      another number of mutants (default 4000)
// A failure prints the seed, the iteration and the mutant, so it can be replayed.
#include "support/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "graph/inference.h"
#include "graph/project.h"
#include "graph/registry.h"
#include "graph/validate.h"
#include "layers/compiler.h"
#include "plexus.h"
#include "support/project_fuzz.h"

using namespace plexus;
using namespace plexus::graph;
using namespace plexus::layers;

namespace {

graph::Node node(std::string id, std::string type, std::map<std::string, ParamValue> params = {}) {
  return graph::Node{id, std::move(type), id, std::move(params), {}};
}
graph::Edge edge(std::string from, std::string from_port, std::string to, std::string to_port = "input") {
  return graph::Edge{{std::move(from), std::move(from_port)}, {std::move(to), std::move(to_port)}};
}

// ---- valid starting points ------------------------------------------------------------------
Graph mlp() {
  Graph g;
  g.nodes = {node("in", "Input"), node("flat", "Flatten"), node("fc1", "Linear", {{"out_features", int64_t(32)}}),
             node("act", "ReLU"), node("fc2", "Linear", {{"out_features", int64_t(10)}}), node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "flat"), edge("flat", "output", "fc1"), edge("fc1", "output", "act"),
             edge("act", "output", "fc2"), edge("fc2", "output", "loss"), edge("in", "y", "loss", "target")};
  g.dataset = {.kind = "mnist", .path = "data/mnist"};
  return g;
}

Graph lenet() {
  Graph g;
  g.nodes = {node("in", "Input"),
             node("c1", "Conv2d", {{"out_channels", int64_t(4)}, {"kernel_size", int64_t(5)}}),
             node("p1", "MaxPool2d"),
             node("c2", "Conv2d", {{"out_channels", int64_t(6)}, {"kernel_size", int64_t(5)}, {"padding", int64_t(2)}}),
             node("bn", "BatchNorm2d"),
             node("p2", "AvgPool2d", {{"kernel_size", int64_t(2)}}),
             node("f", "Flatten"),
             node("drop", "Dropout", {{"p", 0.25}}),
             node("fc", "Linear", {{"out_features", int64_t(10)}}),
             node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "c1"),        edge("c1", "output", "p1"),   edge("p1", "output", "c2"),
             edge("c2", "output", "bn"),   edge("bn", "output", "p2"),   edge("p2", "output", "f"),
             edge("f", "output", "drop"),  edge("drop", "output", "fc"), edge("fc", "output", "loss"),
             edge("in", "y", "loss", "target")};
  g.dataset = {.kind = "mnist", .path = "data/mnist"};
  return g;
}

// Residual and concat over 5 features, 3 classes.
Graph residual() {
  Graph g;
  g.nodes = {node("in", "Input"),       node("fc1", "Linear", {{"out_features", int64_t(6)}}),
             node("a1", "Tanh"),        node("fc2", "Linear", {{"out_features", int64_t(6)}}),
             node("sum", "Add"),        node("cat", "Concat"),
             node("sm", "Softmax"),     node("out", "Linear", {{"out_features", int64_t(3)}}),
             node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "fc1"),
             edge("fc1", "output", "a1"),
             edge("a1", "output", "fc2"),
             edge("fc2", "output", "sum", "inputs"),
             edge("fc1", "output", "sum", "inputs"),
             edge("sum", "output", "cat", "inputs"),
             edge("a1", "output", "cat", "inputs"),
             edge("cat", "output", "sm"),
             edge("sm", "output", "out"),
             edge("out", "output", "loss"),
             edge("in", "y", "loss", "target")};
  g.dataset = {.kind = "csv", .path = "data/iris.csv", .target = "species", .task = "classification"};
  return g;
}

// Regression over 13 features with a reshape.
Graph regression() {
  Graph g;
  g.nodes = {node("in", "Input"),
             node("bn", "BatchNorm1d"),
             node("fc1", "Linear", {{"out_features", int64_t(8)}}),
             node("act", "GELU"),
             node("rs", "Reshape", {{"shape", std::vector<int64_t>{2, 4}}}),
             node("lr", "LeakyReLU"),
             node("fl", "Flatten"),
             node("fc2", "Linear", {{"out_features", int64_t(1)}}),
             node("loss", "MSE")};
  g.edges = {edge("in", "x", "bn"),   edge("bn", "output", "fc1"), edge("fc1", "output", "act"),
             edge("act", "output", "rs"), edge("rs", "output", "lr"), edge("lr", "output", "fl"),
             edge("fl", "output", "fc2"), edge("fc2", "output", "loss"), edge("in", "y", "loss", "target")};
  g.dataset = {.kind = "csv", .path = "data/housing.csv", .target = "price", .task = "regression"};
  return g;
}

struct Base {
  Graph graph;
  DatasetInfo info;
};

// ---- random values --------------------------------------------------------------------------
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  size_t below(size_t n) { return n ? size_t(rng_() % n) : 0; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

  int64_t interesting_int() {
    static const std::vector<int64_t> values = {0,       1,        -1,         2,         3,         4,
                                                5,       7,        10,         28,        64,        65,
                                                100,     1 << 20,  1 << 24,    (1 << 24) + 1, int64_t(1) << 31,
                                                int64_t(1) << 32, int64_t(1) << 62, kInt64Max, kInt64Min,
                                                -(int64_t(1) << 62), -2, 8, 9};
    return chance(0.7) ? pick(values) : int64_t(below(40)) - 5;
  }

  double interesting_double() {
    static const std::vector<double> values = {0.0,  0.5,  1.0,  -1.0, 0.99, 1e-12, 1e-13, 2.0, 1e300, -1e300,
                                               std::numeric_limits<double>::infinity(),
                                               -std::numeric_limits<double>::infinity(),
                                               std::numeric_limits<double>::quiet_NaN(), 4.0, 3.5};
    return pick(values);
  }

  ParamValue any_value() {
    switch (below(5)) {
      case 0: return interesting_int();
      case 1: return interesting_double();
      case 2: return chance(0.5);
      case 3: return pick(std::vector<std::string>{"", "same", "mean", "x", "true"});
      default: {
        std::vector<int64_t> l(below(10));
        for (int64_t& x : l) x = interesting_int();
        return l;
      }
    }
  }

  // Mostly a well-typed value, often at or past the edges of the range.
  ParamValue value_for(const ParamSpec& s) {
    if (chance(0.15)) return any_value();
    const auto edge_int = [&]() -> int64_t {
      switch (below(5)) {
        case 0: return int64_t(s.min);
        case 1: return int64_t(s.max);
        case 2: return int64_t(s.min) + int64_t(below(4));
        case 3: return int64_t(s.max) + 1;
        default: return interesting_int();
      }
    };
    switch (s.type) {
      case ParamType::Int:
        if (!s.choices.empty() && chance(0.3)) return chance(0.8) ? pick(s.choices) : std::string("samee");
        return edge_int();
      case ParamType::IntPair:
        switch (below(4)) {
          case 0: return edge_int();
          case 1: return std::vector<int64_t>{edge_int(), edge_int()};
          case 2: {
            const size_t not_two[] = {0, 1, 3};
            return std::vector<int64_t>(not_two[below(3)], int64_t(s.min) + 1);
          }
          default: return s.choices.empty() ? ParamValue(std::string("same")) : ParamValue(pick(s.choices));
        }
      case ParamType::Float:
        return chance(0.5) ? ParamValue(s.min + (s.max - s.min) * std::uniform_real_distribution<double>(0, 1)(rng_))
                           : ParamValue(interesting_double());
      case ParamType::Bool: return chance(0.5);
      case ParamType::Choice: return s.choices.empty() || chance(0.2) ? std::string("nope") : pick(s.choices);
      case ParamType::IntList: {
        std::vector<int64_t> l(below(chance(0.9) ? 5 : 10));
        for (int64_t& x : l) x = chance(0.5) ? edge_int() : int64_t(below(30)) + 1;
        return l;
      }
      case ParamType::FloatList: {
        std::vector<double> l(below(chance(0.9) ? 5 : 12));
        for (double& x : l) x = chance(0.5) ? interesting_double() : std::uniform_real_distribution<double>(0, 3)(rng_);
        if (l.empty()) return std::vector<int64_t>{};  // what a file's "[]" reads back as
        return l;
      }
      case ParamType::Names: {
        std::vector<std::string> l(below(chance(0.9) ? 4 : 8));
        for (std::string& x : l) x = pick(std::vector<std::string>{"a", "b", "", "kind", "a b", "\"q\""});
        if (l.empty()) return std::vector<int64_t>{};
        return l;
      }
    }
    return int64_t(0);
  }

  // ---- mutations ----------------------------------------------------------------------------
  std::string type_name() {
    const auto& types = Registry::instance().types();
    if (chance(0.05)) return pick(std::vector<std::string>{"Bogus", "", "linear", "Conv3d"});
    return types[below(types.size())].name;
  }

  std::string fresh_id(const Graph& g) {
    for (;;) {
      std::string id = std::to_string(below(100000));
      id.insert(0, 1, 'n');
      if (!g.find(id)) return id;
    }
  }

  graph::Node random_node(const Graph& g) {
    graph::Node n;
    n.id = fresh_id(g);
    n.type = type_name();
    n.name = chance(0.5) ? n.id : pick(std::vector<std::string>{"", "fc1", "x y", "ünï"});
    randomize_params(n, 0.5);
    return n;
  }

  void randomize_params(graph::Node& n, double p_each) {
    const LayerType* t = Registry::instance().find(n.type);
    if (!t) return;
    for (const ParamSpec& s : t->params)
      if (chance(p_each)) n.params[s.name] = value_for(s);
  }

  std::string out_port(const Graph& g, const std::string& id) {
    const graph::Node* n = g.find(id);
    const LayerType* t = n ? Registry::instance().find(n->type) : nullptr;
    // The node's own ports: a Split's follow from its sections, and a later edit may take them away.
    const std::vector<PortSpec> outputs = t ? t->outputs_of(*n) : std::vector<PortSpec>{};
    if (outputs.empty() || chance(0.03)) return pick(std::vector<std::string>{"output", "x", "y", "bogus", "output7"});
    return outputs[below(outputs.size())].name;
  }
  std::string in_port(const Graph& g, const std::string& id) {
    const graph::Node* n = g.find(id);
    const LayerType* t = n ? Registry::instance().find(n->type) : nullptr;
    if (!t || t->inputs.empty() || chance(0.03))
      return pick(std::vector<std::string>{"input", "inputs", "target", "bogus"});
    return t->inputs[below(t->inputs.size())].name;
  }

  std::string some_node(const Graph& g) {
    if (g.nodes.empty() || chance(0.02)) return "ghost";
    return g.nodes[below(g.nodes.size())].id;
  }

  // A whole number in the parameter's range, at most `span` above its minimum; for an IntPair
  // sometimes [h, w] of two such.
  ParamValue within(const ParamSpec& s, double span) {
    const auto one = [&] { return int64_t(s.min) + int64_t(below(size_t(std::min(s.max - s.min, span)) + 1)); };
    if (s.type == ParamType::IntPair && chance(0.5)) return std::vector<int64_t>{one(), one()};
    return one();
  }

  // A mutation that often keeps the graph valid, so compile and forward get exercised: a
  // layer with in-range parameters inserted into an edge, or a parameter set within its range.
  void gentle(Graph& g, std::string& log) {
    static const std::vector<std::string> keeps_shape = {"ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU",
                                                         "Dropout", "Softmax", "BatchNorm1d", "BatchNorm2d",
                                                         "Linear", "Flatten", "Conv2d", "MaxPool2d", "AvgPool2d",
                                                         "Reshape", "Add", "Concat"};
    if (g.edges.empty()) return;
    if (chance(0.6)) {
      Edge& e = g.edges[below(g.edges.size())];
      graph::Node n;
      n.id = fresh_id(g);
      n.type = pick(keeps_shape);
      n.name = n.id;
      const LayerType* t = Registry::instance().find(n.type);
      for (const ParamSpec& s : t->params)
        if (chance(0.3) && (s.type == ParamType::Int || s.type == ParamType::IntPair)) n.params[s.name] = within(s, 8);
      const PortRef to = e.to;
      const std::string port = t->inputs[0].name;
      g.nodes.push_back(n);
      e.to = {n.id, port};
      if (t->inputs[0].variadic && chance(0.7)) g.edges.push_back(edge(e.from.node, e.from.port, n.id, port));
      g.edges.push_back(edge(n.id, "output", to.node, to.port));
      log += "gentle insert " + n.type + " " + n.id + "; ";
    } else {
      graph::Node& n = g.nodes[below(g.nodes.size())];
      const LayerType* t = Registry::instance().find(n.type);
      if (!t || t->params.empty()) return;
      const ParamSpec& s = t->params[below(t->params.size())];
      if (s.type == ParamType::Int || s.type == ParamType::IntPair)
        n.params[s.name] = within(s, 64);
      else if (s.type == ParamType::Float)
        n.params[s.name] = s.min + (s.max - s.min) * std::uniform_real_distribution<double>(0, 1)(rng_);
      else if (s.type == ParamType::Bool)
        n.params[s.name] = chance(0.5);
      log += "gentle param " + n.id + "." + s.name + "; ";
    }
  }

  void mutate(Graph& g, std::string& log) {
    const size_t what = below(14);
    std::ostringstream os;
    switch (what) {
      case 0: {  // change a node's type, keeping its edges
        if (g.nodes.empty()) break;
        graph::Node& n = g.nodes[below(g.nodes.size())];
        n.type = type_name();
        if (chance(0.5)) n.params.clear();
        os << "retype " << n.id << " -> " << n.type;
        break;
      }
      case 1:
      case 2: {  // set a parameter
        if (g.nodes.empty()) break;
        graph::Node& n = g.nodes[below(g.nodes.size())];
        const LayerType* t = Registry::instance().find(n.type);
        if (t && !t->params.empty() && chance(0.9)) {
          const ParamSpec& s = t->params[below(t->params.size())];
          n.params[s.name] = value_for(s);
          os << "param " << n.id << "." << s.name << " = " << to_string(n.params[s.name]);
        } else {
          n.params["bogus"] = any_value();
          os << "param " << n.id << ".bogus";
        }
        break;
      }
      case 3: {  // insert a random node into an edge
        if (g.edges.empty()) break;
        Edge& e = g.edges[below(g.edges.size())];
        graph::Node n = random_node(g);
        const PortRef to = e.to;
        g.nodes.push_back(n);
        e.to = {n.id, in_port(g, n.id)};
        g.edges.push_back(edge(n.id, out_port(g, n.id), to.node, to.port));
        os << "insert " << n.type << " " << n.id;
        break;
      }
      case 4: {  // add a node wired to random places
        graph::Node n = random_node(g);
        g.nodes.push_back(n);
        if (chance(0.8)) {
          const std::string from = some_node(g);
          g.edges.push_back(edge(from, out_port(g, from), n.id, in_port(g, n.id)));
        }
        if (chance(0.5)) {
          const std::string to = some_node(g);
          g.edges.push_back(edge(n.id, out_port(g, n.id), to, in_port(g, to)));
        }
        os << "add " << n.type << " " << n.id;
        break;
      }
      case 5: {  // remove a node, leaving or dropping its edges
        if (g.nodes.empty()) break;
        const size_t i = below(g.nodes.size());
        const std::string id = g.nodes[i].id;
        g.nodes.erase(g.nodes.begin() + long(i));
        if (chance(0.5))
          std::erase_if(g.edges, [&](const Edge& e) { return e.from.node == id || e.to.node == id; });
        os << "remove " << id;
        break;
      }
      case 6: {  // remove an edge
        if (g.edges.empty()) break;
        g.edges.erase(g.edges.begin() + long(below(g.edges.size())));
        os << "remove an edge";
        break;
      }
      case 7:
      case 8: {  // a random edge: cycles, fan-in, wrong ports
        const std::string from = some_node(g), to = some_node(g);
        g.edges.push_back(edge(from, out_port(g, from), to, in_port(g, to)));
        os << "edge " << from << " -> " << to;
        break;
      }
      case 9: {  // self-loop
        if (g.nodes.empty()) break;
        const std::string id = some_node(g);
        g.edges.push_back(edge(id, out_port(g, id), id, in_port(g, id)));
        os << "self-loop " << id;
        break;
      }
      case 10: {  // duplicate an edge
        if (g.edges.empty()) break;
        g.edges.push_back(g.edges[below(g.edges.size())]);
        os << "duplicate an edge";
        break;
      }
      case 11: {  // retarget an edge end to a missing node or a wrong port
        if (g.edges.empty()) break;
        Edge& e = g.edges[below(g.edges.size())];
        switch (below(4)) {
          case 0: e.from.node = "ghost"; break;
          case 1: e.to.node = "ghost"; break;
          case 2: e.from.port = "bogus"; break;
          default: e.to.port = pick(std::vector<std::string>{"bogus", "target", "input", "inputs"}); break;
        }
        os << "retarget an edge";
        break;
      }
      case 12: {  // a node with another node's id
        if (g.nodes.size() < 2) break;
        graph::Node copy = g.nodes[below(g.nodes.size())];
        if (chance(0.5)) copy.type = type_name();
        g.nodes.push_back(copy);
        os << "duplicate id " << copy.id;
        break;
      }
      default: {  // give the Input a fixed shape, often with huge dims
        for (graph::Node& n : g.nodes)
          if (n.type == "Input" && chance(0.7)) {
            std::vector<int64_t> s(below(9));
            for (int64_t& x : s) x = chance(0.5) ? int64_t(1) << 24 : int64_t(below(30)) + 1;
            n.params["shape"] = s;
            os << "Input shape " << to_string(n.params["shape"]);
          }
        break;
      }
    }
    log += os.str() + "; ";
  }

 private:
  std::mt19937_64 rng_;
};

std::string describe(const Graph& g) {
  std::ostringstream os;
  for (const graph::Node& n : g.nodes) {
    os << "  node " << n.id << " " << n.type;
    for (const auto& [k, v] : n.params) os << " " << k << "=" << to_string(v);
    os << "\n";
  }
  for (const Edge& e : g.edges)
    os << "  edge " << e.from.node << "." << e.from.port << " -> " << e.to.node << "." << e.to.port << "\n";
  return os.str();
}

// Whether the forward pass is cheap enough to run: the validator's memory estimate (from the
// registry) has few parameters and few values per example.
bool small(const Validation& v) {
  return v.memory.parameters <= 1e6 && v.memory.activation_bytes() / double(v.memory.batch_size) <= 8e6;
}

// The loader dominates a Debug sanitizer run (nlohmann's parser unoptimised), so there only every
// 4th mutant is serialised and parsed back; optimised builds round-trip every one.
#ifdef __SANITIZE_ADDRESS__
constexpr uint64_t kRoundTripEvery = 4;
#else
constexpr uint64_t kRoundTripEvery = 1;
#endif

// Describes the mutant at hand, for failure messages only (it is slow to build).
using Where = std::function<std::string()>;
// Checks whose message ends with where(): it is called on failure only.
#define FUZZ_FAIL(what) FAIL(std::string(what) + "\n" + where())
#define FUZZ_VERIFY(cond, what) \
  do {                          \
    if (!(cond)) FUZZ_FAIL(what); \
  } while (0)

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

struct Stats {
  size_t checked = 0, valid = 0, ran = 0, round_trips = 0;
};

// The checks every mutant goes through (see the top of the file). Fails the current test
// function (check::failed()) with `where` in the message.
void check_mutant(const Graph& g, const DatasetInfo* info, const Where& where, Stats& stats) {
  Validation v;
  try {
    v = validate(g, info);
  } catch (const std::exception& e) {
    FUZZ_FAIL("validate threw " + std::string(e.what()));
  }
  for (const Problem& p : v.problems) {
    const std::string line = to_string(p);
    FUZZ_VERIFY(!p.message.empty() && p.message == one_line(p.message), "not one line: " + line);
    FUZZ_VERIFY(p.node.empty() || g.find(p.node), "problem names a missing node: " + line);
  }
  if (++stats.checked % 4 == 0)  // a quarter is plenty, and it keeps the sanitizer run short
    FUZZ_VERIFY(validate(g, info).problems == v.problems, "validate is not deterministic");
  COMPARE(v.shapes.edge_shapes.size(), g.edges.size());

  if (!v.ok() || !info) return;
  ++stats.valid;
  if (!small(v)) return;
  CompiledGraph c;
  try {
    c = compile(g, *info, 1);
  } catch (const std::exception& e) {  // nothing is excused: the graph is valid
    FUZZ_FAIL(std::string("compile threw ") + e.what());
  }
  const Edge* pred = nullptr;
  size_t pred_index = 0;
  for (size_t i = 0; i < g.edges.size(); ++i)
    if (g.edges[i].to.node == c.loss_node && g.edges[i].to.port == "input") pred = &g.edges[pred_index = i];
  FUZZ_VERIFY(pred, "no prediction edge");
  Shape batch{2};
  batch.insert(batch.end(), info->input_shape.begin(), info->input_shape.end());
  const Tensor x = zeros(batch);
  Tensor y;
  try {
    y = (*c.model)(x);
  } catch (const IndexError& e) {
    // A port taking indices (an Embedding's) looks up the values it receives; only a graph with
    // one can fail on data.
    const bool lookup = std::ranges::any_of(g.nodes, [](const graph::Node& n) {
      return std::ranges::any_of(graph::Registry::instance().find(n.type)->inputs, &graph::PortSpec::indices);
    });
    FUZZ_VERIFY(lookup, std::string("forward threw ") + e.what());
    return;
  } catch (const std::exception& e) {
    FUZZ_FAIL(std::string("forward threw ") + e.what());
  }
  Shape want{2};
  want.insert(want.end(), v.shapes.edge_shapes[pred_index]->begin(), v.shapes.edge_shapes[pred_index]->end());
  FUZZ_VERIFY(y.defined(), "forward gave no prediction");
  FUZZ_VERIFY(y.shape() == want, "prediction " + to_string(y.shape()) + ", inferred " + to_string(want));
  Shape label{2};
  label.insert(label.end(), info->label_shape.begin(), info->label_shape.end());
  try {
    const Tensor loss = c.loss(y, zeros(label));
    FUZZ_VERIFY(loss.numel() == 1, "the loss is not a scalar");
  } catch (const std::exception& e) {
    FUZZ_FAIL(std::string("loss threw ") + e.what());
  }
  ++stats.ran;
}

const DatasetInfo& kMnist() {
  static const DatasetInfo info{{1, 28, 28}, {}, 10};
  return info;
}

std::vector<Base> bases() {
  return {{mlp(), kMnist()}, {lenet(), kMnist()}, {residual(), {{5}, {}, 3}}, {regression(), {{13}, {}, 0}}};
}

// Serialise and parse back; the graph must come back equal. Returns 1 when it round-tripped.
int round_trip(const Graph& g, const Where& where) {
  std::string text;
  try {
    text = serialize_project(g);
  } catch (const Error&) {
    return 0;  // graphs the format cannot hold (invalid ids, non-finite numbers) may be refused
  }
  Graph back;
  try {
    back = parse_project(text, "fuzz.plexus");
  } catch (const std::exception& e) {
    std::printf("WARN   : parse_project refused what serialize_project wrote: %s\n%s\n%s\n", e.what(), where().c_str(),
                text.c_str());
    throw;
  }
  if (!(back == g)) {
    std::printf("WARN   : %s\n", ("round trip changed the graph\n" + where() + "\n" + text).c_str());
    throw std::runtime_error("round trip changed the graph");
  }
  return 1;
}

}  // namespace

TEST(basesAreValid) {
  for (const Base& b : bases()) {
    const Validation v = validate(b.graph, &b.info);
    const std::string first = v.problems.empty() ? "" : to_string(v.problems[0]);
    VERIFY2(v.problems.empty(), first.c_str());
  }
}

// Shapes whose element count does not fit in 64 bits are reported, not computed.
TEST(overflowingShapesAreProblems) {
  const int64_t big = int64_t(1) << 24;
  {  // Input fixed to 8 dims of 2^24 (no dataset), then Flatten
    Graph g = mlp();
    g.find("in")->params["shape"] = std::vector<int64_t>(8, big);
    const Validation v = validate(g, nullptr);
    VERIFY(!v.ok());
  }
  {  // Embeddings stacked until the per-example element count overflows, then Flatten
    Graph g = mlp();
    g.nodes.push_back(node("e1", "Embedding", {{"embedding_dim", big}}));
    g.nodes.push_back(node("e2", "Embedding", {{"embedding_dim", big}}));
    g.nodes.push_back(node("e3", "Embedding", {{"embedding_dim", big}}));
    g.edges[0] = edge("in", "x", "e1");
    g.edges.push_back(edge("e1", "output", "e2"));
    g.edges.push_back(edge("e2", "output", "e3"));
    g.edges.push_back(edge("e3", "output", "flat"));
    const Validation v = validate(g, &kMnist());
    VERIFY(!v.ok());
    bool named = false;
    for (const Problem& p : v.problems) named |= p.node == "e3";
    const std::string first = v.problems.empty() ? "" : to_string(v.problems[0]);
    VERIFY2(named, first.c_str());
  }
  {  // Reshape whose shape entries multiply past 2^63
    Graph g = mlp();
    g.find("flat")->type = "Reshape";
    g.find("flat")->params["shape"] = std::vector<int64_t>{big, big, big, -1};
    const Validation v = validate(g, &kMnist());
    VERIFY(!v.ok());
    COMPARE(v.problems.at(0).node, std::string("flat"));
  }
  {  // Concat of huge inputs along one dim
    Graph g = mlp();
    g.find("in")->params["shape"] = std::vector<int64_t>{big, big, big};
    g.nodes.push_back(node("cat", "Concat", {{"dim", int64_t(1)}}));
    g.edges[0] = edge("in", "x", "cat", "inputs");
    for (int i = 0; i < 600; ++i) g.edges.push_back(edge("in", "x", "cat", "inputs"));
    g.edges.push_back(edge("cat", "output", "flat"));
    const Validation v = validate(g, nullptr);
    VERIFY(!v.ok());
  }
}

// Found by the libFuzzer target (tests/fuzz/regressions/project): names, ids, ports and
// parameter names come from the file and may hold line breaks; every problem stays one line.
TEST(lineBreaksInNamesStayOnOneLine) {
  Graph g = mlp();
  g.nodes[2].name = "fc\n1";
  g.nodes[2].params["out_featu\nres"] = int64_t(3);
  g.nodes[3].id = "act\nx";
  g.edges.push_back(edge("fc2", "out\r\nput", "loss"));
  g.nodes.push_back(node("odd", "Lin\x1b[2Jear"));
  const Validation v = validate(g, &kMnist());
  VERIFY(v.problems.size() >= 4);
  bool escaped = false;
  for (const Problem& p : v.problems) {
    const std::string line = to_string(p);
    VERIFY2(line.find_first_of("\n\r\x1b") == std::string::npos, line.c_str());
    COMPARE(p.message, one_line(p.message));  // as the editor's problems panel shows it
    escaped |= line.find("out_featu\\nres") != std::string::npos;
  }
  VERIFY(escaped);
  COMPARE(one_line("a\nb\tc\x7f\\"), std::string("a\\nb\\tc\\x7f\\"));
}

// One value per example ([N] batched, per-example shape []) through every layer that
// accepts it: what validate accepts must run.
TEST(scalarExamplesRun) {
  const DatasetInfo info{{13}, {}, 0};
  for (const char* type : {"Flatten", "ReLU", "Dropout", "Sigmoid", "Reshape", "Add"}) {
    Graph g = regression();
    g.find("fc2")->params["out_features"] = int64_t(1);
    g.nodes.push_back(node("scalar", "Reshape", {{"shape", std::vector<int64_t>{}}}));
    g.nodes.push_back(node("probe", type));
    if (std::string(type) == "Reshape") g.find("probe")->params["shape"] = std::vector<int64_t>{1};
    g.nodes.push_back(node("head", "Flatten"));
    std::erase_if(g.edges, [](const Edge& e) { return e.to.node == "loss" && e.to.port == "input"; });
    g.edges.push_back(edge("fc2", "output", "scalar"));
    if (std::string(type) == "Add") {
      g.edges.push_back(edge("scalar", "output", "probe", "inputs"));
      g.edges.push_back(edge("scalar", "output", "probe", "inputs"));
    } else {
      g.edges.push_back(edge("scalar", "output", "probe"));
    }
    g.edges.push_back(edge("probe", "output", "head"));
    g.edges.push_back(edge("head", "output", "loss"));
    const Validation v = validate(g, &info);
    const std::string first = v.problems.empty() ? "" : to_string(v.problems[0]);
    if (!v.ok()) {
      std::printf("INFO   : %s on one value per example is refused: %s\n", type, first.c_str());
      continue;
    }
    const CompiledGraph c = compile(g, info, 1);
    NoGradGuard no_grad;
    const Tensor y = (*c.model)(zeros({2, 13}));
    VERIFY2(y.shape() == (Shape{2, 1}), (std::string(type) + ": " + to_string(y.shape())).c_str());
  }
}

TEST(randomMutations) {
  const uint64_t seed = env_or("PLEXUS_FUZZ_SEED", 1);
  const uint64_t iters = env_or("PLEXUS_FUZZ_ITERS", 4000);
  Mutator m(seed);
  const std::vector<Base> starts = bases();
  const std::vector<const DatasetInfo*> infos = {&starts[0].info, &starts[2].info, &starts[3].info, nullptr};
  Stats stats;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t it = 0; it < iters; ++it) {
    const Base& base = m.pick(starts);
    Graph g = base.graph;
    std::string log;
    const size_t n_mut = 1 + m.below(4);
    if (m.chance(0.4))
      for (size_t k = 0; k < n_mut; ++k) m.gentle(g, log);
    else
      for (size_t k = 0; k < n_mut; ++k) m.mutate(g, log);
    const DatasetInfo* info = m.chance(0.8) ? &base.info : m.pick(infos);
    // Built only for a failure message: describing every mutant would dominate the run time.
    const Where where = [&] {
      return "seed " + std::to_string(seed) + " iteration " + std::to_string(it) + ": " + log + "\n" + describe(g);
    };
    check_mutant(g, info, where, stats);
    if (check::failed()) return;
    if (it % kRoundTripEvery == 0) stats.round_trips += round_trip(g, where);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("INFO   : %llu mutants in %.2f s: %zu valid, %zu ran forward, %zu round-tripped\n",
              (unsigned long long)iters, secs, stats.valid, stats.ran, stats.round_trips);
  VERIFY(stats.valid > iters / 50);  // some mutants stay valid, so compile and forward are exercised
  VERIFY(stats.ran > 0);
}

// The loader's text mutations (tests/project_fuzz.h), then whatever loads goes through the
// same checks: a file the loader accepts must never crash the validator or the compiler.
TEST(loadedMutants) {
  const uint64_t seed = env_or("PLEXUS_FUZZ_SEED", 1);
  const uint64_t iters = env_or("PLEXUS_FUZZ_ITERS", 4000) / 4;
  std::mt19937_64 rng(seed);
  const std::vector<Base> starts = bases();
  std::vector<std::string> texts;
  for (const Base& b : starts) texts.push_back(serialize_project(b.graph));
  Stats stats;
  size_t loaded = 0;
  for (uint64_t it = 0; it < iters; ++it) {
    const size_t k = size_t(rng() % starts.size());
    const std::string text = plexus::testing::mutate_project_text(texts[k], rng);
    Graph g;
    try {
      g = parse_project(text, "mutant.plexus");
    } catch (const Error&) {
      continue;  // refused with a message: test_project checks those
    }
    ++loaded;
    check_mutant(g, &starts[k].info,
                 [&] { return "seed " + std::to_string(seed) + " text mutant " + std::to_string(it) + ":\n" + text; },
                 stats);
    if (check::failed()) return;
  }
  std::printf("INFO   : %llu text mutants: %zu loaded, %zu valid, %zu ran forward\n", (unsigned long long)iters, loaded,
              stats.valid, stats.ran);
  VERIFY(loaded > 0);
}
