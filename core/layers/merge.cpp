// The Merge family: nodes that join several inputs into one (residual sums, concatenation).
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "ops/ops.h"

namespace plexus::layers {
namespace {

void add_add(Registrar& r) {
  Layer<> t;
  t.name = "Add";
  t.category = "Merge";
  t.display_name = "Add";
  t.description = "Sums its inputs, e.g. for a residual connection.";
  t.inputs = {{"inputs", "two or more tensors of the same shape", true, true}};
  t.outputs = {{"output", "their shape"}};
  t.shape = [](const graph::ShapeContext& c, const NoParams&) -> std::vector<Shape> {
    if (c.inputs.size() < 2) fail("inputs", c.node.label() + " needs at least two inputs, it has " + std::to_string(c.inputs.size()));
    for (size_t i = 1; i < c.inputs.size(); ++i)
      if (c.inputs[i] != c.inputs[0])
        fail("inputs", c.node.label() + " adds " + batched(c.inputs[0]) + from(c, 0) + " and " +
                           batched(c.inputs[i]) + from(c, i) + ": the shapes must be equal");
    return {c.inputs[0]};
  };
  t.build = [](const BuildContext&, const NoParams&) {
    return BuiltNode{nullptr, [](const std::vector<Tensor>& in) {
                       Tensor s = in.at(0);
                       for (size_t i = 1; i < in.size(); ++i) s = s + in[i];
                       return s;
                     }};
  };
  t.onnx = [](const OnnxContext& c, const NoParams&) {  // left to right, as the sum above
    std::string sum = c.input_names[0];
    for (size_t i = 1; i < c.input_names.size(); ++i) {
      const std::string next = i + 1 == c.input_names.size() ? c.output_names[0] : c.name("sum" + std::to_string(i));
      c.out.add_node("Add", {sum, c.input_names[i]}, {next});
      sum = next;
    }
  };
  r.add(std::move(t));
}

struct ConcatParams {
  int64_t dim;
};

void add_concat(Registrar& r) {
  using P = ConcatParams;
  Layer<P> t;
  t.name = "Concat";
  t.category = "Merge";
  t.display_name = "Concatenate";
  t.description = "Joins its inputs along a dimension.";
  t.inputs = {{"inputs", "tensors equal in every dimension but dim", true, true}};
  t.outputs = {{"output", "the joined tensor"}};
  t.params = {
      graph::param("dim", "Dimension", &P::dim, 1, 1, 8, "The dimension to join along, counting the batch as 0.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    if (c.inputs.empty()) fail("inputs", c.node.label() + " has no inputs");
    const int64_t d = p.dim - 1;  // per-example index
    Shape out = c.inputs[0];
    if (d >= int64_t(out.size()))
      fail("", c.node.label() + ": dim " + std::to_string(d + 1) + " does not exist in " + batched(out) + from(c, 0));
    for (size_t i = 1; i < c.inputs.size(); ++i) {
      Shape a = c.inputs[i], b = c.inputs[0];
      bool ok = a.size() == b.size();
      if (ok) {
        a[size_t(d)] = b[size_t(d)] = 0;
        ok = a == b;
      }
      if (!ok)
        fail("inputs", c.node.label() + " joins " + batched(c.inputs[0]) + from(c, 0) + " and " +
                           batched(c.inputs[i]) + from(c, i) + ": they must agree in every dimension except dim " +
                           std::to_string(d + 1));
      if (__builtin_add_overflow(out[size_t(d)], c.inputs[i][size_t(d)], &out[size_t(d)]))
        fail("inputs", c.node.label() + ": joining its inputs gives too many values per example");
    }
    return {out};
  };
  t.build = [](const BuildContext&, const P& p) {
    return BuiltNode{nullptr, [dim = p.dim](const std::vector<Tensor>& in) { return concat(in, dim); }};
  };
  t.onnx = [](const OnnxContext& c, const P& p) { onnx_op("Concat", {{"axis", p.dim}})(c); };
  r.add(std::move(t));
}

}  // namespace

void add_merge_layers(Registrar& r) {
  add_add(r);
  add_concat(r);
}

}  // namespace plexus::layers
