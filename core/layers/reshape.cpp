// The reshaping layers: Flatten and Reshape give each example a new shape, values unchanged.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"
#include "ops/ops.h"

namespace plexus::layers {
namespace {

void add_flatten(Registrar& r) {
  Layer<> t;
  t.name = "Flatten";
  t.category = "Layers";
  t.display_name = "Flatten";
  t.description = "Turns each example into one vector.";
  t.inputs = {{"input", "any shape"}};
  t.outputs = {{"output", "[N, product of the input's dims]"}};
  t.shape = [](const graph::ShapeContext& c, const NoParams&) -> std::vector<Shape> { return {{numel(one_input(c))}}; };
  t.build = [](const BuildContext& b, const NoParams&) {
    if (!b.inputs.at(0).empty()) return single(std::make_shared<nn::Flatten>());
    // One value per example arrives batched as [N], with no dim 1 for nn::Flatten to start at.
    return BuiltNode{nullptr,
                     [](const std::vector<Tensor>& in) { return reshape(in.at(0), {in.at(0).shape().at(0), 1}); }};
  };
  t.onnx = onnx_op("Flatten", {{"axis", int64_t(1)}});  // [N] becomes [N, 1] too
  r.add(std::move(t));
}

struct ReshapeParams {
  std::vector<int64_t> shape;
};

void add_reshape(Registrar& r) {
  using P = ReshapeParams;
  Layer<P> t;
  t.name = "Reshape";
  t.category = "Layers";
  t.display_name = "Reshape";
  t.description = "Gives each example a new shape with the same number of values.";
  t.inputs = {{"input", "any shape"}};
  t.outputs = {{"output", "[N, shape...]"}};
  t.params = {graph::param("shape", "Shape", &P::shape, {-1}, -1, graph::kBig,
                           "The shape of one example; one entry may be -1 (inferred from the others).")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    const std::vector<int64_t>& want = p.shape;
    const int64_t n = numel(one_input(c));
    int64_t known = 1, unknown = 0;
    for (int64_t d : want) {
      if (d == -1) ++unknown;
      else if (d == 0) fail("", c.node.label() + ": shape entries must be positive or -1");
      else if (__builtin_mul_overflow(known, d, &known))
        fail("input", c.node.label() + " cannot reshape " + batched(one_input(c)) + " (" + std::to_string(n) +
                          " values)" + from(c, 0) + " to " + batched(Shape(want.begin(), want.end())) +
                          " (more than 2^63 values)");
    }
    if (unknown > 1)
      fail("", c.node.label() + ": only one shape entry may be -1 (inferred), got " + graph::to_string(graph::ParamValue(want)));
    Shape out(want.begin(), want.end());
    if (unknown) {
      if (n % known) fail("input", c.node.label() + " cannot reshape " + batched(one_input(c)) + from(c, 0) + " to " +
                                       batched(out));
      for (int64_t& d : out)
        if (d == -1) d = n / known;
    } else if (known != n) {
      fail("input", c.node.label() + " cannot reshape " + batched(one_input(c)) + " (" + std::to_string(n) +
                        " values)" + from(c, 0) + " to " + batched(out) + " (" + std::to_string(known) + " values)");
    }
    return {out};
  };
  t.build = [](const BuildContext&, const P& p) {
    return BuiltNode{nullptr, [s = p.shape](const std::vector<Tensor>& in) {
                       Shape full{in.at(0).shape().at(0)};
                       full.insert(full.end(), s.begin(), s.end());
                       return reshape(in.at(0), full);
                     }};
  };
  // The inferred shape, with 0 ("as in the input") for the batch.
  t.onnx = [](const OnnxContext& c, const P&) {
    std::vector<int64_t> shape{0};
    shape.insert(shape.end(), c.outputs[0].begin(), c.outputs[0].end());
    c.out.add_initializer(c.name("shape"), shape);
    c.out.add_node("Reshape", {c.input_names[0], c.name("shape")}, c.output_names);
  };
  r.add(std::move(t));
}

}  // namespace

void add_reshape_layers(Registrar& r) {
  add_flatten(r);
  add_reshape(r);
}

}  // namespace plexus::layers
