// The Normalization family: batch normalization (features, images) and layer normalization.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"

namespace plexus::layers {
namespace {

struct BatchNormParams {
  int64_t num_features;
  double eps, momentum;
};

void add_batch_norm(Registrar& r, bool two_d) {
  using P = BatchNormParams;
  Layer<P> t;
  t.name = two_d ? "BatchNorm2d" : "BatchNorm1d";
  t.category = "Normalization";
  t.display_name = two_d ? "Batch normalization (images)" : "Batch normalization (features)";
  t.description = "Normalises each channel with batch statistics while training, running ones in evaluation.";
  t.inputs = {{"input", two_d ? "[N, C, H, W]" : "[N, C] or [N, C, L]"}};
  t.outputs = {{"output", "the input's shape"}};
  t.params = {
      graph::zero_param("num_features", "Features", &P::num_features, graph::kBig,
                        "The channels (features) normalised; 0 = taken from the input.", "auto"),
      graph::param("eps", "Epsilon", &P::eps, 1e-5, 1e-12, 1, "Added to the variance, so that no division is by zero."),
      graph::param("momentum", "Running-statistics momentum", &P::momentum, 0.1, 0, 1,
                   "The weight of each batch in the running statistics used for evaluation.")};
  t.shape = [two_d](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    const Shape& s = one_input(c);
    if (two_d) require_rank(c, 3, "[N, C, H, W]");
    else if (s.size() != 1 && s.size() != 2)
      fail("input", c.node.label() + " expects input [N, C] or [N, C, L] but receives " + batched(s) + from(c, 0));
    if (p.num_features && p.num_features != s[0])
      fail("input", c.node.label() + " expects " + std::to_string(p.num_features) + " channels but receives " +
                        std::to_string(s[0]) + from(c, 0));
    return {s};
  };
  // A scale and a shift per channel (the running statistics are buffers, not learned).
  t.parameter_count = [](const P&, const std::vector<Shape>& in) { return 2 * double(in.at(0)[0]); };
  t.build = [two_d](const BuildContext& b, const P& p) {
    const int64_t n = b.inputs.at(0)[0];
    const float eps = float(p.eps), m = float(p.momentum);
    return single(two_d ? std::shared_ptr<nn::Module>(std::make_shared<nn::BatchNorm2d>(n, eps, m))
                        : std::make_shared<nn::BatchNorm1d>(n, eps, m));
  };
  t.onnx = [](const OnnxContext& c, const P& p) {  // inference: the running statistics
    c.out.add_node("BatchNormalization",
                   {c.input_names[0], c.parameter("weight"), c.parameter("bias"), c.parameter("running_mean"),
                    c.parameter("running_var")},
                   c.output_names, {{"epsilon", float(p.eps)}});
  };
  r.add(std::move(t));
}

struct LayerNormParams {
  double eps;
};

void add_layer_norm(Registrar& r) {
  using P = LayerNormParams;
  Layer<P> t;
  t.name = "LayerNorm";
  t.category = "Normalization";
  t.display_name = "Layer normalization";
  t.description = "Normalises each position's features (the last dimension) to mean 0 and variance 1, then scales "
                  "and shifts them by learned weights.";
  t.inputs = {{"input", "[N, ..., features]"}};
  t.outputs = {{"output", "the input's shape"}};
  t.params = {graph::param("eps", "Epsilon", &P::eps, 1e-5, 1e-12, 1,
                           "Added to the variance, so that no division is by zero.")};
  t.shape = [](const graph::ShapeContext& c, const P&) -> std::vector<Shape> {
    if (one_input(c).empty())
      fail("input", c.node.label() + " normalises features but receives a single value per example" + from(c, 0));
    return {one_input(c)};
  };
  t.parameter_count = [](const P&, const std::vector<Shape>& in) { return 2 * double(in.at(0).back()); };
  t.build = [](const BuildContext& b, const P& p) {
    return single(std::make_shared<nn::LayerNorm>(b.inputs.at(0).back(), float(p.eps)));
  };
  // opset 13 has no LayerNormalization: (x - mean) / sqrt(var + eps) * weight + bias.
  t.onnx = [](const OnnxContext& c, const P& p) {
    const OnnxAttributes last{{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t(1)}};
    c.out.add_initializer(c.name("eps"), full({}, float(p.eps)));
    c.out.add_node("ReduceMean", c.input_names, {c.name("mean")}, last);
    c.out.add_node("Sub", {c.input_names[0], c.name("mean")}, {c.name("centered")});
    c.out.add_node("Mul", {c.name("centered"), c.name("centered")}, {c.name("squared")});
    c.out.add_node("ReduceMean", {c.name("squared")}, {c.name("var")}, last);
    c.out.add_node("Add", {c.name("var"), c.name("eps")}, {c.name("var_eps")});
    c.out.add_node("Sqrt", {c.name("var_eps")}, {c.name("std")});
    c.out.add_node("Div", {c.name("centered"), c.name("std")}, {c.name("normalized")});
    c.out.add_node("Mul", {c.name("normalized"), c.parameter("weight")}, {c.name("scaled")});
    c.out.add_node("Add", {c.name("scaled"), c.parameter("bias")}, c.output_names);
  };
  r.add(std::move(t));
}

}  // namespace

void add_norm_layers(Registrar& r) {
  add_batch_norm(r, /*two_d=*/false);
  add_batch_norm(r, /*two_d=*/true);
  add_layer_norm(r);
}

}  // namespace plexus::layers
