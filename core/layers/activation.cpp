// The Activation family: elementwise functions (and Softmax), each the input's shape out.
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

struct SoftmaxParams {
  int64_t dim;
};

}  // namespace

void add_activation_layers(Registrar& r) {
  {
    auto t = activation("ReLU", "ReLU", "max(x, 0).");
    t.build = plain<nn::ReLU>;
    t.onnx = onnx_op("Relu");
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
    r.add(std::move(t));
  }
  {
    auto t = activation("Sigmoid", "Sigmoid", "1 / (1 + e^-x).");
    t.build = plain<nn::Sigmoid>;
    t.onnx = onnx_op("Sigmoid");
    r.add(std::move(t));
  }
  {
    auto t = activation("Tanh", "Tanh", "Hyperbolic tangent.");
    t.build = plain<nn::Tanh>;
    t.onnx = onnx_op("Tanh");
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
    r.add(std::move(t));
  }
  {
    using P = SoftmaxParams;
    auto t = activation<P>("Softmax", "Softmax", "Turns scores into probabilities along a dimension.");
    t.params = {graph::param(
        "dim", "Dimension", &P::dim, -1, -8, 8,
        "The dimension the probabilities sum to 1 along, counting the batch as 0; negative counts from the end.")};
    t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
      const int64_t rank = int64_t(one_input(c).size()) + 1;
      const int64_t d = p.dim < 0 ? p.dim + rank : p.dim;
      if (d <= 0 || d >= rank)
        fail("", c.node.label() + ": dim " + std::to_string(p.dim) + " is not a feature dimension of " +
                     batched(one_input(c)) + (d == 0 ? " (0 is the batch; -1 is the last feature dimension)" : ""));
      return {one_input(c)};
    };
    t.build = [](const BuildContext&, const P& p) { return single(std::make_shared<nn::Softmax>(p.dim)); };
    t.onnx = [](const OnnxContext& c, const P& p) { onnx_op("Softmax", {{"axis", p.dim}})(c); };
    r.add(std::move(t));
  }
}

}  // namespace plexus::layers
