// ONNX export (core/export/onnx.h): every layer type of the registry exports; the file passes
// ONNX's checker and has the promised interface (x, logits, a dynamic batch, opset 13,
// metadata); a node that cannot be exported is named, and then nothing is written. Whether the
// exported numbers are right is test_onnx_runtime's question (ONNX Runtime against Plexus).
#include "support/check.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "export/onnx.h"
#include "io/atomic_file.h"
#include "layers/lowering.h"
#include "support/onnx_model.h"
#include "support/onnx_support.h"
#include "support/temp_dir.h"
#include "util/error.h"
#include "util/text.h"

using namespace plexus;
using namespace plexus::testing;
namespace fs = std::filesystem;

namespace {

// "N, 1, 28, 28": a value's dims, the symbolic ones by name.
std::string dims_of(const onnx::ValueInfoProto& v) {
  std::vector<std::string> dims;
  for (const auto& d : v.type().tensor_type().shape().dim())
    dims.push_back(d.has_dim_param() ? d.dim_param() : std::to_string(d.dim_value()));
  return join(dims);
}

// "N, 3, 8, 8" for [3, 8, 8].
std::string batch_and(const Shape& per_example) {
  std::vector<std::string> dims{"N"};
  for (int64_t d : per_example) dims.push_back(std::to_string(d));
  return join(dims);
}

std::vector<std::string> op_types(const onnx::ModelProto& m) {
  std::vector<std::string> ops;
  for (const onnx::NodeProto& n : m.graph().node()) ops.push_back(n.op_type());
  return ops;
}

const onnx::TensorProto* initializer(const onnx::ModelProto& m, const std::string& name) {
  for (const onnx::TensorProto& t : m.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

// Input -> Conv2d -> BatchNorm2d -> ReLU -> MaxPool2d -> Dropout -> Flatten -> Linear(10) -> CrossEntropy.
graph::Graph small_cnn() {
  return chain({node("conv", "Conv2d", {{"out_channels", int64_t(4)}, {"padding", int64_t(1)}}), node("bn", "BatchNorm2d"),
                node("act", "ReLU"), node("pool", "MaxPool2d"), node("drop", "Dropout"), node("flat", "Flatten"),
                node("fc", "Linear", {{"out_features", int64_t(10)}})},
               "CrossEntropy");
}

}  // namespace

// The losses end the exported graph; every other type has a rule.
TEST(everyTypeButTheLossesHasARule) {
  for (const graph::LayerType& t : graph::Registry::instance().types())
    VERIFY2(bool(layers::lowering(t).onnx) != t.is_loss(), t.name.c_str());
}

// Each layer type of the registry, alone between the Input and an MSE loss, exports to a
// model ONNX's checker accepts, whose output is that layer's, with the batch left open.
TEST(everyLayerTypeExports) {
  const TempDir dir;
  for (const graph::LayerType& t : graph::Registry::instance().types()) {
    if (t.is_loss()) continue;
    const graph::Graph g = t.is_input() ? chain({}) : chain({node("layer", t.name)});
    const std::optional<Shape> input = suited_input(g);
    VERIFY2(input, ("no test input suits " + t.name + ": add one to kTestInputs").c_str());
    const Shape output = *prediction_shape(g, {*input, {}, 0});
    const session::TrainedModel m = trained_model(g, *input, per_channel(*input));
    const fs::path out = dir.file(t.name + ".onnx");
    exporter::export_onnx(m, out);
    const onnx::ModelProto p = read_model(out);
    onnx::checker::check_model(p);
    COMPARE(dims_of(p.graph().input(0)), batch_and(*input));
    COMPARE(dims_of(p.graph().output(0)), batch_and(output));
    // The layer's own nodes are there, named after it; the loss is not exported.
    const std::string prefix = t.is_input() ? "in/" : "layer/";
    bool layer = false;
    for (const onnx::NodeProto& n : p.graph().node()) {
      layer |= n.name().starts_with(prefix);
      VERIFY2(!n.name().starts_with("loss/"), t.name.c_str());
    }
    VERIFY2(layer, t.name.c_str());
  }
}

// The interface a runtime sees: "x" float32 [N, 1, 28, 28] in raw units, standardised by the
// model's first nodes; "logits" [N, 10]; opset 13; the producer; class names and project (and
// a vocabulary where the model has one).
TEST(interfaceAndMetadata) {
  const TempDir dir;
  const fs::path out = dir.file("cnn.onnx");
  session::TrainedModel m = trained_model(small_cnn(), {1, 28, 28}, {{0.1307f}, {0.3081f}}, 10);
  const exporter::OnnxSummary s = exporter::export_onnx(m, out, {"digits"});
  COMPARE(s.input, std::string("x float32 [N, 1, 28, 28]"));
  COMPARE(s.output, std::string("logits float32 [N, 10]"));
  COMPARE(s.opset, int64_t(13));
  COMPARE(s.bytes, size_t(fs::file_size(out)));

  const onnx::ModelProto p = read_model(out);
  COMPARE(p.ir_version(), int64_t(onnx::IR_VERSION));
  COMPARE(p.opset_import_size(), 1);
  COMPARE(p.opset_import(0).domain(), std::string());
  COMPARE(p.opset_import(0).version(), int64_t(13));
  COMPARE(p.producer_name(), std::string("plexus"));
  COMPARE(p.graph().input_size(), 1);
  COMPARE(p.graph().output_size(), 1);
  const onnx::ValueInfoProto &x = p.graph().input(0), &logits = p.graph().output(0);
  COMPARE(x.name(), std::string("x"));
  COMPARE(x.type().tensor_type().elem_type(), int(onnx::TensorProto::FLOAT));
  COMPARE(dims_of(x), std::string("N, 1, 28, 28"));
  COMPARE(logits.name(), std::string("logits"));
  COMPARE(dims_of(logits), std::string("N, 10"));
  COMPARE(int(p.graph().node_size()), int(s.nodes));
  COMPARE(int(p.graph().initializer_size()), int(s.initializers));

  std::map<std::string, std::string> meta;
  for (const auto& e : p.metadata_props()) meta[e.key()] = e.value();
  COMPARE(nlohmann::json::parse(meta.at("class_names")).get<std::vector<std::string>>(), m.class_names);
  COMPARE(meta.at("project"), std::string("digits"));
  VERIFY(!meta.contains("vocabulary"));
  m.vocabulary = {"a", "é"};  // as labelled texts have
  exporter::export_onnx(m, dir.file("texts.onnx"), {"digits"});
  std::map<std::string, std::string> texts_meta;
  const onnx::ModelProto texts = read_model(dir.file("texts.onnx"));
  for (const auto& e : texts.metadata_props()) texts_meta[e.key()] = e.value();
  COMPARE(nlohmann::json::parse(texts_meta.at("vocabulary")).get<std::vector<std::string>>(), m.vocabulary);

  // Standardisation first, (x - mean) * (1 / std) with one value broadcast over [1, C, 1, 1];
  // then Dropout is an Identity, BatchNorm uses the running statistics (one output: no
  // training outputs), and the loss is left out.
  const std::vector<std::string> want{"Sub", "Mul", "Conv", "BatchNormalization", "Relu", "MaxPool", "Identity",
                                      "Flatten", "Gemm"};
  COMPARE(op_types(p), want);
  COMPARE(p.graph().node(0).input(0), std::string("x"));
  const onnx::TensorProto* mean = initializer(p, p.graph().node(0).input(1));
  VERIFY(mean);
  COMPARE(std::vector<int64_t>(mean->dims().begin(), mean->dims().end()), (std::vector<int64_t>{1, 1, 1, 1}));
  COMPARE(p.graph().node(3).output_size(), 1);
  COMPARE(p.graph().node(3).input(3), std::string("bn.running_mean"));
  COMPARE(p.graph().node(8).output(0), std::string("logits"));
}

// Linear over [N, in] is one Gemm; over [N, ..., in] a MatMul by the transposed weight, and
// the bias added only when it has one.
TEST(linearOverMoreDimensions) {
  const TempDir dir;
  const fs::path out = dir.file("linear.onnx");
  exporter::export_onnx(trained_model(chain({node("fc", "Linear", {{"out_features", int64_t(3)}})}), {4, 5}), out);
  onnx::ModelProto p = read_model(out);
  COMPARE(op_types(p), (std::vector<std::string>{"Identity", "MatMul", "Add"}));
  const onnx::TensorProto* w = initializer(p, p.graph().node(1).input(1));
  VERIFY(w);
  COMPARE(std::vector<int64_t>(w->dims().begin(), w->dims().end()), (std::vector<int64_t>{5, 3}));

  exporter::export_onnx(
      trained_model(chain({node("fc", "Linear", {{"out_features", int64_t(3)}, {"bias", false}})}), {4, 5}), out);
  COMPARE(op_types(read_model(out)), (std::vector<std::string>{"Identity", "MatMul"}));
  exporter::export_onnx(
      trained_model(chain({node("fc", "Linear", {{"out_features", int64_t(3)}, {"bias", false}})}), {5}), out);
  p = read_model(out);
  COMPARE(op_types(p), (std::vector<std::string>{"Identity", "Gemm"}));
  COMPARE(p.graph().node(1).input_size(), 2);
}

// A node the exporter refuses (here the Input, whose standardisation does not fit its one
// channel): one error naming the node and why; no file is created, and one already there
// keeps its bytes.
TEST(refusedNodeIsNamedAndNothingIsWritten) {
  graph::Graph g = small_cnn();
  g.nodes[0].name = "pixels";
  const session::TrainedModel m = trained_model(g, {1, 28, 28}, {{0.1f, 0.2f}, {1.f, 1.f}}, 10);
  const TempDir dir;
  const fs::path out = dir.file("model.onnx");
  std::string msg = message_of<ValueError>([&] { exporter::export_onnx(m, out); });
  COMPARE(msg, std::string("ONNX export: Input 'pixels' (node in) cannot be exported: its input standardisation "
                           "has 2 means and 2 standard deviations, but the input [N, 1, 28, 28] needs one of each, "
                           "or one per channel (dim 1)"));
  VERIFY(fs::is_empty(dir.path()));

  write_raw(out, "an earlier export");
  msg = message_of<ValueError>([&] { exporter::export_onnx(m, out); });
  VERIFY2(contains(msg, "Input 'pixels' (node in)"), msg.c_str());
  COMPARE(read_all(out), std::string("an earlier export"));
}

// Adaptive pooling exports as global pooling or equal windows; other output sizes have no ONNX
// form, and the message says which node and why.
TEST(unevenAdaptivePoolingIsRefused) {
  graph::Graph g = chain({node("conv", "Conv2d", {{"out_channels", int64_t(2)}}),
                          node("gap", "AdaptiveAvgPool2d", {{"output_size", std::vector<int64_t>{3, 3}}}),
                          node("flat", "Flatten"), node("fc", "Linear", {{"out_features", int64_t(3)}})},
                         "CrossEntropy");
  const session::TrainedModel m = trained_model(g, {1, 10, 10}, {{0.f}, {1.f}}, 3);  // conv: [2, 8, 8]
  const TempDir dir;
  const std::string msg = message_of<ValueError>([&] { exporter::export_onnx(m, dir.file("model.onnx")); });
  VERIFY2(contains(msg, "AdaptiveAvgPool2d 'gap' cannot be exported: ONNX has no adaptive pooling, and output_size 3x3 does not "
                        "divide the input 8x8 into equal windows"),
          msg.c_str());
  VERIFY(fs::is_empty(dir.path()));
}

// A failed write (here the final rename) leaves the earlier file and no temporary behind.
TEST(failedWriteLeavesTheEarlierFile) {
  const TempDir dir;
  const fs::path out = dir.file("model.onnx");
  write_raw(out, "an earlier export");
  io::fail_next_write_step(io::WriteStep::Rename, EIO);
  const std::string msg = message_of<IoError>(
      [&] { exporter::export_onnx(trained_model(small_cnn(), {1, 28, 28}, {}, 10), out); });
  VERIFY2(contains(msg, out.string()), msg.c_str());
  COMPARE(read_all(out), std::string("an earlier export"));
  COMPARE(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

