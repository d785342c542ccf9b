// libFuzzer target: a project file through the loader, the validator and the compiler — the
// path a file from a stranger takes when it is opened and trained. Bad text must be a
// ProjectError; an accepted project must save and load back unchanged; the validator must
// never throw and must word each problem on one line naming a node of the graph; a graph it
// accepts must compile, and, when small, run forward on a batch of two and give the
// prediction the shape inference promised and a scalar loss. A graph it refuses must not
// compile. The dataset is not read: each binding stands for fixed shapes.
#include <algorithm>

#include "fuzz_support.h"
#include "graph/project.h"
#include "graph/registry.h"
#include "graph/validate.h"
#include "layers/compiler.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::graph;
using namespace plexus::layers;

namespace {

// The dataset is not read (a fuzz input cannot carry one): each binding gets fixed shapes.
DatasetInfo dataset_for(const Graph& g) {
  if (g.dataset.kind == "csv") return g.dataset.task == "regression" ? DatasetInfo{{13}, {}, 0} : DatasetInfo{{5}, {}, 3};
  return DatasetInfo{{1, 28, 28}, {}, 10};
}

// The validator's memory check works against a fixed budget, so that a finding replays the
// same on every machine.
constexpr uint64_t kMemoryBudget = uint64_t(1) << 30;

// A valid graph may still need a gigabyte; the forward pass runs only on small ones.
bool small(const Validation& v) {
  return v.memory.parameters <= 1e6 && v.memory.activation_bytes() / double(v.memory.batch_size) <= 8e6;
}

void run_small(const Graph& g, const DatasetInfo& info, const Validation& v) {
  CompiledGraph c;
  try {
    c = compile(g, info, 1);
  } catch (const std::exception& e) {
    fuzz::fail(std::string("a valid graph did not compile: ") + e.what());
  }
  std::optional<Shape> predicted;
  for (size_t i = 0; i < g.edges.size(); ++i)
    if (g.edges[i].to.node == c.loss_node && g.edges[i].to.port == "input") predicted = v.shapes.edge_shapes[i];
  fuzz::require(predicted.has_value(), "no inferred shape for the prediction");
  Shape batch{2};
  batch.insert(batch.end(), info.input_shape.begin(), info.input_shape.end());
  Tensor y;
  try {
    y = (*c.model)(zeros(batch));
  } catch (const IndexError&) {
    // A port taking indices (an Embedding's) looks up the values it is given; only a graph with
    // one may fail on data.
    for (const graph::Node& n : g.nodes)
      if (std::ranges::any_of(Registry::instance().find(n.type)->inputs, &PortSpec::indices)) return;
    throw;
  }
  Shape want{2};
  want.insert(want.end(), predicted->begin(), predicted->end());
  fuzz::require(y.shape() == want, "prediction " + to_string(y.shape()) + ", inferred " + to_string(want));
  Shape label{2};
  label.insert(label.end(), info.label_shape.begin(), info.label_shape.end());
  fuzz::require(c.loss(y, zeros(label)).numel() == 1, "the loss is not a scalar");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Graph g;
  try {
    g = parse_project(text, "fuzz.plexus");
  } catch (const ProjectError& e) {
    fuzz::require(std::string_view(e.what()).starts_with("fuzz.plexus"), std::string("unnamed error: ") + e.what());
    fuzz::rejected(e.what());
    return 0;
  }
  fuzz::accepted();  // the text is a project; whether its graph is valid is the validator's to say
  fuzz::require(parse_project(serialize_project(g), "again.plexus") == g, "the project did not round-trip");

  const DatasetInfo info = dataset_for(g);
  const Validation v = validate(g, &info, {kMemoryBudget});
  for (const Problem& p : v.problems) {
    const std::string line = to_string(p);
    fuzz::require(!p.message.empty() && line.find('\n') == std::string::npos, "not one line: " + line);
    fuzz::require(p.message == one_line(p.message), "control characters in the message: " + line);
    fuzz::require(p.node.empty() || g.find(p.node), "names a missing node: " + line);
  }
  fuzz::require(v.shapes.edge_shapes.size() == g.edges.size(), "a shape slot per edge");
  fuzz::require(validate(g, nullptr, {kMemoryBudget}).shapes.edge_shapes.size() == g.edges.size(), "without a dataset");
  if (!v.ok()) {
    // compile() checks memory against this machine's; a graph refused for that too must not
    // compile (one merely over the fuzzing budget is not tried: it may need gigabytes).
    if (validate(g, &info).ok()) return 0;
    try {
      compile(g, info, 1);
    } catch (const ValueError&) {
      return 0;
    }
    fuzz::fail("a graph with errors compiled");
  }
  if (small(v)) run_small(g, info, v);
  return 0;
}
