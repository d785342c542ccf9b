// The proof that each export rule computes what Plexus computes: small models around every
// layer type (and their parameters' variants), every weight random, exported and run in ONNX
// Runtime (tests/onnx/run_onnx.js), whose outputs must equal Plexus's forward pass on the same
// raw inputs. Skipped as a whole where node or onnxruntime-node is missing (scripts/deps
// installs both).
#include "support/check.h"

#include <cmath>
#include <cstdio>

#include "export/onnx.h"
#include "ops/ops.h"
#include "support/onnx_support.h"
#include "support/temp_dir.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::testing;

namespace {

constexpr double kTolerance = 1e-5;  // relative to the value's magnitude (at least 1)
// Recurrent layers feed each step's rounding into the next, and both sides compute their gates'
// tanh and sigmoid by approximations of a few ulps (ONNX Runtime's MLAS, our vectorised
// rational ones): over a sequence the differences compound to about 1e-5.
constexpr double kRecurrentTolerance = 5e-5;

// The models and ONNX Runtime's inputs and outputs, for the whole suite.
const TempDir& dir() {
  static const TempDir d;
  return d;
}

// The largest difference between ONNX Runtime's output and Plexus's, relative to the value's
// magnitude (at least 1), at most `tolerance`.
void same_values(const std::string& what, const OrtOutput& got, const Tensor& want, double tolerance) {
  COMPARE(Shape(got.dims.begin(), got.dims.end()), want.shape());
  const std::vector<float> w = want.to_vector();
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double err = std::abs(double(got.values[i]) - w[i]) / std::max(1.0, std::abs(double(w[i])));
    if (err > worst) worst = err, at = i;
  }
  std::printf("INFO   : %s: largest difference %.2g (relative)\n", what.c_str(), worst);
  VERIFY2(worst <= tolerance, what + ": value " + std::to_string(at) + " is " + std::to_string(got.values[at]) +
                                  " in ONNX Runtime, " + std::to_string(w[at]) + " in Plexus");
}

// Exports `m`, runs it in ONNX Runtime on a batch of 5 random raw inputs, and compares with
// Plexus.
void matches_plexus(const std::string& what, const session::TrainedModel& m, double tolerance = kTolerance) {
  const std::filesystem::path file = dir().file(what + ".onnx");
  exporter::export_onnx(m, file);
  Shape batch{5};
  batch.insert(batch.end(), m.info.input_shape.begin(), m.info.input_shape.end());
  const Tensor raw = random_input(batch, takes_indices(m)), want = m.forward(raw);
  OrtOutput got;
  try {
    got = run_ort(file, raw, dir().path());
  } catch (const std::exception& e) {
    FAIL(what + ": " + e.what());
  }
  same_values(what, got, want, tolerance);
}

}  // namespace

// Every test first skips where node or onnxruntime-node is missing, so that the suite as a
// whole is skipped there.

// Each registry type alone between the Input (standardising per channel) and the loss: the
// exported model's output is that layer's output.
TEST(everyLayerTypeMatchesPlexus) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  for (const graph::LayerType& t : graph::Registry::instance().types()) {
    if (t.is_loss()) continue;
    const graph::Graph g = t.is_input() ? chain({}) : chain({node("layer", t.name)});
    const std::optional<Shape> input = suited_input(g);
    VERIFY2(input, ("no test input suits " + t.name + ": add one to kTestInputs").c_str());
    session::TrainedModel m = trained_model(g, *input, per_channel(*input));
    if (takes_indices(m)) m.normalization = {};  // indices are not standardised
    matches_plexus(t.name, m, t.category == "Recurrent" ? kRecurrentTolerance : kTolerance);
  }
}

// The parameters that change what a rule emits, against Plexus.
TEST(parameterVariantsMatchPlexus) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  using P = std::map<std::string, graph::ParamValue>;
  const struct {
    const char* what;
    std::vector<graph::Node> layers;
    Shape input;
  } variants[] = {
      {"conv stride padding dilation",
       {node("conv", "Conv2d", P{{"out_channels", 4L}, {"stride", 2L}, {"padding", 2L}, {"dilation", 2L}})},
       {3, 9, 9}},
      {"conv groups no bias",
       {node("conv", "Conv2d", P{{"out_channels", 6L}, {"groups", 3L}, {"bias", false}, {"kernel_size", 2L}})},
       {3, 7, 7}},
      {"conv rectangular kernel stride padding dilation",
       {node("conv", "Conv2d",
             P{{"out_channels", 4L},
               {"kernel_size", std::vector<int64_t>{5, 1}},
               {"stride", std::vector<int64_t>{1, 2}},
               {"padding", std::vector<int64_t>{2, 0}},
               {"dilation", std::vector<int64_t>{1, 2}}})},
       {3, 9, 8}},
      // padding "same" with even spans: the odd zero at the bottom and right, as asymmetric ONNX pads
      {"conv same even kernel",
       {node("conv", "Conv2d", P{{"out_channels", 4L}, {"kernel_size", std::vector<int64_t>{4, 2}},
                                 {"padding", std::string("same")}})},
       {3, 7, 6}},
      {"conv same odd kernel dilation",
       {node("conv", "Conv2d", P{{"out_channels", 4L}, {"kernel_size", std::vector<int64_t>{3, 2}},
                                 {"dilation", std::vector<int64_t>{1, 3}}, {"padding", std::string("same")}})},
       {3, 7, 6}},
      {"conv 1-d same even kernel",
       {node("conv", "Conv1d", P{{"out_channels", 4L}, {"kernel_size", 4L}, {"padding", std::string("same")}})},
       {4, 9}},
      {"max pool rectangular", {node("pool", "MaxPool2d", P{{"kernel_size", std::vector<int64_t>{3, 2}},
                                                         {"stride", std::vector<int64_t>{1, 2}},
                                                         {"padding", std::vector<int64_t>{1, 0}}})},
       {2, 7, 8}},
      {"avg pool rectangular", {node("pool", "AvgPool2d", P{{"kernel_size", std::vector<int64_t>{1, 3}},
                                                         {"padding", std::vector<int64_t>{0, 1}}})},
       {2, 7, 8}},
      {"conv transpose rectangular",
       {node("up", "ConvTranspose2d",
             P{{"out_channels", 4L},
               {"kernel_size", std::vector<int64_t>{3, 2}},
               {"stride", std::vector<int64_t>{2, 1}},
               {"padding", std::vector<int64_t>{1, 0}},
               {"output_padding", std::vector<int64_t>{1, 0}},
               {"dilation", std::vector<int64_t>{1, 2}}})},
       {3, 5, 4}},
      {"max pool stride padding", {node("pool", "MaxPool2d", P{{"kernel_size", 3L}, {"stride", 2L}, {"padding", 1L}})},
       {2, 9, 9}},
      {"max pool uneven", {node("pool", "MaxPool2d")}, {2, 7, 5}},
      {"avg pool stride padding", {node("pool", "AvgPool2d", P{{"kernel_size", 3L}, {"stride", 2L}, {"padding", 1L}})},
       {2, 9, 9}},
      {"avg pool uneven", {node("pool", "AvgPool2d", P{{"kernel_size", 3L}, {"stride", 1L}})}, {2, 7, 5}},
      {"conv transpose stride padding output padding",
       {node("up", "ConvTranspose2d",
             P{{"out_channels", 4L}, {"stride", 2L}, {"padding", 1L}, {"output_padding", 1L}})},
       {3, 5, 5}},
      {"conv transpose groups dilation no bias",
       {node("up", "ConvTranspose2d",
             P{{"out_channels", 6L}, {"kernel_size", 2L}, {"dilation", 2L}, {"groups", 3L}, {"bias", false}})},
       {3, 4, 4}},
      {"conv 1-d stride padding dilation groups",
       {node("conv", "Conv1d",
             P{{"out_channels", 6L}, {"stride", 2L}, {"padding", 1L}, {"dilation", 2L}, {"groups", 2L}})},
       {4, 11}},
      {"upsample nearest x3", {node("up", "Upsample", P{{"scale_factor", 3L}})}, {3, 4, 5}},
      {"upsample bilinear x2", {node("up", "Upsample", P{{"mode", std::string("bilinear")}})}, {3, 4, 5}},
      {"upsample bilinear x3 align corners",
       {node("up", "Upsample", P{{"scale_factor", 3L}, {"mode", std::string("bilinear")}, {"align_corners", true}})},
       {3, 4, 5}},
      {"zero pad uneven", {node("pad", "ZeroPad2d", P{{"padding", std::vector<int64_t>{0, 2, 1, 3}}})}, {3, 4, 5}},
      {"max pool 1-d stride padding", {node("pool", "MaxPool1d", P{{"kernel_size", 3L}, {"stride", 2L}, {"padding", 1L}})},
       {4, 9}},
      {"avg pool 1-d overlapping", {node("pool", "AvgPool1d", P{{"kernel_size", 3L}, {"stride", 1L}, {"padding", 1L}})},
       {4, 9}},
      {"adaptive avg pool to 2x4", {node("pool", "AdaptiveAvgPool2d", P{{"output_size", std::vector<int64_t>{2, 4}}})},
       {3, 8, 8}},
      {"adaptive max pool to 4", {node("pool", "AdaptiveMaxPool2d", P{{"output_size", std::vector<int64_t>{4}}})},
       {3, 8, 8}},
      {"linear 3-d", {node("fc", "Linear", P{{"out_features", 3L}})}, {4, 5}},
      {"linear 4-d no bias", {node("fc", "Linear", P{{"out_features", 3L}, {"bias", false}})}, {2, 4, 5}},
      {"linear 2-d no bias", {node("fc", "Linear", P{{"out_features", 3L}, {"bias", false}})}, {5}},
      {"batchnorm1d sequence", {node("bn", "BatchNorm1d", P{{"eps", 1e-3}})}, {4, 5}},
      {"leaky relu slope", {node("act", "LeakyReLU", P{{"negative_slope", 0.2}})}, {6}},
      {"prelu per channel of images", {node("act", "PReLU", P{{"num_parameters", 3L}})}, {3, 8, 8}},
      {"prelu per channel of a sequence", {node("act", "PReLU", P{{"num_parameters", 4L}})}, {4, 5}},
      {"prelu per feature", {node("act", "PReLU", P{{"num_parameters", 6L}})}, {6}},
      {"elu alpha", {node("act", "ELU", P{{"alpha", 0.4}})}, {6}},
      // Both sides of the threshold: the composite rule.
      {"softplus beta threshold", {node("act", "Softplus", P{{"beta", 2.0}, {"threshold", 1.0}})}, {4, 5}},
      {"log softmax dim 1", {node("sm", "LogSoftmax", P{{"dim", 1L}})}, {4, 5}},
      {"log softmax dim -2", {node("sm", "LogSoftmax", P{{"dim", -2L}})}, {3, 4, 5}},
      {"softmax dim 1", {node("sm", "Softmax", P{{"dim", 1L}})}, {4, 5}},
      {"softmax dim -2", {node("sm", "Softmax", P{{"dim", -2L}})}, {3, 4, 5}},
      {"concat dim 2", {node("cat", "Concat", P{{"dim", 2L}})}, {4, 5}},
      {"reshape inferred", {node("re", "Reshape", P{{"shape", std::vector<int64_t>{5, -1, 2}}})}, {4, 5}},
      {"scalar per example", {node("re", "Reshape", P{{"shape", std::vector<int64_t>{}}}), node("flat", "Flatten")}, {1}},
      {"dropout in evaluation", {node("drop", "Dropout", P{{"p", 0.9}})}, {6}},
      {"permute 4-d", {node("perm", "Permute", P{{"dims", std::vector<int64_t>{0, 3, 1, 2}}})}, {2, 3, 4}},
      {"permute then linear", {node("perm", "Permute"), node("fc", "Linear", P{{"out_features", 3L}})}, {4, 5}},
      {"batchnorm2d without affine", {node("bn", "BatchNorm2d", P{{"affine", false}})}, {3, 8, 8}},
      {"batchnorm2d batch statistics in evaluation",
       {node("bn", "BatchNorm2d", P{{"track_running_stats", false}, {"eps", 1e-3}})}, {3, 8, 8}},
      {"batchnorm1d features batch statistics", {node("bn", "BatchNorm1d", P{{"track_running_stats", false}})}, {6}},
      {"batchnorm1d sequence batch statistics no affine",
       {node("bn", "BatchNorm1d", P{{"track_running_stats", false}, {"affine", false}})}, {4, 5}},
      {"group norm 3 groups", {node("gn", "GroupNorm", P{{"num_groups", 3L}, {"eps", 1e-3}})}, {6, 4, 5}},
      {"group norm of features no affine", {node("gn", "GroupNorm", P{{"affine", false}})}, {6}},
      {"group norm sequence", {node("gn", "GroupNorm", P{{"num_groups", 1L}})}, {4, 5}},
      {"instance norm affine", {node("in2d", "InstanceNorm2d", P{{"affine", true}, {"eps", 1e-3}})}, {3, 8, 8}},
      {"instance norm running statistics",
       {node("in2d", "InstanceNorm2d", P{{"track_running_stats", true}, {"affine", true}})}, {3, 8, 8}},
      {"instance norm running statistics no affine",
       {node("in2d", "InstanceNorm2d", P{{"track_running_stats", true}})}, {3, 8, 8}},
      {"rms norm eps", {node("rms", "RMSNorm", P{{"eps", 1e-5}})}, {4, 5}},
      {"rms norm no weight", {node("rms", "RMSNorm", P{{"elementwise_affine", false}})}, {3, 8, 8}},
      {"channel dropout in evaluation", {node("drop", "Dropout2d", P{{"p", 0.9}})}, {3, 8, 8}},
      {"mean over h and w", {node("gap", "Mean", P{{"dim", std::vector<int64_t>{2, 3}}})}, {3, 8, 8}},
      {"sum keepdim", {node("sum", "Sum", P{{"dim", std::vector<int64_t>{1}}, {"keepdim", true}})}, {4, 5}},
      {"mean of all keepdim",
       {node("mean", "Mean", P{{"dim", std::vector<int64_t>{3, 1, 2}}, {"keepdim", true}}), node("flat", "Flatten")},
       {3, 8, 8}},
      {"unsqueeze and squeeze",
       {node("un", "Unsqueeze", P{{"dim", 2L}}), node("perm", "Permute", P{{"dims", std::vector<int64_t>{0, 2, 1, 3}}}),
        node("sq", "Squeeze", P{{"dim", 1L}})},
       {4, 5}},
      {"attention not causal, 2 heads", {node("attn", "MultiheadAttention", P{{"num_heads", 2L}, {"causal", false}})}, {4, 6}},
      {"sequence block",
       {node("pos", "PositionalEmbedding", P{{"max_len", 4L}}), node("norm", "LayerNorm", P{{"eps", 1e-3}}),
        node("attn", "MultiheadAttention", P{{"num_heads", 3L}})},
       {4, 6}},
      {"sinusoidal positions",
       {node("pos", "PositionalEmbedding", P{{"max_len", 6L}, {"kind", std::string("sinusoidal")}})}, {4, 6}},
      {"lstm 2 layers bidirectional",
       {node("lstm", "LSTM", P{{"hidden_size", 4L}, {"num_layers", 2L}, {"bidirectional", true}})}, {4, 5}},
      {"gru 2 layers bidirectional",
       {node("gru", "GRU", P{{"hidden_size", 3L}, {"num_layers", 2L}, {"bidirectional", true}})}, {4, 5}},
      {"rnn 2 layers", {node("rnn", "RNN", P{{"hidden_size", 3L}, {"num_layers", 2L}})}, {4, 5}},
      {"conv block",
       {node("conv", "Conv2d", P{{"out_channels", 4L}, {"padding", 1L}}), node("bn", "BatchNorm2d"), node("act", "GELU"),
        node("pool", "AvgPool2d"), node("flat", "Flatten"), node("fc", "Linear", P{{"out_features", 7L}}),
        node("out", "Tanh")},
       {3, 8, 8}},
  };
  for (const auto& v : variants) matches_plexus(v.what, trained_model(chain(v.layers), v.input, per_channel(v.input)));
}

// Merges of three different tensors (Add sums left to right, as Plexus does), and one mean
// and std for every channel.
TEST(mergesAndOneStandardisationMatchPlexus) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  graph::Graph g = chain({node("a", "Linear", {{"out_features", int64_t(6)}}), node("sum", "Add")});
  std::erase_if(g.edges, [](const graph::Edge& e) { return e.to.node == "sum"; });
  g.nodes.push_back(node("b", "Tanh"));
  g.edges.push_back(edge("in", "x", "b"));
  for (const char* from : {"in", "a", "b"}) g.edges.push_back(edge(from, from == std::string("in") ? "x" : "output", "sum", "inputs"));
  matches_plexus("add of three", trained_model(g, {6}, {{0.5f}, {2.f}}));

  for (graph::Node& n : g.nodes)
    if (n.id == "sum") n.type = "Mul";
  matches_plexus("product of three", trained_model(g, {6}, {{0.5f}, {2.f}}));

  for (graph::Node& n : g.nodes)
    if (n.id == "sum") n.type = "Concat";
  matches_plexus("concat of three", trained_model(g, {6}, {{0.5f}, {2.f}}));
}

// Cross-attention: the sequence [4, 6] attending to itself max-pooled to 2 positions, the keys
// as they are and the values through a Linear; then the values the keys.
TEST(crossAttentionMatchesPlexus) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  using P = std::map<std::string, graph::ParamValue>;
  graph::Graph g;
  g.nodes = {node("in", "Input"),
             node("to_channels", "Permute", P{{"dims", std::vector<int64_t>{0, 2, 1}}}),
             node("pool", "MaxPool1d"),
             node("memory", "Permute", P{{"dims", std::vector<int64_t>{0, 2, 1}}}),
             node("values", "Linear", P{{"out_features", 6L}}),
             node("attn", "MultiheadAttention", P{{"num_heads", 2L}, {"causal", false}}),
             node("loss", "MSE")};
  g.edges = {edge("in", "x", "to_channels"),        edge("to_channels", "output", "pool"),
             edge("pool", "output", "memory"),      edge("memory", "output", "values"),
             edge("in", "x", "attn"),               edge("memory", "output", "attn", "key"),
             edge("values", "output", "attn", "value"), edge("attn", "output", "loss"),
             edge("in", "y", "loss", "target")};
  matches_plexus("cross-attention", trained_model(g, {4, 6}, per_channel({4, 6})));
  std::erase_if(g.edges, [](const graph::Edge& e) { return e.to.port == "value"; });
  matches_plexus("cross-attention values = keys", trained_model(g, {4, 6}, per_channel({4, 6})));
}

// Self-attention over each example's ids other than 0 as keys (random ids leave zeros anywhere,
// counted alike on both sides), causal and not.
TEST(keyLengthsMatchPlexus) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  using P = std::map<std::string, graph::ParamValue>;
  for (const bool causal : {false, true}) {
    graph::Graph g;
    g.nodes = {node("in", "Input"), node("len", "SequenceLengths"),
               node("emb", "Embedding", P{{"num_embeddings", 10L}, {"embedding_dim", 4L}}),
               node("attn", "MultiheadAttention", P{{"num_heads", 2L}, {"causal", causal}}), node("loss", "MSE")};
    g.edges = {edge("in", "x", "len"), edge("in", "x", "emb"), edge("emb", "output", "attn"),
               edge("len", "output", "attn", "lengths"), edge("attn", "output", "loss"), edge("in", "y", "loss", "target")};
    matches_plexus(causal ? "causal attention over key lengths" : "attention over key lengths", trained_model(g, {6}));
  }
}

// Sequence pooling of embedded ids, by each mode over every position and over each example's
// length (its ids other than 0; random ids leave zeros anywhere, which counts the same on
// both sides).
TEST(sequencePoolingMatchesPlexus) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  using P = std::map<std::string, graph::ParamValue>;
  for (const char* mode : {"mean", "max", "last", "first"})
    for (const bool lengths : {false, true}) {
      graph::Graph g;
      g.nodes = {node("in", "Input"), node("emb", "Embedding", P{{"num_embeddings", 10L}, {"embedding_dim", 4L}}),
                 node("pool", "SequencePool", P{{"mode", std::string(mode)}}), node("loss", "MSE")};
      g.edges = {edge("in", "x", "emb"), edge("emb", "output", "pool"), edge("pool", "output", "loss"),
                 edge("in", "y", "loss", "target")};
      if (lengths) {
        g.nodes.push_back(node("len", "SequenceLengths"));
        g.edges.push_back(edge("in", "x", "len"));
        g.edges.push_back(edge("len", "output", "pool", "lengths"));
      }
      session::TrainedModel m = trained_model(g, {6});
      matches_plexus(std::string("sequence pool ") + mode + (lengths ? " over lengths" : ""), m);
    }
}

// Recurrent layers over each example's length (ONNX's sequence_lens): the outputs, zeros past
// the length, and the final state, 2 layers both ways. Random ids leave zeros anywhere, which
// count alike on both sides.
TEST(recurrentLengthsMatchPlexus) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  using P = std::map<std::string, graph::ParamValue>;
  for (const char* type : {"LSTM", "GRU", "RNN"})
    for (const char* port : {"output", "state"}) {
      graph::Graph g;
      g.nodes = {node("in", "Input"), node("len", "SequenceLengths"),
                 node("emb", "Embedding", P{{"num_embeddings", 10L}, {"embedding_dim", 4L}}),
                 node("rnn", type, P{{"hidden_size", 3L}, {"num_layers", 2L}, {"bidirectional", true}}),
                 node("loss", "MSE")};
      g.edges = {edge("in", "x", "len"), edge("in", "x", "emb"), edge("emb", "output", "rnn"),
                 edge("len", "output", "rnn", "lengths"), edge("rnn", port, "loss"), edge("in", "y", "loss", "target")};
      matches_plexus(std::string(type) + " " + port + " over lengths", trained_model(g, {6}), kRecurrentTolerance);
    }
}

// Broadcasting merges: a feature map [2, 3, 3] gated by [2, 1, 1] (Mul) and less a [1, 1, 1]
// value (Sub), as ONNX's multidirectional broadcasting does.
TEST(broadcastingMergesMatchPlexus) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  graph::Graph g;
  g.nodes = {node("in", "Input"),
             node("flat", "Flatten"),
             node("gate_fc", "Linear", {{"out_features", int64_t(2)}}),
             node("gate", "Sigmoid"),
             node("gate_shape", "Reshape", {{"shape", std::vector<int64_t>{2, 1, 1}}}),
             node("mul", "Mul"),
             node("centre_fc", "Linear", {{"out_features", int64_t(1)}}),
             node("centre", "Reshape", {{"shape", std::vector<int64_t>{1, 1, 1}}}),
             node("sub", "Sub"),
             node("loss", "MSE")};
  g.edges = {edge("in", "x", "flat"),
             edge("flat", "output", "gate_fc"),
             edge("gate_fc", "output", "gate"),
             edge("gate", "output", "gate_shape"),
             edge("in", "x", "mul", "inputs"),
             edge("gate_shape", "output", "mul", "inputs"),
             edge("flat", "output", "centre_fc"),
             edge("centre_fc", "output", "centre"),
             edge("mul", "output", "sub", "input"),
             edge("centre", "output", "sub", "other"),
             edge("sub", "output", "loss"),
             edge("in", "y", "loss", "target")};
  matches_plexus("gate and centre", trained_model(g, {2, 3, 3}, per_channel({2, 3, 3})));
}


// Nodes with several output ports, the exported output taken from a later one: a Split's middle
// piece, a Chunk's last, and a recurrent layer's final state (ONNX's Y_h of its last layer), in
// both directions and over stacked layers; Slice with bounds past the ends and a step.
TEST(laterOutputPortsMatchPlexus) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  using P = std::map<std::string, graph::ParamValue>;
  const auto from_port = [](graph::Node layer, const std::string& port) {
    graph::Graph g = chain({std::move(layer)});
    for (graph::Edge& e : g.edges)
      if (e.to.node == "loss" && e.to.port == "input") e.from.port = port;
    return g;
  };
  const struct {
    const char* what;
    graph::Graph graph;
    Shape input;
    double tolerance = kTolerance;
  } cases[] = {
      {"split middle piece", from_port(node("cut", "Split", P{{"sections", std::vector<int64_t>{1, 2, 2}}, {"dim", 2L}}), "output1"),
       {3, 5}},
      {"chunk last piece", from_port(node("cut", "Chunk", P{{"chunks", 3L}}), "output2"), {7, 2}},
      {"slice past the ends", from_port(node("cut", "Slice", P{{"dim", 2L}, {"start", -4L}, {"end", 100L}, {"step", 3L}}), "output"),
       {3, 8}},
      {"lstm state", from_port(node("rnn", "LSTM", P{{"hidden_size", 3L}, {"num_layers", 2L}, {"bidirectional", true}}), "state"),
       {4, 5}, kRecurrentTolerance},
      {"gru state", from_port(node("rnn", "GRU", P{{"hidden_size", 4L}}), "state"), {4, 5}, kRecurrentTolerance},
      {"rnn state", from_port(node("rnn", "RNN", P{{"hidden_size", 3L}, {"bidirectional", true}}), "state"), {4, 5},
       kRecurrentTolerance},
  };
  for (const auto& c : cases) matches_plexus(c.what, trained_model(c.graph, c.input, per_channel(c.input)), c.tolerance);
}

// Two losses, one against the labels and one against the examples: the model's outputs are
// both predictions, the classification's "logits" first, the reconstruction's after it.
TEST(everyLossPredictionIsAnOutput) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  using P = std::map<std::string, graph::ParamValue>;
  graph::Graph g;
  g.nodes = {node("in", "Input"),
             node("rec", "MSE", P{{"loss_weight", 0.5}}),
             node("enc", "Conv2d", P{{"out_channels", 4L}, {"kernel_size", 3L}, {"padding", 1L}}),
             node("act", "ReLU"),
             node("pool", "AdaptiveAvgPool2d", P{{"output_size", std::vector<int64_t>{1, 1}}}),
             node("flat", "Flatten"),
             node("cls", "Linear", P{{"out_features", 3L}}),
             node("ce", "CrossEntropy"),
             node("dec", "ConvTranspose2d", P{{"out_channels", 2L}, {"kernel_size", 3L}, {"padding", 1L}})};
  g.edges = {edge("in", "x", "enc"),      edge("enc", "output", "act"),  edge("act", "output", "pool"),
             edge("pool", "output", "flat"), edge("flat", "output", "cls"), edge("cls", "output", "ce"),
             edge("in", "y", "ce", "target"), edge("act", "output", "dec"), edge("dec", "output", "rec"),
             edge("in", "x", "rec", "target")};
  const Shape input{2, 5, 5};
  const session::TrainedModel m = trained_model(g, input, per_channel(input), 3);
  const std::filesystem::path file = dir().file("two losses.onnx");
  COMPARE(exporter::export_onnx(m, file).output,
          std::string("logits float32 [N, 3], rec.prediction float32 [N, 2, 5, 5]"));
  const Tensor raw = random_input({5, 2, 5, 5}, false);
  const std::vector<Tensor> want = [&] {
    NoGradGuard no_grad;
    return m.compiled.model->predictions(m.normalization.apply(raw));
  }();
  try {
    same_values("two losses: logits", run_ort(file, raw, dir().path()), want.at(1), kTolerance);
    same_values("two losses: rec.prediction", run_ort(file, raw, dir().path(), "rec.prediction"), want.at(0),
                kTolerance);
  } catch (const std::exception& e) {
    FAIL(std::string("two losses: ") + e.what());
  }
}

// Inputs reading a table's columns apart: one ONNX input per Input node, named by its id, each
// taking its columns in raw units (the measurements standardised inside, the category's indices
// as they are), with the columns named in the metadata.
TEST(inputsReadingColumnsAreSeparateInputs) {
  if (const std::string why = ort_unavailable(); !why.empty()) SKIP(why);
  const graph::Graph g = measurements_and_kind({"d", "a", "c"});
  const graph::DatasetInfo info{{5}, {}, 3, 0, {"a", "b", "c", "d", "kind"}};
  const session::InputNormalization norm{{1.f, 2.f, -1.f, 0.5f, 0.f}, {2.f, 0.5f, 3.f, 1.5f, 1.f}};
  const session::TrainedModel m = trained_model(g, info, norm);
  const std::filesystem::path file = dir().file("columns apart.onnx");
  const exporter::OnnxSummary summary = exporter::export_onnx(m, file);
  COMPARE(summary.input, std::string("num float32 [N, 3], kind float32 [N, 1]"));
  std::vector<float> rows = random_input({5, 5}, false).to_vector();
  for (size_t r = 0; r < 5; ++r) rows[r * 5 + 4] = float(r % 6);  // the category's indices
  const Tensor raw = from_vector(rows, {5, 5});
  const Tensor want = m.forward(raw);
  const Tensor num = index_select(raw, 1, from_vector({3.f, 0.f, 2.f}, {3})), kind = narrow(raw, 1, 4, 1);
  try {
    same_values("columns apart", run_ort(file, {{"num", contiguous(num)}, {"kind", contiguous(kind)}}, dir().path()),
                want, kTolerance);
  } catch (const std::exception& e) {
    FAIL(std::string("columns apart: ") + e.what());
  }
  const std::string bytes = plexus::testing::read_all(file);
  VERIFY(bytes.find(R"({"kind":["kind"],"num":["d","a","c"]})") != std::string::npos);
}
