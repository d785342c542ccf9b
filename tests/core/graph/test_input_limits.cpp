// Input limits: absurd sizes are refused with a message naming what is too big, before anything
// of that size is allocated. Layer parameters out of range, training settings out of range
// (batch size 0 or negative), a graph whose training would not fit in the machine's memory
// (the estimate from the registry), IDX headers claiming more than the file holds, and float
// copies of a dataset larger than the memory. "Nothing big allocated" is checked with the
// tensor allocator's counters; the sanitizer build (ASan refuses single allocations above its
// limit) runs the same tests.
#include "support/check.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "data/idx.h"
#include "graph/dataset_info.h"
#include "graph/memory.h"
#include "graph/project.h"
#include "graph/training_params.h"
#include "graph/validate.h"
#include "layers/compiler.h"
#include "layers/lowering.h"
#include "session/run.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "tensor/allocator.h"
#include "tensor/generator.h"
#include "util/error.h"
#include "util/system_memory.h"

using namespace plexus;
using namespace plexus::graph;
using namespace plexus::layers;
using namespace plexus::session;
using plexus::testing::contains;
using plexus::testing::message_of;
using plexus::testing::TempDir;
using plexus::testing::write_raw;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(PLEXUS_SOURCE_DIR) / "examples";
const DatasetInfo kMnist{{1, 28, 28}, {}, 10};
constexpr uint64_t kGiB = uint64_t(1) << 30;

// The MNIST MLP as project text, with fc1's parameters and the training settings given (JSON
// objects), bound to a dataset folder that does not exist.
std::string mlp_project(const std::string& fc1_params, const std::string& training = "{}") {
  return R"({
  "format": 1,
  "nodes": [
    {"id": "in", "type": "Input", "name": "in", "params": {}},
    {"id": "flat", "type": "Flatten", "name": "flat", "params": {}},
    {"id": "fc1", "type": "Linear", "name": "fc1", "params": )" +
         fc1_params + R"(},
    {"id": "act", "type": "ReLU", "name": "act", "params": {}},
    {"id": "fc2", "type": "Linear", "name": "fc2", "params": {"out_features": 10}},
    {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}}
  ],
  "edges": [
    {"from": ["in", "x"], "to": ["flat", "input"]},
    {"from": ["flat", "output"], "to": ["fc1", "input"]},
    {"from": ["fc1", "output"], "to": ["act", "input"]},
    {"from": ["act", "output"], "to": ["fc2", "input"]},
    {"from": ["fc2", "output"], "to": ["loss", "input"]},
    {"from": ["in", "y"], "to": ["loss", "target"]}
  ],
  "dataset": {"kind": "mnist", "path": "no/such/folder"},
  "training": )" +
         training + "\n}\n";
}

// A graph with `layer` (one node object with id "layer") between the Input and a Flatten -> Linear
// -> CrossEntropy head, loaded from project text as a file would be.
Graph with_layer(const std::string& layer) {
  return parse_project(R"({"format": 1, "nodes": [
    {"id": "in", "type": "Input", "name": "in"}, )" +
                           layer + R"(,
    {"id": "flat", "type": "Flatten"}, {"id": "fc", "type": "Linear", "params": {"out_features": 10}},
    {"id": "loss", "type": "CrossEntropy"}],
  "edges": [{"from": ["in", "x"], "to": ["layer", "input"]}, {"from": ["layer", "output"], "to": ["flat", "input"]},
            {"from": ["flat", "output"], "to": ["fc", "input"]}, {"from": ["fc", "output"], "to": ["loss", "input"]},
            {"from": ["in", "y"], "to": ["loss", "target"]}],
  "dataset": {"kind": "mnist", "path": "data/mnist"}})",
                       "test.plexus");
}

// The lines joined by '\n'.
std::string lines(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "\n" : "") + v[i];
  return out;
}

// The problems of one severity, a line each (one string, so that a failing comparison shows both whole).
std::string messages(const Validation& v, Severity severity = Severity::Error) {
  std::vector<std::string> out;
  for (const Problem& p : v.problems)
    if (p.severity == severity) out.push_back(to_string(p));
  return lines(out);
}

const NodeMemory& node_memory(const MemoryEstimate& m, const std::string& id) {
  for (const NodeMemory& n : m.nodes)
    if (n.node == id) return n;
  throw std::runtime_error("the estimate does not count node " + id);
}

int64_t tensor_allocations() { return memory_stats(Device::cpu()).allocations; }

std::string idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, size_t payload) {
  std::string b = {0, 0, char(type), char(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(char(uint8_t(d >> s)));
  return b + std::string(payload, '\x01');
}

}  // namespace

// ---- the machine's memory ----------------------------------------------------------------
TEST(machineMemoryIsKnownAndAtMostThePhysical) {
  VERIFY(physical_memory() > 0);
  VERIFY(machine_memory() > 0);
  VERIFY(machine_memory() <= physical_memory());
}

TEST(cgroupLimitsAreReadFromEveryLevel) {
  const TempDir tmp;
  const fs::path root = tmp.path();
  const auto file = [&](const fs::path& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    write_raw(root / rel, text);
  };
  // v2: the process's own cgroup has no limit ("max"), its parent has 2 GiB.
  file("a/b/memory.max", "max\n");
  file("a/memory.max", "2147483648\n");
  COMPARE(cgroup_memory_limit("0::/a/b\n", root), std::optional<uint64_t>(2 * kGiB));
  // Inside a cgroup namespace the path is "/": the mount's top is the container's cgroup.
  COMPARE(cgroup_memory_limit("0::/\n", root), std::nullopt);
  file("memory.max", "1073741824\n");
  COMPARE(cgroup_memory_limit("0::/\n", root), std::optional<uint64_t>(kGiB));
  // v1: "no limit" is a huge number; the lowest on the way up wins; the memory controller may
  // share its line with others.
  file("memory/x/y/memory.limit_in_bytes", "9223372036854771712\n");
  file("memory/x/memory.limit_in_bytes", "536870912\n");
  COMPARE(cgroup_memory_limit("9:pids:/x/y\n4:cpu,memory:/x/y\n", root), std::optional<uint64_t>(kGiB / 2));
  COMPARE(cgroup_memory_limit("4:memory:/x/y\n", root / "elsewhere"), std::nullopt);
  // Files that do not hold a number set no limit; nor do lines that are not cgroup lines.
  file("memory/z/memory.limit_in_bytes", "12abc\n");
  COMPARE(cgroup_memory_limit("4:memory:/z\ngarbage\n\n", root), std::nullopt);
  file("memory/memory.limit_in_bytes", "99999999999999999999999\n");
  COMPARE(cgroup_memory_limit("4:memory:/z\n", root), std::nullopt);
}

TEST(memoryIsWrittenInBinaryUnits) {
  COMPARE(memory_text(0), std::string("0 bytes"));
  COMPARE(memory_text(1000), std::string("1000 bytes"));
  COMPARE(memory_text(1536), std::string("1.5 KiB"));
  COMPARE(memory_text(1024.0 * 1024 - 1), std::string("1.0 MiB"));
  COMPARE(memory_text(15.6 * double(kGiB)), std::string("15.6 GiB"));
  COMPARE(memory_text(std::ldexp(1.0, 51)), std::string("2.0 PiB"));
  COMPARE(memory_text(std::ldexp(1.0, 62)), std::string("4.0 EiB"));
  COMPARE(memory_text(std::ldexp(1.0, 90)), std::string("1.07e+09 EiB"));
}

// ---- the estimate, from the one registry ---------------------------------------------------
// Every layer type's parameter_count agrees with the module its builder makes, with default
// parameters and with every flag flipped (bias off) and every choice its last, so the registry
// cannot drift.
TEST(parameterCountMatchesEveryBuiltLayer) {
  // The last two for Squeeze and for Split's default sections [1, 1].
  const std::vector<Shape> candidates{{8}, {6, 8, 8}, {6, 8}, {1, 8}, {2, 3}};
  int with_parameters = 0;
  for (const LayerType& t : Registry::instance().types()) {
    const Lowering& lowered = lowering(t);
    if (!lowered.build || t.is_input()) continue;
    for (const bool flip : {false, true}) {
      Node node{"n", t.name, "n", {}, {}};
      // The other configuration: every flag flipped, every choice its last (Upsample's bilinear,
      // which its align_corners needs; a padding's "valid"), every pair [h, w] rectangular
      // (Conv2d's 3x4 kernel).
      if (flip)
        for (const ParamSpec& p : t.params) {
          if (p.type == ParamType::Bool) node.params[p.name] = !std::get<bool>(p.default_value);
          if (p.type == ParamType::Choice || !p.choices.empty()) node.params[p.name] = p.choices.back();
          else if (p.type == ParamType::IntPair) {
            const int64_t d = std::get<int64_t>(p.default_value);
            node.params[p.name] = std::vector<int64_t>{d, std::min(d + 1, int64_t(p.max))};
          }
        }
      bool built = false;
      for (const Shape& shape : candidates) {
        // The required ports wired (a variadic one twice), as the palette's node is.
        std::vector<std::string> ports;
        for (const PortSpec& p : t.inputs)
          if (p.required) ports.insert(ports.end(), p.variadic ? 2 : 1, p.name);
        const size_t n = ports.size();
        ShapeContext c{node, std::vector<Shape>(n, shape), ports, std::vector<std::string>(n, "'src'"), nullptr, false};
        try {
          t.shape(c);
        } catch (const ShapeProblem&) {
          continue;
        }
        Generator gen(1);
        const BuiltNode b = lowered.build(BuildContext{node, c.inputs, &gen});
        const double built_count = b.module ? double(b.module->num_parameters()) : 0;
        const double counted = t.parameter_count ? t.parameter_count(node, c.inputs) : 0;
        VERIFY2(built_count == counted, t.name + " on " + to_string(shape) + ": the module has " +
                                            check::show(built_count) + " parameters, the registry counts " +
                                            check::show(counted));
        if (counted > 0 && !flip) ++with_parameters;
        built = true;
        break;
      }
      VERIFY2(built, "no candidate input shape suits " + t.name);
    }
  }
  // Linear, Embedding, Conv2d, Conv1d, ConvTranspose2d, BatchNorm1d, BatchNorm2d, LayerNorm,
  // GroupNorm, RMSNorm, MultiheadAttention, PositionalEmbedding, LSTM, GRU, RNN, PReLU
  // (InstanceNorm2d learns only with affine, not its default)
  COMPARE(with_parameters, 16);
}

TEST(parameterCountMatchesTheCompiledExamples) {
  for (const char* name :
       {"mnist_mlp", "mnist_lenet", "fashion_lenet", "fashion_resnet", "residual_mlp", "housing_regression"}) {
    const Graph g = load_project(kExamples / (std::string(name) + ".plexus"));
    const DatasetInfo info = g.dataset.kind == "csv" ? DatasetInfo{{8}, {}, 0} : kMnist;
    const Validation v = validate(g, &info);
    VERIFY2(v.ok(), name);
    COMPARE(v.memory.parameters, double(compile(g, info, 1).model->num_parameters()));
  }
  // Grouped convolution without bias.
  const Graph g =
      with_layer(R"({"id": "layer", "type": "Conv2d", "params": {"out_channels": 6, "groups": 3, "bias": false}})");
  const DatasetInfo three{{3, 28, 28}, {}, 10};
  const Validation v = validate(g, &three);
  VERIFY(v.ok());
  COMPARE(v.memory.parameters, double(compile(g, three, 1).model->num_parameters()));
  COMPARE(node_memory(v.memory, "layer").parameters, 6.0 * 1 * 3 * 3);
}

// The MNIST MLP with batch 100, counted by hand: 101770 parameters, each with its gradient
// (and the optimizer's state), and every output for the batch with its gradient.
TEST(estimateCountsWhatTrainingHolds) {
  Graph g = load_project(kExamples / "mnist_mlp.plexus");
  g.training.batch_size = 100;
  g.training.optimizer = "sgd";
  g.training.momentum = 0;
  const double params = 784 * 128 + 128 + 128 * 10 + 10;
  const double batch_values = 100 * (785 /* x and y, no gradient */ + 2 * (784 + 128 + 128 + 10));
  MemoryEstimate m = validate(g, &kMnist).memory;
  COMPARE(m.parameters, params);
  COMPARE(m.batch_size, int64_t(100));
  COMPARE(m.bytes, 4 * (2 * params + batch_values));
  COMPARE(int(m.nodes.size()), 6);
  COMPARE(m.largest()->node, std::string("fc1"));

  g.training.momentum = 0.9;  // a momentum buffer per parameter
  COMPARE(validate(g, &kMnist).memory.bytes, 4 * (3 * params + batch_values));
  g.training.optimizer = "adam";  // two moments
  COMPARE(validate(g, &kMnist).memory.bytes, 4 * (4 * params + batch_values));
  g.training.optimizer = "rmsprop";  // square average and momentum
  COMPARE(validate(g, &kMnist).memory.bytes, 4 * (4 * params + batch_values));

  // A dataset of known size counts too: 70000 examples of 784 values and a label.
  g.training.optimizer = "sgd";
  g.training.momentum = 0;
  DatasetInfo sized = kMnist;
  sized.examples = 70000;
  COMPARE(validate(g, &sized).memory.bytes, 4 * (2 * params + batch_values + 70000.0 * 785));

  // Batch sizes out of range (the settings check reports them) estimate as 1, never below.
  g.training.batch_size = -5;
  m = validate(g, &kMnist).memory;
  COMPARE(m.batch_size, int64_t(1));
  COMPARE(m.bytes, 4 * (2 * params + batch_values / 100));

  // Nodes that do not lead to the loss are not built, so they are not counted.
  Graph unused = load_project(kExamples / "mnist_mlp.plexus");
  unused.nodes.push_back({"extra", "Linear", "extra", {{"out_features", int64_t(1) << 24}}, {}});
  unused.edges.push_back({{"act", "output"}, {"extra", "input"}});
  COMPARE(validate(unused, &kMnist).memory.parameters, params);
}

// ---- graphs that cannot fit: refused by the validator, so never compiled ---------------------
TEST(hugeLinearIsRefusedBeforeAnythingIsAllocated) {
  Graph g = parse_project(mlp_project(R"({"out_features": 16777216})"), "huge.plexus");
  g.nodes.insert(
      g.nodes.begin() + 3,
      Node{"big", "Linear", "big", {{"in_features", int64_t(1) << 24}, {"out_features", int64_t(1) << 24}}, {}});
  g.edges[2] = {{"fc1", "output"}, {"big", "input"}};
  g.edges.push_back({{"big", "output"}, {"act", "input"}});

  const int64_t before = tensor_allocations();
  const Validation v = validate(g, &kMnist);
  const std::string expected =
      "error big: Linear 'big': training needs about 2.0 PiB of memory with batch size 100, "
      "more than the " +
      memory_text(double(machine_memory())) +
      " this machine has; this layer's 281474993487872 learned values take 2.0 PiB of it "
      "(with their gradients): make the layer smaller";
  COMPARE(messages(v), lines({expected}));
  COMPARE(v.memory.parameters,
          std::ldexp(1.0, 48) + std::ldexp(1.0, 24) + 784.0 * 16777216 + 16777216 + 16777216.0 * 10 + 10);

  // The compiler validates first and builds nothing.
  const std::string refused = message_of<ValueError>([&] { compile(g, kMnist, 1); });
  COMPARE(refused, "the graph has problems:\n  " + expected);
  COMPARE(tensor_allocations(), before);

  // With the memory check switched off the estimate stays, and nothing else is wrong.
  VERIFY(validate(g, &kMnist, {.memory = 0}).ok());
}

TEST(batchTooLargeForTheMachineNamesTheBatch) {
  Graph g = with_layer(R"({"id": "layer", "type": "Conv2d", "name": "conv1",
                             "params": {"out_channels": 64, "kernel_size": 3, "padding": 1}})");
  g.training.batch_size = 1 << 20;
  const Validation v = validate(g, &kMnist, {.memory = 16 * kGiB});
  COMPARE(messages(v),
          lines({"error layer: Conv2d 'conv1': training needs about 787.1 GiB of memory with batch size "
                 "1048576, more than the 16.0 GiB this machine has; its output [N, 64, 28, 28] for a "
                 "batch takes 392.0 GiB of it (kept for the backward pass, with its gradient): use a "
                 "smaller batch size or make the output smaller"}));
  g.training.batch_size = 1000;
  VERIFY(validate(g, &kMnist, {.memory = 16 * kGiB}).problems.empty());
}

TEST(moreThanHalfOfTheMemoryIsAWarning) {
  const Graph g = parse_project(mlp_project(R"({"out_features": 1048576})", R"({"optimizer": "adam", "lr": 0.001})"),
                                "wide.plexus");
  const Validation v = validate(g, &kMnist, {.memory = 16 * kGiB});
  VERIFY(v.ok());
  COMPARE(messages(v, Severity::Warning),
          lines({"warning fc1: Linear 'fc1': training needs about 14.0 GiB of memory with batch "
                 "size 100, more than half of the 16.0 GiB this machine has; this layer's "
                 "823132160 learned values take 12.3 GiB of it (with their gradients and the "
                 "optimizer's state): make the layer smaller"}));
  VERIFY(validate(g, &kMnist, {.memory = 32 * kGiB}).problems.empty());
}

TEST(datasetTooLargeNamesTheDataset) {
  const Graph g = load_project(kExamples / "mnist_mlp.plexus");
  DatasetInfo huge = kMnist;
  huge.examples = int64_t(1) << 24;  // 16.8 million images: 49 GiB as float32
  const Validation v = validate(g, &huge, {.memory = 16 * kGiB});
  COMPARE(messages(v), lines({"error in: Input 'in': training needs about 49.1 GiB of memory with batch size 100, "
                              "more than the 16.0 GiB this machine has; the dataset's 16777216 examples take 49.1 "
                              "GiB of it as float32: use a smaller dataset"}));
}

// 2^24 x 2^24 channels with 64x64 kernels are 2^60 weights, 2^63 bytes with their gradients:
// in 64-bit integers that (and a batch of 2^20 on top) would wrap around to small numbers.
TEST(absurdSizesDoNotWrapAround) {
  Graph g = with_layer(R"({"id": "layer", "type": "Conv2d", "params":
                             {"out_channels": 16777216, "kernel_size": 64, "padding": 64}})");
  g.training.batch_size = 1 << 20;
  const DatasetInfo wide{{16777216, 28, 28}, {}, 10};
  const Validation v = validate(g, &wide);
  const NodeMemory& conv = node_memory(v.memory, "layer");
  COMPARE(conv.parameters, std::ldexp(1.0, 60) + std::ldexp(1.0, 24));
  COMPARE(conv.parameter_bytes, 8 * conv.parameters);
  COMPARE(conv.activation_bytes, 8.0 * (1 << 20) * 16777216 * 93 * 93);
  VERIFY(v.memory.bytes > std::ldexp(1.0, 63));  // more than int64_t holds
  COMPARE(messages(v), lines({"error layer: Conv2d 'layer': training needs about 10.2 EiB of memory with batch size "
                              "1048576, more than the " +
                              memory_text(double(machine_memory())) +
                              " this machine has; this layer's 1.15e+18 learned values take 8.0 EiB of it (with "
                              "their gradients): make the layer smaller"}));
  // The same sizes as Embedding weights: 2^48 values.
  g = with_layer(R"({"id": "layer", "type": "Embedding", "params": {"num_embeddings": 16777216,
                                                                       "embedding_dim": 16777216}})");
  const Validation e = validate(g, &kMnist, {.memory = 16 * kGiB});
  COMPARE(node_memory(e.memory, "layer").parameters, std::ldexp(1.0, 48));
  VERIFY(!e.ok());
}

// ---- parameters out of range in a project file ------------------------------------------------
TEST(absurdLayerParametersAreRefusedByName) {
  const auto errors = [](const std::string& layer) { return messages(validate(with_layer(layer), &kMnist)); };
  COMPARE(errors(R"({"id": "layer", "type": "Conv2d", "name": "c",
                        "params": {"kernel_size": -3, "stride": -1, "padding": -2, "dilation": 0}})"),
          (lines({"error layer: Conv2d 'c': dilation must be between 1 and 64, got 0",
                  "error layer: Conv2d 'c': kernel_size must be between 1 and 64, got -3",
                  "error layer: Conv2d 'c': padding must be between 0 and 64, got -2",
                  "error layer: Conv2d 'c': stride must be between 1 and 64, got -1"})));
  COMPARE(errors(R"({"id": "layer", "type": "MaxPool2d", "params": {"kernel_size": -2, "stride": -2}})"),
          (lines({"error layer: MaxPool2d 'layer': kernel_size must be between 1 and 64, got -2",
                  "error layer: MaxPool2d 'layer': stride must be between 0 and 64, got -2"})));
  COMPARE(errors(R"({"id": "layer", "type": "Linear", "params": {"out_features": 1000000000000}})"),
          lines({"error layer: Linear 'layer': out_features must be between 1 and 16777216, got 1000000000000"}));
  COMPARE(errors(R"({"id": "layer", "type": "Linear", "params": {"out_features": -10}})"),
          lines({"error layer: Linear 'layer': out_features must be between 1 and 16777216, got -10"}));
  COMPARE(
      errors(R"({"id": "layer", "type": "Reshape", "params": {"shape": [16777216, 16777216, 16777216, 16777216]}})"),
      lines({"error layer.input: Reshape 'layer' cannot reshape [N, 1, 28, 28] (784 values) "
            "from 'in' to [N, 16777216, 16777216, 16777216, 16777216] (more than 2^63 values)"}));
  COMPARE(errors(R"({"id": "layer", "type": "Reshape", "params": {"shape": [-5, 10000000000000]}})"),
          lines({"error layer: Reshape 'layer': shape must have every entry between -1 and "
                 "16777216, got [-5, 10000000000000]"}));
  COMPARE(errors(R"({"id": "layer", "type": "Reshape", "params": {"shape": [0, -1]}})"),
          lines({"error layer: Reshape 'layer': shape entries must be positive or -1"}));
  COMPARE(errors(R"({"id": "layer", "type": "Reshape", "params": {"shape": [1, 1, 1, 1, 1, 1, 1, 1, -1]}})"),
          lines({"error layer: Reshape 'layer': shape must have at most 8 entries, got [1, 1, 1, 1, "
                 "1, 1, 1, 1, -1]"}));
  // A parameter refused by its range never reaches a shape rule or the compiler.
  const Graph g = with_layer(R"({"id": "layer", "type": "Linear", "params": {"out_features": 1000000000000}})");
  const int64_t before = tensor_allocations();
  VERIFY(contains(message_of<ValueError>([&] { compile(g, kMnist, 1); }), "got 1000000000000"));
  COMPARE(tensor_allocations(), before);
}

TEST(absurdInputShapeIsRefused) {
  Graph g = load_project(kExamples / "mnist_mlp.plexus");
  g.find("in")->params["shape"] = std::vector<int64_t>(8, int64_t(1) << 24);
  COMPARE(messages(validate(g, nullptr)),
          lines({"error in: Input 'in' would output [N, 16777216, 16777216, 16777216, 16777216, "
                 "16777216, 16777216, 16777216, 16777216]: too many values per example (more "
                 "than 2^62); use smaller sizes"}));
}

// ---- training settings out of range -----------------------------------------------------------
TEST(batchSizeZeroOrNegativeIsRefusedEverywhere) {
  TrainingSettings s;
  for (const int64_t bad : {int64_t(0), int64_t(-1), int64_t(-100), int64_t(1) << 21, int64_t(1000000000000)}) {
    const std::string expected = "training: batch_size must be between 1 and 1048576, got " + std::to_string(bad);
    COMPARE(message_of<ValueError>([&] { set_training_value(s, "batch_size", bad); }), expected);
    COMPARE(s.batch_size, int64_t(100));  // unchanged

    // A project file holding it loads (the editor can open and fix it) but cannot train: the
    // settings are checked before the dataset (here missing) is looked for.
    const Graph g = parse_project(
        mlp_project(R"({"out_features": 128})", R"({"batch_size": )" + std::to_string(bad) + "}"), "bad.plexus");
    COMPARE(g.training.batch_size, bad);
    COMPARE(message_of<ValueError>([&] { check_training_settings(g.training); }), expected);
    COMPARE(message_of<ValueError>([&] { make_training_run(g); }), expected);
  }
}

TEST(otherSettingsOutOfRangeAreRefused) {
  const auto refusal = [](const std::string& training) {
    const Graph g = parse_project(mlp_project(R"({"out_features": 128})", training), "bad.plexus");
    return message_of<ValueError>([&] { check_training_settings(g.training); });
  };
  COMPARE(refusal(R"({"epochs": 0})"), std::string("training: epochs must be between 1 and 1000000, got 0"));
  COMPARE(refusal(R"({"epochs": -3})"), std::string("training: epochs must be between 1 and 1000000, got -3"));
  COMPARE(refusal(R"({"lr": 0.0})"), std::string("training: lr must be between 1e-12 and 1e+09, got 0"));
  COMPARE(refusal(R"({"momentum": -0.5})"), std::string("training: momentum must be between 0 and 0.9999, got -0.5"));
  COMPARE(refusal(R"({"schedule": "step", "step_size": -1})"),
          std::string("training: step_size must be between 1 and 1000000, got -1"));
  // Settings that do not apply are not held against the run (momentum for Adam, step_size
  // without the step schedule).
  COMPARE(refusal(R"({"optimizer": "adam", "momentum": -0.5, "step_size": -1})"), std::string("<no exception>"));
  COMPARE(refusal(R"({"seed": 18446744073709551615})"), std::string("<no exception>"));
}

// ---- datasets --------------------------------------------------------------------------------
// A 20-byte file whose header claims 4e9 images is refused from the header alone.
TEST(idxHeaderClaimingBillionsIsRefusedBeforeReading) {
  const TempDir tmp;
  const std::string path = tmp.file("claims").string();
  write_raw(path, idx_bytes(0x08, {4000000000u, 28, 28}, 4));
  COMPARE(message_of<DataError>([&] { data::read_idx(path); }),
          path + ": byte offset 4: dimensions [4000000000, 28, 28] hold more than 2147483648 elements, the limit");
  // Within the element limit, the claim is compared with the file's real length first.
  write_raw(path, idx_bytes(0x0E, {268435456u}, 8));
  COMPARE(message_of<DataError>([&] { data::read_idx(path); }),
          path +
              ": byte offset 16: truncated data: the header declares [268435456] float64 elements = 2147483648 "
              "bytes from byte offset 8, but only 8 bytes follow the header (expected 2147483648, found 8)");
}

TEST(floatCopyLargerThanTheMemoryIsRefused) {
  const TempDir tmp;
  const std::string path = tmp.file("images").string();
  write_raw(path, idx_bytes(0x08, {10, 4, 4}, 160));
  const data::IdxArray a = data::read_idx(path);
  const int64_t before = tensor_allocations();
  COMPARE(message_of<DataError>([&] { a.to_tensor(1.f, 512); }),
          path +
              ": its [10, 4, 4] unsigned byte elements need 640 bytes as float32, besides the 160 bytes read "
              "from the file: more than the 512 bytes this machine has");
  COMPARE(tensor_allocations(), before);
  COMPARE(a.to_tensor(1.f, 800).numel(), int64_t(160));
  COMPARE(a.to_tensor(1.f, 0).numel(), int64_t(160));  // 0: no check
  COMPARE(a.to_tensor().numel(), int64_t(160));        // this machine's memory
}

// describe_dataset gives an image dataset's shapes without touching its files; open_dataset
// knows how many examples it read.
TEST(imageDatasetsAreDescribedWithoutReading) {
  const TempDir tmp;
  const fs::path dir = tmp.path();
  write_raw(dir / "train-images-idx3-ubyte", idx_bytes(0x08, {4000000000u, 28, 28}, 0));
  write_raw(dir / "train-labels-idx1-ubyte", idx_bytes(0x08, {3}, 3));
  const DatasetInfo info = describe_dataset({"mnist", dir.string(), "", ""});
  COMPARE(info.input_shape, (Shape{1, 28, 28}));
  COMPARE(info.examples, int64_t(0));
  COMPARE(message_of<DataError>([&] { open_dataset({"mnist", dir.string(), "", ""}, 1, 0.1); }),
          (dir / "train-images-idx3-ubyte").string() +
              ": byte offset 4: dimensions [4000000000, 28, 28] hold more than 2147483648 elements, the limit");

  write_raw(dir / "train-images-idx3-ubyte", idx_bytes(0x08, {3, 28, 28}, 3 * 784));
  write_raw(dir / "t10k-images-idx3-ubyte", idx_bytes(0x08, {2, 28, 28}, 2 * 784));
  write_raw(dir / "t10k-labels-idx1-ubyte", idx_bytes(0x08, {2}, 2));
  COMPARE(open_dataset({"mnist", dir.string(), "", ""}, 1, 0.1).info.examples, int64_t(5));
  COMPARE(describe_dataset({"csv", (kExamples / "data" / "housing.csv").string(), "price", "regression"}).examples,
          int64_t(500));
}

