// The Normalization family: batch normalization (features, images), layer, group, instance and
// RMS normalization.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"

namespace plexus::layers {
namespace {

// ---- what the entries share -----------------------------------------------------------------

template <class P>
graph::ParamField<P> eps_param(double P::*member) {
  return graph::param("eps", "Epsilon", member, 1e-5, 1e-12, 1,
                      "Added to the variance, so that no division is by zero.");
}

template <class P>
graph::ParamField<P> affine_param(bool P::*member, bool def) {
  return graph::param("affine", "Learned scale and shift", member, def,
                      "Multiplies each channel by a learned weight and adds a learned bias after normalising.");
}

// momentum and track_running_stats, of the layers that can keep running statistics.
template <class P>
graph::ParamField<P> momentum_param(double P::*member) {
  return graph::param("momentum", "Running-statistics momentum", member, 0.1, 0, 1,
                      "The weight of each batch in the running statistics used for evaluation.");
}

template <class P>
graph::ParamField<P> track_param(bool P::*member, bool def) {
  return graph::param("track_running_stats", "Track running statistics", member, def,
                      "Keeps running averages of the statistics while training and normalises with them in "
                      "evaluation; off, evaluation normalises with the input's own statistics too.");
}

// Refuses an input whose channels (dim 1) are not the `expected` ones (0 = any).
void require_channels(const graph::ShapeContext& c, int64_t expected) {
  const Shape& s = one_input(c);
  if (expected && expected != s[0])
    fail("input", c.node.label() + " expects " + std::to_string(expected) + " channels but receives " +
                      std::to_string(s[0]) + from(c, 0));
}

// A per-channel affine learns a weight and a bias per channel (the running statistics are
// buffers, not learned).
double affine_count(bool affine, int64_t channels) { return affine ? 2 * double(channels) : 0; }

// The node's per-channel tensor `param` ([C]) when it has one, else a constant [C] of `fill`,
// shaped [C, 1, ...] to broadcast over the input's `positions` dims after the channels.
std::string channel_tensor(const OnnxContext& c, const char* param, bool has, int64_t channels, size_t positions,
                           float fill) {
  if (has && positions == 0) return c.parameter(param);
  Shape s(positions + 1, 1);
  s[0] = channels;
  c.out.add_initializer(c.name(param), has ? c.out.weights(c.node.id + "." + param).reshape(s) : full(s, fill));
  return c.name(param);
}

// (x - mean) / sqrt(var + eps), the statistics over `axes`; returns the tensor's name.
std::string onnx_standardize(const OnnxContext& c, const std::string& x, const std::vector<int64_t>& axes, double eps) {
  const OnnxAttributes over{{"axes", axes}, {"keepdims", int64_t(1)}};
  c.out.add_initializer(c.name("eps"), full({}, float(eps)));
  c.out.add_node("ReduceMean", {x}, {c.name("mean")}, over);
  c.out.add_node("Sub", {x, c.name("mean")}, {c.name("centered")});
  c.out.add_node("Mul", {c.name("centered"), c.name("centered")}, {c.name("squared")});
  c.out.add_node("ReduceMean", {c.name("squared")}, {c.name("var")}, over);
  c.out.add_node("Add", {c.name("var"), c.name("eps")}, {c.name("var_eps")});
  c.out.add_node("Sqrt", {c.name("var_eps")}, {c.name("std")});
  c.out.add_node("Div", {c.name("centered"), c.name("std")}, {c.name("normalized")});
  return c.name("normalized");
}

// The node's output: x * scale + shift, either left out when its name is empty.
void onnx_scale_shift(const OnnxContext& c, const std::string& x, const std::string& scale, const std::string& shift) {
  if (scale.empty() && shift.empty()) return c.out.add_node("Identity", {x}, c.output_names);
  std::string y = x;
  if (!scale.empty()) {
    const std::string to = shift.empty() ? c.output_names[0] : c.name("scaled");
    c.out.add_node("Mul", {y, scale}, {to});
    y = to;
  }
  if (!shift.empty()) c.out.add_node("Add", {y, shift}, c.output_names);
}

// Inference with running statistics: ONNX's BatchNormalization, a unit scale and zero bias
// standing in for an affine the node does not have.
void onnx_running_batch_norm(const OnnxContext& c, bool affine, double eps) {
  const int64_t channels = c.inputs[0][0];
  c.out.add_node("BatchNormalization",
                 {c.input_names[0], channel_tensor(c, "weight", affine, channels, 0, 1.f),
                  channel_tensor(c, "bias", affine, channels, 0, 0.f), c.parameter("running_mean"),
                  c.parameter("running_var")},
                 c.output_names, {{"epsilon", float(eps)}});
}

// ---- BatchNorm1d, BatchNorm2d ------------------------------------------------------------------

struct BatchNormParams {
  int64_t num_features;
  double eps, momentum;
  bool affine, track_running_stats;
};

void add_batch_norm(Registrar& r, bool two_d) {
  using P = BatchNormParams;
  Layer<P> t;
  t.name = two_d ? "BatchNorm2d" : "BatchNorm1d";
  t.category = "Normalization";
  t.display_name = two_d ? "Batch normalization (images)" : "Batch normalization (features)";
  t.description = "Normalises each channel with batch statistics while training, running ones in evaluation "
                  "(the batch's there too without track_running_stats).";
  t.inputs = {{"input", two_d ? "[N, C, H, W]" : "[N, C] or [N, C, L]"}};
  t.outputs = {{"output", "the input's shape"}};
  t.params = {graph::zero_param("num_features", "Features", &P::num_features, graph::kBig,
                                "The channels (features) normalised; 0 = taken from the input.", "auto"),
              eps_param(&P::eps), momentum_param(&P::momentum), affine_param(&P::affine, true),
              track_param(&P::track_running_stats, true)};
  t.shape = [two_d](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    const Shape& s = one_input(c);
    if (two_d) require_rank(c, 3, "[N, C, H, W]");
    else if (s.size() != 1 && s.size() != 2)
      fail("input", c.node.label() + " expects input [N, C] or [N, C, L] but receives " + batched(s) + from(c, 0));
    require_channels(c, p.num_features);
    return {s};
  };
  t.parameter_count = [](const P& p, const std::vector<Shape>& in) { return affine_count(p.affine, in.at(0)[0]); };
  t.build = [two_d](const BuildContext& b, const P& p) {
    const int64_t n = b.inputs.at(0)[0];
    const float eps = float(p.eps), m = float(p.momentum);
    return single(two_d ? std::shared_ptr<nn::Module>(
                              std::make_shared<nn::BatchNorm2d>(n, eps, m, p.affine, p.track_running_stats))
                        : std::make_shared<nn::BatchNorm1d>(n, eps, m, p.affine, p.track_running_stats));
  };
  // Inference: the running statistics, or without them the batch's, over all dims but the channels.
  t.onnx = [](const OnnxContext& c, const P& p) {
    if (p.track_running_stats) return onnx_running_batch_norm(c, p.affine, p.eps);
    const Shape& s = c.inputs[0];
    std::vector<int64_t> axes{0};
    for (int64_t d = 2; d <= int64_t(s.size()); ++d) axes.push_back(d);
    const std::string normalized = onnx_standardize(c, c.input_names[0], axes, p.eps);
    onnx_scale_shift(c, normalized, p.affine ? channel_tensor(c, "weight", true, s[0], s.size() - 1, 1.f) : "",
                     p.affine ? channel_tensor(c, "bias", true, s[0], s.size() - 1, 0.f) : "");
  };
  // torch.nn's BatchNorm has Plexus' buffers (running_mean, running_var, num_batches_tracked)
  // and, without track_running_stats, uses the batch's statistics in evaluation too.
  t.pytorch = [name = t.name](const CodeContext& c, const P& p) {
    module_call(c, "nn." + name + "(" + std::to_string(c.inputs[0][0]) + py_kwarg("eps", py(p.eps), "1e-05") +
                        py_kwarg("momentum", py(p.momentum), "0.1") + py_kwarg("affine", py(p.affine), "True") +
                        py_kwarg("track_running_stats", py(p.track_running_stats), "True") + ")");
  };
  t.cpp = [name = t.name](const CodeContext& c, const P& p) {
    module_call(c, "nn::" + name + "(" + std::to_string(c.inputs[0][0]) + ", " + cpp(p.eps) + ", " + cpp(p.momentum) +
                       ", " + cpp(p.affine) + ", " + cpp(p.track_running_stats) + ")");
  };
  r.add(std::move(t));
}

// ---- LayerNorm ------------------------------------------------------------------------------

struct LayerNormParams {
  double eps;
};

// Refuses an input of a single value per example: the last-dim norms need features.
void require_features(const graph::ShapeContext& c) {
  if (one_input(c).empty())
    fail("input", c.node.label() + " normalises features but receives a single value per example" + from(c, 0));
}

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
  t.params = {eps_param(&P::eps)};
  t.shape = [](const graph::ShapeContext& c, const P&) -> std::vector<Shape> {
    require_features(c);
    return {one_input(c)};
  };
  t.parameter_count = [](const P&, const std::vector<Shape>& in) { return 2 * double(in.at(0).back()); };
  t.build = [](const BuildContext& b, const P& p) {
    return single(std::make_shared<nn::LayerNorm>(b.inputs.at(0).back(), float(p.eps)));
  };
  // opset 13 has no LayerNormalization: (x - mean) / sqrt(var + eps) * weight + bias.
  t.onnx = [](const OnnxContext& c, const P& p) {
    onnx_scale_shift(c, onnx_standardize(c, c.input_names[0], {-1}, p.eps), c.parameter("weight"),
                     c.parameter("bias"));
  };
  t.pytorch = [](const CodeContext& c, const P& p) {
    module_call(c, "nn.LayerNorm(" + std::to_string(c.inputs[0].back()) + py_kwarg("eps", py(p.eps), "1e-05") + ")");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    module_call(c, "nn::LayerNorm(" + std::to_string(c.inputs[0].back()) + ", " + cpp(p.eps) + ")");
  };
  r.add(std::move(t));
}

// ---- GroupNorm ------------------------------------------------------------------------------

struct GroupNormParams {
  int64_t num_groups, num_channels;
  double eps;
  bool affine;
};

void add_group_norm(Registrar& r) {
  using P = GroupNormParams;
  Layer<P> t;
  t.name = "GroupNorm";
  t.category = "Normalization";
  t.display_name = "Group normalization";
  t.description = "Splits each example's channels into groups and normalises each group over its channels and "
                  "positions to mean 0 and variance 1, then scales and shifts each channel by learned weights; "
                  "independent of the batch.";
  t.inputs = {{"input", "[N, C, *]"}};
  t.outputs = {{"output", "the input's shape"}};
  t.params = {graph::param("num_groups", "Groups", &P::num_groups, 2, 1, graph::kBig,
                           "The groups the channels are split into; must divide the channels."),
              graph::zero_param("num_channels", "Channels", &P::num_channels, graph::kBig,
                                "The channels normalised; 0 = taken from the input.", "auto"),
              eps_param(&P::eps), affine_param(&P::affine, true)};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    const Shape& s = one_input(c);
    if (s.empty())
      fail("input", c.node.label() + " expects input [N, C, *] but receives a single value per example" + from(c, 0));
    require_channels(c, p.num_channels);
    if (p.num_groups < 1 || s[0] % p.num_groups != 0)
      fail("input", c.node.label() + ": num_groups " + std::to_string(p.num_groups) + " does not divide the " +
                        std::to_string(s[0]) + " channels of " + batched(s) + from(c, 0));
    return {s};
  };
  t.parameter_count = [](const P& p, const std::vector<Shape>& in) { return affine_count(p.affine, in.at(0)[0]); };
  t.build = [](const BuildContext& b, const P& p) {
    return single(std::make_shared<nn::GroupNorm>(p.num_groups, b.inputs.at(0)[0], float(p.eps), p.affine));
  };
  // As PyTorch exports it: the groups as the channels of an InstanceNormalization of
  // [N, G, rest] (unit scale, zero bias), back to the input's shape, then the per-channel affine.
  t.onnx = [](const OnnxContext& c, const P& p) {
    const Shape& s = c.inputs[0];
    std::vector<int64_t> back{0};  // Reshape's 0 copies the batch dim
    back.insert(back.end(), s.begin(), s.end());
    c.out.add_initializer(c.name("group_shape"), std::vector<int64_t>{0, p.num_groups, -1});
    c.out.add_initializer(c.name("input_shape"), back);
    c.out.add_node("Reshape", {c.input_names[0], c.name("group_shape")}, {c.name("grouped")});
    c.out.add_node("InstanceNormalization",
                   {c.name("grouped"), channel_tensor(c, "group_scale", false, p.num_groups, 0, 1.f),
                    channel_tensor(c, "group_bias", false, p.num_groups, 0, 0.f)},
                   {c.name("grouped_normalized")}, {{"epsilon", float(p.eps)}});
    c.out.add_node("Reshape", {c.name("grouped_normalized"), c.name("input_shape")}, {c.name("normalized")});
    onnx_scale_shift(c, c.name("normalized"),
                     p.affine ? channel_tensor(c, "weight", true, s[0], s.size() - 1, 1.f) : "",
                     p.affine ? channel_tensor(c, "bias", true, s[0], s.size() - 1, 0.f) : "");
  };
  t.pytorch = [](const CodeContext& c, const P& p) {
    module_call(c, "nn.GroupNorm(" + std::to_string(p.num_groups) + ", " + std::to_string(c.inputs[0][0]) +
                        py_kwarg("eps", py(p.eps), "1e-05") + py_kwarg("affine", py(p.affine), "True") + ")");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    module_call(c, "nn::GroupNorm(" + std::to_string(p.num_groups) + ", " + std::to_string(c.inputs[0][0]) + ", " +
                       cpp(p.eps) + ", " + cpp(p.affine) + ")");
  };
  r.add(std::move(t));
}

// ---- InstanceNorm2d -------------------------------------------------------------------------

struct InstanceNormParams {
  int64_t num_features;
  double eps, momentum;
  bool affine, track_running_stats;
};

void add_instance_norm(Registrar& r) {
  using P = InstanceNormParams;
  Layer<P> t;
  t.name = "InstanceNorm2d";
  t.category = "Normalization";
  t.display_name = "Instance normalization (images)";
  t.description = "Normalises each channel of each example over its positions to mean 0 and variance 1 (as "
                  "PyTorch: no learned scale and shift, no running statistics unless asked for).";
  t.inputs = {{"input", "[N, C, H, W]"}};
  t.outputs = {{"output", "the input's shape"}};
  t.params = {graph::zero_param("num_features", "Features", &P::num_features, graph::kBig,
                                "The channels normalised; 0 = taken from the input.", "auto"),
              eps_param(&P::eps), momentum_param(&P::momentum), affine_param(&P::affine, false),
              track_param(&P::track_running_stats, false)};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    require_rank(c, 3, "[N, C, H, W]");
    require_channels(c, p.num_features);
    const Shape& s = one_input(c);
    if (s[1] * s[2] <= 1)
      fail("input", c.node.label() + " normalises each channel over its H x W positions but receives " + batched(s) +
                        from(c, 0) + ", with a single position per channel");
    return {s};
  };
  t.parameter_count = [](const P& p, const std::vector<Shape>& in) { return affine_count(p.affine, in.at(0)[0]); };
  t.build = [](const BuildContext& b, const P& p) {
    return single(std::make_shared<nn::InstanceNorm2d>(b.inputs.at(0)[0], float(p.eps), float(p.momentum), p.affine,
                                                       p.track_running_stats));
  };
  // Inference: the running statistics when tracked, else each instance's own.
  t.onnx = [](const OnnxContext& c, const P& p) {
    if (p.track_running_stats) return onnx_running_batch_norm(c, p.affine, p.eps);
    const int64_t channels = c.inputs[0][0];
    c.out.add_node("InstanceNormalization",
                   {c.input_names[0], channel_tensor(c, "weight", p.affine, channels, 0, 1.f),
                    channel_tensor(c, "bias", p.affine, channels, 0, 0.f)},
                   c.output_names, {{"epsilon", float(p.eps)}});
  };
  t.pytorch = [](const CodeContext& c, const P& p) {
    module_call(c, "nn.InstanceNorm2d(" + std::to_string(c.inputs[0][0]) + py_kwarg("eps", py(p.eps), "1e-05") +
                        py_kwarg("momentum", py(p.momentum), "0.1") + py_kwarg("affine", py(p.affine), "False") +
                        py_kwarg("track_running_stats", py(p.track_running_stats), "False") + ")");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    module_call(c, "nn::InstanceNorm2d(" + std::to_string(c.inputs[0][0]) + ", " + cpp(p.eps) + ", " +
                       cpp(p.momentum) + ", " + cpp(p.affine) + ", " + cpp(p.track_running_stats) + ")");
  };
  r.add(std::move(t));
}

// ---- RMSNorm --------------------------------------------------------------------------------

struct RmsNormParams {
  double eps;
  bool elementwise_affine;
};

void add_rms_norm(Registrar& r) {
  using P = RmsNormParams;
  Layer<P> t;
  t.name = "RMSNorm";
  t.category = "Normalization";
  t.display_name = "RMS normalization";
  t.description = "Divides each position's features (the last dimension) by their root mean square, then scales "
                  "them by learned weights; no centering, no shift.";
  t.inputs = {{"input", "[N, ..., features]"}};
  t.outputs = {{"output", "the input's shape"}};
  t.params = {graph::param("eps", "Epsilon", &P::eps, 1.1920929e-07, 1e-12, 1,
                           "Added to the mean square, so that no division is by zero. The default, 1.1920929e-07, is "
                           "float32's machine epsilon: what PyTorch's eps=None means."),
              graph::param("elementwise_affine", "Learned scale", &P::elementwise_affine, true,
                           "Multiplies each feature by a learned weight (ones at the start) after normalising.")};
  t.shape = [](const graph::ShapeContext& c, const P&) -> std::vector<Shape> {
    require_features(c);
    return {one_input(c)};
  };
  t.parameter_count = [](const P& p, const std::vector<Shape>& in) {
    return p.elementwise_affine ? double(in.at(0).back()) : 0;
  };
  t.build = [](const BuildContext& b, const P& p) {
    return single(std::make_shared<nn::RMSNorm>(b.inputs.at(0).back(), float(p.eps), p.elementwise_affine));
  };
  // x / sqrt(mean(x²) + eps) * weight, as opset 13 has no RMSNormalization.
  t.onnx = [](const OnnxContext& c, const P& p) {
    c.out.add_initializer(c.name("two"), full({}, 2.f));
    c.out.add_initializer(c.name("eps"), full({}, float(p.eps)));
    c.out.add_node("Pow", {c.input_names[0], c.name("two")}, {c.name("squared")});
    c.out.add_node("ReduceMean", {c.name("squared")}, {c.name("mean_square")},
                   {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t(1)}});
    c.out.add_node("Add", {c.name("mean_square"), c.name("eps")}, {c.name("mean_square_eps")});
    c.out.add_node("Sqrt", {c.name("mean_square_eps")}, {c.name("rms")});
    const std::string normalized = p.elementwise_affine ? c.name("normalized") : c.output_names[0];
    c.out.add_node("Div", {c.input_names[0], c.name("rms")}, {normalized});
    if (p.elementwise_affine) onnx_scale_shift(c, normalized, c.parameter("weight"), "");
  };
  // torch.nn has RMSNorm from PyTorch 2.4 on: the file defines it for the earlier ones.
  t.pytorch = [](const CodeContext& c, const P& p) {
    c.out.helper("RMSNorm", R"(class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2 over the last dim) + eps) * weight: PyTorch 2.4's nn.RMSNorm, for earlier versions."""

    def __init__(self, dim, eps, elementwise_affine=True):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim)) if elementwise_affine else None

    def forward(self, x):
        y = x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return y * self.weight if self.weight is not None else y
)");
    module_call(c, "RMSNorm(" + std::to_string(c.inputs[0].back()) + ", " + py(p.eps) +
                        py_kwarg("elementwise_affine", py(p.elementwise_affine), "True") + ")");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    module_call(c, "nn::RMSNorm(" + std::to_string(c.inputs[0].back()) + ", " + cpp(p.eps) + ", " +
                       cpp(p.elementwise_affine) + ")");
  };
  r.add(std::move(t));
}

}  // namespace

void add_norm_layers(Registrar& r) {
  add_batch_norm(r, /*two_d=*/false);
  add_batch_norm(r, /*two_d=*/true);
  add_layer_norm(r);
  add_group_norm(r);
  add_instance_norm(r);
  add_rms_norm(r);
}

}  // namespace plexus::layers
