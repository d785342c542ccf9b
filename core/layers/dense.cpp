// The dense layers: Linear and Embedding, which learn a matrix and apply it to every example.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"

namespace plexus::layers {
namespace {

struct LinearParams {
  int64_t in_features, out_features;
  bool bias;
};

void add_linear(Registrar& r) {
  using P = LinearParams;
  Layer<P> t;
  t.name = "Linear";
  t.category = "Layers";
  t.display_name = "Linear (fully connected)";
  t.description = "y = x·Wᵀ + b over the last dimension.";
  t.inputs = {{"input", "[N, ..., in_features]"}};
  t.outputs = {{"output", "[N, ..., out_features]"}};
  t.params = {graph::zero_param("in_features", "Input features", &P::in_features, graph::kBig,
                                "The features of the input; 0 = taken from the input.", "auto"),
              graph::param("out_features", "Output features", &P::out_features, 10, 1, graph::kBig,
                           "The features of the output."),
              graph::param("bias", "Bias", &P::bias, true, "Learns an additive bias.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    Shape s = one_input(c);
    if (s.empty()) fail("input", c.node.label() + " needs features but receives a single value per example" + from(c, 0));
    if (p.in_features && p.in_features != s.back())
      fail("input", c.node.label() + " expects " + std::to_string(p.in_features) + " input features but receives " +
                        std::to_string(s.back()) + from(c, 0));
    s.back() = p.out_features;
    return {s};
  };
  t.parameter_count = [](const P& p, const std::vector<Shape>& in) {
    const double out = double(p.out_features);
    return out * double(in.at(0).back()) + (p.bias ? out : 0);
  };
  // Every output value is a dot product over the input features.
  t.macs = [](const P&, const std::vector<Shape>& in, const std::vector<Shape>& out) {
    return double(numel(out.at(0))) * double(in.at(0).back());
  };
  t.build = [](const BuildContext& b, const P& p) {
    return single(std::make_shared<nn::Linear>(b.inputs.at(0).back(), p.out_features, p.bias, b.gen));
  };
  // [N, in]: one Gemm with Wᵀ; [N, ..., in]: MatMul by a transposed copy of W, then the bias.
  t.onnx = [](const OnnxContext& c, const P& p) {
    if (c.inputs[0].size() == 1) {
      std::vector<std::string> in{c.input_names[0], c.parameter("weight")};
      if (p.bias) in.push_back(c.parameter("bias"));
      return c.out.add_node("Gemm", in, c.output_names, {{"transB", int64_t(1)}});
    }
    c.out.add_initializer(c.name("weight_t"), c.out.weights(c.node.id + ".weight").t().contiguous());
    const std::string product = p.bias ? c.name("product") : c.output_names[0];
    c.out.add_node("MatMul", {c.input_names[0], c.name("weight_t")}, {product});
    if (p.bias) c.out.add_node("Add", {product, c.parameter("bias")}, c.output_names);
  };
  t.pytorch = [](const CodeContext& c, const P& p) {
    module_call(c, "nn.Linear(" + std::to_string(c.inputs[0].back()) + ", " + std::to_string(p.out_features) +
                        py_kwarg("bias", py(p.bias), "True") + ")");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    module_call(c, "nn::Linear(" + std::to_string(c.inputs[0].back()) + ", " + std::to_string(p.out_features) + ", " +
                       cpp(p.bias) + ")");
  };
  r.add(std::move(t));
}

struct EmbeddingParams {
  int64_t num_embeddings, embedding_dim;
};

void add_embedding(Registrar& r) {
  using P = EmbeddingParams;
  Layer<P> t;
  t.name = "Embedding";
  t.category = "Layers";
  t.display_name = "Embedding";
  t.description = "Looks up a learned vector for each whole-number index.";
  t.inputs = {{.name = "input", .doc = "indices of any shape, values in [0, num_embeddings)", .indices = true}};
  t.outputs = {{"output", "the input's shape + [embedding_dim]"}};
  t.params = {graph::param("num_embeddings", "Vocabulary size", &P::num_embeddings, 1000, 1, graph::kBig,
                           "The size of the vocabulary: indices run from 0 to this minus 1."),
              graph::param("embedding_dim", "Embedding size", &P::embedding_dim, 64, 1, graph::kBig,
                           "The length of each learned vector.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    Shape s = one_input(c);
    s.push_back(p.embedding_dim);
    return {s};
  };
  t.parameter_count = [](const P& p, const std::vector<Shape>&) {
    return double(p.num_embeddings) * double(p.embedding_dim);
  };
  t.build = [](const BuildContext& b, const P& p) {
    return single(std::make_shared<nn::Embedding>(p.num_embeddings, p.embedding_dim, b.gen));
  };
  // Indices arrive as float32 whole numbers; Gather takes int64.
  t.onnx = [](const OnnxContext& c, const P&) {
    c.out.add_node("Cast", c.input_names, {c.name("indices")}, {{"to", kOnnxInt64}});
    c.out.add_node("Gather", {c.parameter("weight"), c.name("indices")}, c.output_names, {{"axis", int64_t(0)}});
  };
  t.pytorch = [](const CodeContext& c, const P& p) {
    c.out.module("nn.Embedding(" + std::to_string(p.num_embeddings) + ", " + std::to_string(p.embedding_dim) + ")");
    c.assign(c.call(c.input() + ".long()"));
  };
  t.cpp = [](const CodeContext& c, const P& p) {  // the core's Embedding takes the float ids as they are
    module_call(c, "nn::Embedding(" + std::to_string(p.num_embeddings) + ", " + std::to_string(p.embedding_dim) + ")");
  };
  r.add(std::move(t));
}

}  // namespace

void add_dense_layers(Registrar& r) {
  add_linear(r);
  add_embedding(r);
}

}  // namespace plexus::layers
