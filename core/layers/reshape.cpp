// The reshaping layers: Flatten, Reshape, Permute, Squeeze and Unsqueeze give each example a new
// shape or order of dimensions, values unchanged. Dimensions count the batch as 0, as in PyTorch
// code written for batched tensors (x.permute(0, 2, 1), x.unsqueeze(1)); the batch stays first.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"
#include "ops/ops.h"

namespace plexus::layers {
namespace {

// A Reshape to the inferred output shape, with 0 ("as in the input") for the batch.
void onnx_reshape_to_output(const OnnxContext& c) {
  std::vector<int64_t> shape{0};
  shape.insert(shape.end(), c.outputs[0].begin(), c.outputs[0].end());
  c.out.add_initializer(c.name("shape"), shape);
  c.out.add_node("Reshape", {c.input_names[0], c.name("shape")}, c.output_names);
}

// The same in Python: `x.reshape(-1, <output shape>)`, the batch first.
void pytorch_reshape_to_output(const CodeContext& c) {
  std::string dims = "-1";
  for (int64_t d : c.outputs[0]) dims += ", " + std::to_string(d);
  c.assign(c.input() + ".reshape(" + dims + ")");
}

// And in C++: `reshape(x, {x.shape().at(0), <output shape>})`.
void cpp_reshape_to_output(const CodeContext& c) {
  std::string dims = c.input() + ".shape().at(0)";
  for (int64_t d : c.outputs[0]) dims += ", " + std::to_string(d);
  c.assign("reshape(" + c.input() + ", {" + dims + "})");
}

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
  t.pytorch = [](const CodeContext& c, const NoParams&) {
    if (!c.inputs[0].empty()) return module_call(c, "nn.Flatten()");
    c.assign(c.input() + ".reshape(-1, 1)");  // [N] -> [N, 1], as nn.Flatten cannot
  };
  t.cpp = [](const CodeContext& c, const NoParams&) {
    if (!c.inputs[0].empty()) return module_call(c, "nn::Flatten()");
    c.assign("reshape(" + c.input() + ", {" + c.input() + ".shape().at(0), 1})");
  };
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
  t.onnx = [](const OnnxContext& c, const P&) { onnx_reshape_to_output(c); };
  t.pytorch = [](const CodeContext& c, const P&) { pytorch_reshape_to_output(c); };
  t.cpp = [](const CodeContext& c, const P&) { cpp_reshape_to_output(c); };
  r.add(std::move(t));
}

struct PermuteParams {
  std::vector<int64_t> dims;
};

void add_permute(Registrar& r) {
  using P = PermuteParams;
  Layer<P> t;
  t.name = "Permute";
  t.category = "Layers";
  t.display_name = "Permute";
  t.description = "Reorders the dimensions, e.g. [N, T, E] to [N, E, T] for a 1-D convolution over steps.";
  t.inputs = {{"input", "any shape with as many dimensions as dims has entries"}};
  t.outputs = {{"output", "the input's dimensions in the order of dims"}};
  t.params = {graph::param("dims", "Order", &P::dims, {0, 2, 1}, 0, 8,
                           "The input's dimensions in their new order, counting the batch as 0, which stays first.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    const Shape& in = one_input(c);
    const std::string dims = graph::to_string(graph::ParamValue(p.dims));
    if (p.dims.size() != in.size() + 1)
      fail("input", c.node.label() + ": dims " + dims + " orders " + std::to_string(p.dims.size()) + " dimensions, but " +
                        batched(in) + from(c, 0) + " has " + std::to_string(in.size() + 1));
    if (p.dims[0] != 0) fail("", c.node.label() + ": dims " + dims + " must start with 0: the batch stays first");
    std::vector<bool> seen(p.dims.size());
    Shape out;
    for (size_t i = 1; i < p.dims.size(); ++i) {
      const int64_t d = p.dims[i];
      if (d < 1 || d > int64_t(in.size()) || seen[size_t(d)])
        fail("", c.node.label() + ": dims " + dims + " must name each of 0 to " + std::to_string(in.size()) + " once");
      seen[size_t(d)] = true;
      out.push_back(in[size_t(d - 1)]);
    }
    return {out};
  };
  t.build = [](const BuildContext&, const P& p) {
    return BuiltNode{nullptr, [dims = p.dims](const std::vector<Tensor>& in) { return contiguous(permute(in.at(0), dims)); }};
  };
  t.onnx = [](const OnnxContext& c, const P& p) { onnx_op("Transpose", {{"perm", p.dims}})(c); };
  t.pytorch = [](const CodeContext& c, const P& p) { c.assign(c.input() + ".permute" + py(p.dims)); };
  t.cpp = [](const CodeContext& c, const P& p) { c.assign("permute(" + c.input() + ", " + cpp(p.dims) + ")"); };
  r.add(std::move(t));
}

struct DimParams {
  int64_t dim;
};

void add_squeeze(Registrar& r) {
  using P = DimParams;
  Layer<P> t;
  t.name = "Squeeze";
  t.category = "Layers";
  t.display_name = "Squeeze";
  t.description = "Removes a dimension of size 1, e.g. [N, 1, T] to [N, T].";
  t.inputs = {{"input", "a shape whose dim is 1"}};
  t.outputs = {{"output", "the input's shape without dim"}};
  t.params = {graph::param("dim", "Dimension", &P::dim, 1, 1, 8,
                           "The dimension to remove, counting the batch as 0; it must have size 1.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    Shape out = one_input(c);
    if (p.dim > int64_t(out.size()))
      fail("input", c.node.label() + ": dim " + std::to_string(p.dim) + " does not exist in " + batched(out) + from(c, 0));
    if (out[size_t(p.dim - 1)] != 1)
      fail("input", c.node.label() + ": dim " + std::to_string(p.dim) + " of " + batched(out) + from(c, 0) + " is " +
                        std::to_string(out[size_t(p.dim - 1)]) + ", and only a dimension of size 1 can be removed");
    out.erase(out.begin() + (p.dim - 1));
    return {out};
  };
  t.build = [](const BuildContext&, const P& p) {
    return BuiltNode{nullptr, [dim = p.dim](const std::vector<Tensor>& in) { return squeeze(in.at(0), dim); }};
  };
  // ONNX's Squeeze and Unsqueeze take their axes as an input from opset 13: a Reshape is simpler.
  t.onnx = [](const OnnxContext& c, const P&) { onnx_reshape_to_output(c); };
  t.pytorch = [](const CodeContext& c, const P&) { pytorch_reshape_to_output(c); };
  t.cpp = [](const CodeContext& c, const P&) { cpp_reshape_to_output(c); };
  r.add(std::move(t));
}

void add_unsqueeze(Registrar& r) {
  using P = DimParams;
  Layer<P> t;
  t.name = "Unsqueeze";
  t.category = "Layers";
  t.display_name = "Unsqueeze";
  t.description = "Inserts a dimension of size 1, e.g. [N, T] to [N, 1, T].";
  t.inputs = {{"input", "any shape"}};
  t.outputs = {{"output", "the input's shape with a 1 at dim"}};
  t.params = {graph::param("dim", "Dimension", &P::dim, 1, 1, 8,
                           "Where the new dimension goes, counting the batch as 0.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    Shape out = one_input(c);
    if (p.dim > int64_t(out.size()) + 1)
      fail("input", c.node.label() + ": dim " + std::to_string(p.dim) + " is past the end of " + batched(out) + from(c, 0) +
                        " (at most " + std::to_string(out.size() + 1) + ")");
    out.insert(out.begin() + (p.dim - 1), 1);
    return {out};
  };
  t.build = [](const BuildContext&, const P& p) {
    return BuiltNode{nullptr, [dim = p.dim](const std::vector<Tensor>& in) { return unsqueeze(in.at(0), dim); }};
  };
  t.onnx = [](const OnnxContext& c, const P&) { onnx_reshape_to_output(c); };
  t.pytorch = [](const CodeContext& c, const P&) { pytorch_reshape_to_output(c); };
  t.cpp = [](const CodeContext& c, const P&) { cpp_reshape_to_output(c); };
  r.add(std::move(t));
}

}  // namespace

void add_reshape_layers(Registrar& r) {
  add_flatten(r);
  add_reshape(r);
  add_permute(r);
  add_squeeze(r);
  add_unsqueeze(r);
}

}  // namespace plexus::layers
