// The Activation family: elementwise functions (PReLU's slopes learned), Softmax and LogSoftmax,
// Identity: each the input's shape out.
#include <cmath>

#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"

namespace plexus::layers {
namespace {

// What every activation shares: one input of any shape, the same shape out.
template <class P = NoParams>
Layer<P> activation(std::string name, std::string display, std::string description) {
  Layer<P> t = named<P>(std::move(name), "Activation", std::move(display), std::move(description));
  t.inputs = {{"input", "any shape"}};
  t.outputs = {{"output", "the input's shape"}};
  t.shape = same_shape;
  return t;
}

// The build rule of an activation whose module takes nothing.
template <class M>
BuiltNode plain(const BuildContext&, const NoParams&) {
  return single(std::make_shared<M>());
}

struct LeakyReLUParams {
  double negative_slope;
};

struct PReLUParams {
  int64_t num_parameters;
};

struct EluParams {
  double alpha;
};

struct SoftplusParams {
  double beta, threshold;
};

struct SoftmaxParams {
  int64_t dim;
};

// The channels PReLU's slopes may be one per: dim 1 of the batched input, none for [N].
int64_t prelu_channels(const Shape& per_example) { return per_example.empty() ? 1 : per_example[0]; }

// Softmax and LogSoftmax: `dim` must name a feature dimension of the batched input.
std::vector<Shape> softmax_shape(const graph::ShapeContext& c, const SoftmaxParams& p) {
  const int64_t rank = int64_t(one_input(c).size()) + 1;
  const int64_t d = p.dim < 0 ? p.dim + rank : p.dim;
  if (d <= 0 || d >= rank)
    fail("", c.node.label() + ": dim " + std::to_string(p.dim) + " is not a feature dimension of " +
                 batched(one_input(c)) + (d == 0 ? " (0 is the batch; -1 is the last feature dimension)" : ""));
  return {one_input(c)};
}

// Softmax's parameter, LogSoftmax's too.
graph::ParamField<SoftmaxParams> softmax_dim(const char* what) {
  return graph::param("dim", "Dimension", &SoftmaxParams::dim, -1, -8, 8,
                      std::string("The dimension ") + what +
                          " along, counting the batch as 0; negative counts from the end.");
}

// x·f(x) in ONNX, f being the nodes `inner` emits from x into the tensor it returns (SiLU,
// Mish and Hardswish, which opset 13 lacks).
void onnx_times_input(const OnnxContext& c, const std::function<std::string(const std::string& x)>& inner) {
  c.out.add_node("Mul", {c.input_names[0], inner(c.input_names[0])}, c.output_names);
}

// ONNX's HardSigmoid max(0, min(1, alpha·x + beta)) with PyTorch's alpha = 1/6, beta = 1/2.
const OnnxAttributes kHardSigmoid{{"alpha", 1.f / 6.f}, {"beta", 0.5f}};

}  // namespace

void add_activation_layers(Registrar& r) {
  {
    auto t = activation("ReLU", "ReLU", "max(x, 0).");
    t.build = plain<nn::ReLU>;
    t.onnx = onnx_op("Relu");
    t.pytorch = module_rule("nn.ReLU()");
    t.cpp = module_rule("nn::ReLU()");
    r.add(std::move(t));
  }
  {
    using P = LeakyReLUParams;
    auto t = activation<P>("LeakyReLU", "Leaky ReLU", "x for x > 0, negative_slope·x otherwise.");
    t.params = {graph::param("negative_slope", "Negative slope", &P::negative_slope, 0.01, 0, 1,
                             "The slope for negative inputs.")};
    t.build = [](const BuildContext&, const P& p) {
      return single(std::make_shared<nn::LeakyReLU>(float(p.negative_slope)));
    };
    t.onnx = [](const OnnxContext& c, const P& p) { onnx_op("LeakyRelu", {{"alpha", float(p.negative_slope)}})(c); };
    t.pytorch = [](const CodeContext& c, const P& p) {
      module_call(c, "nn.LeakyReLU(" + py(p.negative_slope) + ")");
    };
    t.cpp = [](const CodeContext& c, const P& p) { module_call(c, "nn::LeakyReLU(" + cpp(p.negative_slope) + ")"); };
    r.add(std::move(t));
  }
  {
    using P = PReLUParams;
    auto t = activation<P>("PReLU", "Parametric ReLU",
                           "x for x > 0, a·x otherwise, with the slope a learned (one, or one per channel).");
    t.params = {graph::param("num_parameters", "Slopes", &P::num_parameters, 1, 1, graph::kBig,
                             "The slopes learned: 1 shared by every channel, or the channel count (the input's "
                             "dimension 1) for one per channel. Each starts at 0.25.")};
    t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
      const Shape& s = one_input(c);
      const int64_t channels = prelu_channels(s);
      if (p.num_parameters != 1 && p.num_parameters != channels)
        fail("input", c.node.label() + " learns " + std::to_string(p.num_parameters) +
                          " slopes, one per channel, but receives " + batched(s) + from(c, 0) +
                          (s.empty() ? ", which has no channel dimension"
                                     : ", whose dimension 1 has " + std::to_string(channels) + " channels") +
                          " (set num_parameters to 1" + (channels > 1 ? " or " + std::to_string(channels) : "") +
                          ")");
      return {s};
    };
    t.parameter_count = [](const P& p, const std::vector<Shape>&) { return double(p.num_parameters); };
    t.build = [](const BuildContext&, const P& p) { return single(std::make_shared<nn::PReLU>(p.num_parameters)); };
    // ONNX's slope broadcasts from the right: [C] becomes [C, 1, ..., 1] to sit on dim 1.
    t.onnx = [](const OnnxContext& c, const P& p) {
      const std::string weight = c.node.id + ".weight";
      Shape s(c.inputs.at(0).empty() || p.num_parameters == 1 ? 1 : c.inputs.at(0).size(), 1);
      s[0] = p.num_parameters;
      c.out.add_initializer(c.name("slope"), c.out.weights(weight).reshape(s));
      c.out.add_node("PRelu", {c.input_names[0], c.name("slope")}, c.output_names);
    };
    t.pytorch = [](const CodeContext& c, const P& p) {
      module_call(c, "nn.PReLU(" + std::to_string(p.num_parameters) + ")");
    };
    t.cpp = [](const CodeContext& c, const P& p) {
      module_call(c, "nn::PReLU(" + std::to_string(p.num_parameters) + ")");
    };
    r.add(std::move(t));
  }
  {
    using P = EluParams;
    auto t = activation<P>("ELU", "ELU", "x for x > 0, alpha·(e^x − 1) otherwise: the exponential linear unit.");
    t.params = {graph::param("alpha", "Alpha", &P::alpha, 1.0, 0, 10,
                             "The value approached for very negative inputs is −alpha.")};
    t.build = [](const BuildContext&, const P& p) { return single(std::make_shared<nn::ELU>(float(p.alpha))); };
    t.onnx = [](const OnnxContext& c, const P& p) { onnx_op("Elu", {{"alpha", float(p.alpha)}})(c); };
    t.pytorch = [](const CodeContext& c, const P& p) { module_call(c, "nn.ELU(" + py(p.alpha) + ")"); };
    t.cpp = [](const CodeContext& c, const P& p) { module_call(c, "nn::ELU(" + cpp(p.alpha) + ")"); };
    r.add(std::move(t));
  }
  {
    auto t = activation("SELU", "SELU",
                        "scale·ELU(x) with the fixed alpha ≈ 1.6733 and scale ≈ 1.0507 of self-normalising networks.");
    t.build = plain<nn::SELU>;
    // ONNX's defaults are these constants rounded differently: given as core's floats.
    t.onnx = onnx_op("Selu", {{"alpha", 1.6732632423543772848170429916717f},
                              {"gamma", 1.0507009873554804934193349852946f}});
    t.pytorch = module_rule("nn.SELU()");
    t.cpp = module_rule("nn::SELU()");
    r.add(std::move(t));
  }
  {
    auto t = activation("Sigmoid", "Sigmoid", "1 / (1 + e^-x).");
    t.build = plain<nn::Sigmoid>;
    t.onnx = onnx_op("Sigmoid");
    t.pytorch = module_rule("nn.Sigmoid()");
    t.cpp = module_rule("nn::Sigmoid()");
    r.add(std::move(t));
  }
  {
    auto t = activation("Tanh", "Tanh", "Hyperbolic tangent.");
    t.build = plain<nn::Tanh>;
    t.onnx = onnx_op("Tanh");
    t.pytorch = module_rule("nn.Tanh()");
    t.cpp = module_rule("nn::Tanh()");
    r.add(std::move(t));
  }
  {
    auto t = activation("GELU", "GELU", "x·Φ(x), the Gaussian error linear unit.");
    t.build = plain<nn::GELU>;
    // The exact (erf) GELU as core computes it, (0.5·x)·(1 + erf(x·(1/√2))): opset 13 has no Gelu.
    t.onnx = [](const OnnxContext& c, const NoParams&) {
      const std::string& x = c.input_names[0];
      c.out.add_initializer(c.name("half"), full({}, 0.5f));
      c.out.add_initializer(c.name("one"), full({}, 1.f));
      c.out.add_initializer(c.name("inv_sqrt2"), full({}, float(M_SQRT1_2)));
      c.out.add_node("Mul", {x, c.name("half")}, {c.name("half_x")});
      c.out.add_node("Mul", {x, c.name("inv_sqrt2")}, {c.name("scaled")});
      c.out.add_node("Erf", {c.name("scaled")}, {c.name("erf")});
      c.out.add_node("Add", {c.name("erf"), c.name("one")}, {c.name("one_plus_erf")});
      c.out.add_node("Mul", {c.name("half_x"), c.name("one_plus_erf")}, c.output_names);
    };
    t.pytorch = module_rule("nn.GELU()");  // the exact (erf) one, as core computes it
    t.cpp = module_rule("nn::GELU()");
    r.add(std::move(t));
  }
  {
    auto t = activation("SiLU", "SiLU (swish)", "x·σ(x), the sigmoid linear unit.");
    t.build = plain<nn::SiLU>;
    t.onnx = [](const OnnxContext& c, const NoParams&) {
      onnx_times_input(c, [&](const std::string& x) {
        c.out.add_node("Sigmoid", {x}, {c.name("sigmoid")});
        return c.name("sigmoid");
      });
    };
    t.pytorch = module_rule("nn.SiLU()");
    t.cpp = module_rule("nn::SiLU()");
    r.add(std::move(t));
  }
  {
    auto t = activation("Mish", "Mish", "x·tanh(softplus(x)).");
    t.build = plain<nn::Mish>;
    t.onnx = [](const OnnxContext& c, const NoParams&) {
      onnx_times_input(c, [&](const std::string& x) {
        c.out.add_node("Softplus", {x}, {c.name("softplus")});
        c.out.add_node("Tanh", {c.name("softplus")}, {c.name("tanh")});
        return c.name("tanh");
      });
    };
    t.pytorch = module_rule("nn.Mish()");
    t.cpp = module_rule("nn::Mish()");
    r.add(std::move(t));
  }
  {
    using P = SoftplusParams;
    auto t = activation<P>("Softplus", "Softplus",
                           "log(1 + e^(beta·x)) / beta, a smooth ReLU; x itself where beta·x > threshold.");
    t.params = {graph::param("beta", "Beta", &P::beta, 1.0, 0.01, 100, "The sharpness: larger is closer to ReLU."),
                graph::param("threshold", "Threshold", &P::threshold, 20.0, 0, 100,
                             "Above this beta·x the output is x itself (numerically the same, without overflow).")};
    t.build = [](const BuildContext&, const P& p) {
      return single(std::make_shared<nn::Softplus>(float(p.beta), float(p.threshold)));
    };
    // ONNX's Softplus is log(1 + e^x) everywhere: the same within float rounding for the defaults
    // (e^-20 is below it), else composed with the threshold as core computes it.
    t.onnx = [](const OnnxContext& c, const P& p) {
      if (p.beta == 1.0 && p.threshold == 20.0) return onnx_op("Softplus")(c);
      const std::string& x = c.input_names[0];
      c.out.add_initializer(c.name("beta"), full({}, float(p.beta)));
      c.out.add_initializer(c.name("threshold"), full({}, float(p.threshold)));
      c.out.add_node("Mul", {x, c.name("beta")}, {c.name("beta_x")});
      c.out.add_node("Softplus", {c.name("beta_x")}, {c.name("softplus")});
      c.out.add_node("Div", {c.name("softplus"), c.name("beta")}, {c.name("smooth")});
      c.out.add_node("Greater", {c.name("beta_x"), c.name("threshold")}, {c.name("linear")});
      c.out.add_node("Where", {c.name("linear"), x, c.name("smooth")}, c.output_names);
    };
    t.pytorch = [](const CodeContext& c, const P& p) {
      module_call(c, "nn.Softplus(" + py(p.beta) + ", " + py(p.threshold) + ")");
    };
    t.cpp = [](const CodeContext& c, const P& p) {
      module_call(c, "nn::Softplus(" + cpp(p.beta) + ", " + cpp(p.threshold) + ")");
    };
    r.add(std::move(t));
  }
  {
    auto t = activation("Hardswish", "Hard swish", "x·relu6(x + 3)/6, a cheap SiLU (MobileNetV3).");
    t.build = plain<nn::Hardswish>;
    t.onnx = [](const OnnxContext& c, const NoParams&) {
      onnx_times_input(c, [&](const std::string& x) {
        c.out.add_node("HardSigmoid", {x}, {c.name("hardsigmoid")}, kHardSigmoid);
        return c.name("hardsigmoid");
      });
    };
    t.pytorch = module_rule("nn.Hardswish()");
    t.cpp = module_rule("nn::Hardswish()");
    r.add(std::move(t));
  }
  {
    auto t = activation("Hardsigmoid", "Hard sigmoid", "relu6(x + 3)/6, a cheap sigmoid: 0 below −3, 1 above 3.");
    t.build = plain<nn::Hardsigmoid>;
    t.onnx = onnx_op("HardSigmoid", kHardSigmoid);
    t.pytorch = module_rule("nn.Hardsigmoid()");
    t.cpp = module_rule("nn::Hardsigmoid()");
    r.add(std::move(t));
  }
  {
    using P = SoftmaxParams;
    auto t = activation<P>("Softmax", "Softmax", "Turns scores into probabilities along a dimension.");
    t.params = {softmax_dim("the probabilities sum to 1")};
    t.shape = softmax_shape;
    t.build = [](const BuildContext&, const P& p) { return single(std::make_shared<nn::Softmax>(p.dim)); };
    t.onnx = [](const OnnxContext& c, const P& p) { onnx_op("Softmax", {{"axis", p.dim}})(c); };
    t.pytorch = [](const CodeContext& c, const P& p) {
      module_call(c, "nn.Softmax(dim=" + std::to_string(p.dim) + ")");
    };
    t.cpp = [](const CodeContext& c, const P& p) { module_call(c, "nn::Softmax(" + std::to_string(p.dim) + ")"); };
    r.add(std::move(t));
  }
  {
    using P = SoftmaxParams;
    auto t = activation<P>("LogSoftmax", "Log-softmax",
                           "The logarithm of Softmax along a dimension, computed stably (for NLL).");
    t.params = {softmax_dim("the log-probabilities are normalised")};
    t.shape = softmax_shape;
    t.build = [](const BuildContext&, const P& p) { return single(std::make_shared<nn::LogSoftmax>(p.dim)); };
    t.onnx = [](const OnnxContext& c, const P& p) { onnx_op("LogSoftmax", {{"axis", p.dim}})(c); };
    t.pytorch = [](const CodeContext& c, const P& p) {
      module_call(c, "nn.LogSoftmax(dim=" + std::to_string(p.dim) + ")");
    };
    t.cpp = [](const CodeContext& c, const P& p) { module_call(c, "nn::LogSoftmax(" + std::to_string(p.dim) + ")"); };
    r.add(std::move(t));
  }
  {
    auto t = activation("Identity", "Identity", "Passes its input on unchanged: a placeholder.");
    t.build = plain<nn::Identity>;
    t.onnx = onnx_op("Identity");
    t.pytorch = module_rule("nn.Identity()");
    t.cpp = module_rule("nn::Identity()");
    r.add(std::move(t));
  }
}

}  // namespace plexus::layers
