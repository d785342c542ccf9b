#pragma once
// Helpers of the ONNX export tests: small graphs around layers, trained models made by hand
// (compiled, every weight random), and ONNX Runtime, run through tests/onnx/run_onnx.js.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "graph/inference.h"
#include "layers/compiler.h"
#include "session/trained_model.h"
#include "support/graph_fixture.h"
#include "support/process.h"
#include "support/test_support.h"
#include "util/error.h"

namespace plexus::testing {

// Input "in" -> layers, each fed by the one before (every required input port; a variadic one
// twice) -> the loss "loss" (MSE by default), whose target is the Input's y.
inline graph::Graph chain(std::vector<graph::Node> layers, const std::string& loss = "MSE") {
  graph::Graph g;
  g.nodes.push_back(node("in", "Input"));
  std::string previous = "in", port = "x";
  for (graph::Node& n : layers) {
    const graph::LayerType& type = *graph::Registry::instance().find(n.type);
    for (const graph::PortSpec& p : type.inputs)
      for (int i = 0; i < (p.variadic ? 2 : p.required ? 1 : 0); ++i) g.edges.push_back(edge(previous, port, n.id, p.name));
    previous = n.id;
    port = type.outputs.at(0).name;
    g.nodes.push_back(std::move(n));
  }
  g.nodes.push_back(node("loss", loss));
  g.edges.push_back(edge(previous, port, "loss", "input"));
  g.edges.push_back(edge("in", "y", "loss", "target"));
  return g;
}

// The shape per example of the loss's prediction; nullopt when a layer on the way refuses its
// input (the loss's own checks of its target do not count).
inline std::optional<Shape> prediction_shape(const graph::Graph& g, const graph::DatasetInfo& info) {
  const graph::InferenceResult r = graph::infer_shapes(g, &info);
  for (size_t e = 0; e < g.edges.size(); ++e)
    if (g.edges[e].to.node == "loss" && g.edges[e].to.port == "input") return r.edge_shapes[e];
  return std::nullopt;
}

// Per-example inputs a layer type may take, tried in order: images, features, sequences (the
// second with E divisible by MultiheadAttention's default 4 heads), one with a dimension of
// size 1 (Squeeze) and one whose dim 1 is the total of Split's default sections [1, 1].
inline const std::vector<Shape> kTestInputs{{3, 8, 8}, {6}, {4, 5}, {4, 8}, {1, 6}, {2, 3}};

// The first of kTestInputs that `g` (a chain) accepts.
inline std::optional<Shape> suited_input(const graph::Graph& g) {
  for (const Shape& s : kTestInputs)
    if (prediction_shape(g, {s, {}, 0})) return s;
  return std::nullopt;
}

// A standardisation per channel (dim 1), as image and CSV runs have.
inline session::InputNormalization per_channel(const Shape& input) {
  session::InputNormalization n;
  for (int64_t c = 0; c < (input.empty() ? 1 : input[0]); ++c) {
    n.mean.push_back(0.1f * float(c) - 0.2f);
    n.std.push_back(0.5f + 0.25f * float(c));
  }
  return n;
}

// A trained model of `g` as session::load_trained_model gives one, with every parameter and
// buffer drawn at random (running variances positive), so that no rule passes by accident of
// an initial value (zero biases, unit variances). For an MSE loss the labels take the
// prediction's shape, so any layer can end the graph; otherwise they are class indices of
// `classes` classes. Throws ValueError listing the graph's errors.
// `info` says more of the dataset than its input shape and classes (a table's feature columns).
inline session::TrainedModel trained_model(graph::Graph g, graph::DatasetInfo info,
                                           session::InputNormalization norm = {}, uint64_t seed = 7) {
  session::TrainedModel m;
  m.info = std::move(info);
  if (!m.info.classes) m.info.label_shape = prediction_shape(g, m.info).value_or(Shape{});
  for (int64_t c = 0; c < m.info.classes; ++c) m.class_names.push_back("class " + std::to_string(c));
  m.compiled = layers::compile(g, m.info, seed);
  m.compiled.model->eval();
  Generator gen(seed);
  NoGradGuard no_grad;
  for (const auto& [name, t] : m.compiled.model->state()) {
    const bool variance = name.ends_with("running_var");
    Tensor(t).copy_(uniform(t.shape(), variance ? 0.5f : -1.f, variance ? 2.f : 1.f, &gen));
  }
  m.project = std::move(g);
  m.normalization = std::move(norm);
  return m;
}
inline session::TrainedModel trained_model(graph::Graph g, const Shape& input, session::InputNormalization norm = {},
                                           int64_t classes = 0, uint64_t seed = 7) {
  return trained_model(std::move(g), graph::DatasetInfo{input, {}, classes}, std::move(norm), seed);
}

// Random raw inputs of this batched shape: reals in [-2, 2), or whole numbers in [0, 10) for a
// model that takes indices.
inline Tensor random_input(const Shape& batch, bool indices, uint64_t seed = 11) {
  Generator gen(seed);
  Tensor x = uniform(batch, indices ? 0.f : -2.f, indices ? 10.f : 2.f, &gen);
  if (indices)
    for (float* p = x.data(); p < x.data() + x.numel(); ++p) *p = std::floor(*p);
  return x;
}

// Whether the model takes indices (an Embedding): Plexus refuses real-valued inputs.
inline bool takes_indices(const session::TrainedModel& m) {
  Shape batch{2};
  batch.insert(batch.end(), m.info.input_shape.begin(), m.info.input_shape.end());
  try {
    m.forward(random_input(batch, false));
    return false;
  } catch (const IndexError&) {
    return true;
  }
}

// Each layer type of the registry but the losses, alone between the Input (standardising per
// channel, but not ids) and an MSE loss, with random weights, on the first of kTestInputs it
// takes: what an export test runs for every type. Throws std::runtime_error for a type no test
// input suits.
struct LayerCase {
  const graph::LayerType* type;
  Shape input;  // per example
  bool indices;  // the model takes ids (an Embedding)
  session::TrainedModel model;
};
inline std::vector<LayerCase> layer_cases() {
  std::vector<LayerCase> cases;
  for (const graph::LayerType& t : graph::Registry::instance().types()) {
    if (t.is_loss()) continue;
    const graph::Graph g = t.is_input() ? chain({}) : chain({node("layer", t.name)});
    const std::optional<Shape> input = suited_input(g);
    if (!input) throw std::runtime_error("no test input suits " + t.name + ": add one to kTestInputs");
    session::TrainedModel m = trained_model(g, *input, per_channel(*input));
    const bool indices = takes_indices(m);
    if (indices) m.normalization = {};  // ids are not standardised
    cases.push_back({&t, *input, indices, std::move(m)});
  }
  return cases;
}

// ---- ONNX Runtime ----------------------------------------------------------------------------

inline std::string ort_modules() { return PLEXUS_SOURCE_DIR "/.cache/onnxruntime-node/node_modules"; }

// Why ONNX Runtime cannot run here, or "" when it can.
inline std::string ort_unavailable() {
  if (find_executable("node").empty()) return "node is not installed (scripts/deps installs it)";
  if (!std::filesystem::exists(ort_modules() + "/onnxruntime-node/package.json"))
    return "onnxruntime-node is not installed in .cache/onnxruntime-node (scripts/deps installs it)";
  return {};
}

struct OrtOutput {
  std::vector<int64_t> dims;  // the batch first
  std::vector<float> values;
};

// Runs tests/onnx/run_onnx.js on `model` with `args` (its input options); throws
// std::runtime_error with the script's message when it fails.
inline OrtOutput run_ort(const std::filesystem::path& model, const std::vector<std::string>& args,
                         const std::filesystem::path& work_dir) {
  const std::filesystem::path out = work_dir / "ort-output.f32";
  std::vector<std::string> node_args{PLEXUS_SOURCE_DIR "/tests/onnx/run_onnx.js", model.string()};
  node_args.insert(node_args.end(), args.begin(), args.end());
  node_args.insert(node_args.end(), {"--output", out.string()});
  const ProcessResult p = run_process("node", node_args, {{"NODE_PATH", ort_modules()}}, std::chrono::minutes(5));
  if (!p.ok()) throw std::runtime_error("run_onnx.js failed (" + p.describe() + "): " + p.err);
  OrtOutput r;
  const nlohmann::json summary = nlohmann::json::parse(p.out, nullptr, false);
  int64_t count = 1;
  if (summary.is_object() && summary.contains("dims") && summary["dims"].is_array())
    for (const nlohmann::json& d : summary["dims"]) {
      r.dims.push_back(d.get<int64_t>());
      count *= r.dims.back();
    }
  const std::string bytes = read_all(out);
  if (r.dims.empty() || bytes.size() != size_t(count) * sizeof(float))
    throw std::runtime_error("run_onnx.js wrote " + std::to_string(bytes.size()) + " bytes for output dims " +
                             (summary.is_discarded() ? "(no JSON: " + p.out + ")" : summary.dump()));
  r.values.resize(size_t(count));
  std::memcpy(r.values.data(), bytes.data(), bytes.size());
  return r;
}

// Runs `model` in ONNX Runtime on `x` (float32, any shape); the output named `output`.
inline OrtOutput run_ort(const std::filesystem::path& model, const Tensor& x, const std::filesystem::path& work_dir,
                         const std::string& output = "logits") {
  const std::filesystem::path in = work_dir / "ort-input.f32";
  const std::vector<float> v = x.to_vector();
  write_raw(in, std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  std::string shape;
  for (int64_t d : x.shape()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
  return run_ort(model, {"--input", in.string(), "--shape", shape, "--output-name", output}, work_dir);
}

// The same for a model with several inputs, each given by name.
inline OrtOutput run_ort(const std::filesystem::path& model, const std::vector<std::pair<std::string, Tensor>>& inputs,
                         const std::filesystem::path& work_dir, const std::string& output = "logits") {
  std::vector<std::string> args{"--output-name", output};
  for (const auto& [name, x] : inputs) {
    const std::filesystem::path in = work_dir / ("ort-input-" + name + ".f32");
    const std::vector<float> v = x.to_vector();
    write_raw(in, std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
    std::string shape;
    for (int64_t d : x.shape()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    args.insert(args.end(), {"--feed", name + ":" + in.string() + ":" + shape});
  }
  return run_ort(model, args, work_dir);
}

}  // namespace plexus::testing
