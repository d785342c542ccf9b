// The reductions: Mean and Sum over chosen dimensions of each example, as torch.mean(x, dim,
// keepdim) and torch.sum do (e.g. a global average over [H, W], or a sequence summed over its
// steps). Dimensions count the batch as 0, which is never reduced.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "ops/ops.h"

namespace plexus::layers {
namespace {

struct ReduceParams {
  std::vector<int64_t> dim;
  bool keepdim;
};

// The per-example shape left after reducing p.dim: those dims removed, or kept as 1s.
Shape reduced_shape(const graph::ShapeContext& c, const ReduceParams& p) {
  const Shape& in = one_input(c);
  const std::string dims = graph::to_string(graph::ParamValue(p.dim));
  if (p.dim.empty()) fail("", c.node.label() + ": dim names no dimension to reduce");
  std::vector<bool> reduce(in.size());
  for (int64_t d : p.dim) {
    if (d < 1 || d > int64_t(in.size()))
      fail("input", c.node.label() + ": dim " + dims + " names dimension " + std::to_string(d) + ", which " + batched(in) +
                        from(c, 0) + " does not have (1 to " + std::to_string(in.size()) + "; the batch, 0, is never reduced)");
    if (reduce[size_t(d - 1)]) fail("", c.node.label() + ": dim " + dims + " names " + std::to_string(d) + " twice");
    reduce[size_t(d - 1)] = true;
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!reduce[i]) out.push_back(in[i]);
    else if (p.keepdim) out.push_back(1);
  return out;
}

using ReduceFn = Tensor (*)(const Tensor&, const std::vector<int64_t>&, bool);

// `onnx_axes_input`: ONNX's op takes the axes as an input (ReduceSum in opset 13), not as an
// attribute (ReduceMean).
void add_reduction(Registrar& r, const char* name, const char* display, const char* description, ReduceFn reduce,
                   const char* onnx_op_type, bool onnx_axes_input) {
  using P = ReduceParams;
  Layer<P> t;
  t.name = name;
  t.category = "Layers";
  t.display_name = display;
  t.description = description;
  t.inputs = {{"input", "any shape with the dims to reduce"}};
  t.outputs = {{"output", "the input's shape without dim (or with 1s there, keepdim)"}};
  t.params = {graph::param("dim", "Dimensions", &P::dim, {1}, 1, 8,
                           "The dimensions to reduce, counting the batch as 0 (never reduced)."),
              graph::param("keepdim", "Keep dimensions", &P::keepdim, false,
                           "Keeps each reduced dimension as a 1, so the output broadcasts against the input.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> { return {reduced_shape(c, p)}; };
  t.build = [reduce](const BuildContext&, const P& p) {
    return BuiltNode{nullptr, [reduce, p](const std::vector<Tensor>& in) { return reduce(in.at(0), p.dim, p.keepdim); }};
  };
  // torch.mean and torch.sum over the same (batched) dims.
  t.pytorch = [method = std::string(name) == "Mean" ? "mean" : "sum"](const CodeContext& c, const P& p) {
    c.assign(c.input() + "." + method + "(dim=" + py(p.dim) + py_kwarg("keepdim", py(p.keepdim), "False") + ")");
  };
  t.cpp = [method = std::string(name) == "Mean" ? "mean" : "sum"](const CodeContext& c, const P& p) {
    c.assign(std::string(method) + "(" + c.input() + ", " + cpp(p.dim) + ", " + cpp(p.keepdim) + ")");
  };
  t.onnx = [op = std::string(onnx_op_type), onnx_axes_input](const OnnxContext& c, const P& p) {
    const OnnxAttributes keep{{"keepdims", int64_t(p.keepdim)}};
    if (onnx_axes_input) {
      c.out.add_initializer(c.name("axes"), p.dim);
      c.out.add_node(op, {c.input_names[0], c.name("axes")}, c.output_names, keep);
    } else {
      OnnxAttributes attributes = keep;
      attributes.emplace_back("axes", p.dim);
      c.out.add_node(op, c.input_names, c.output_names, attributes);
    }
  };
  r.add(std::move(t));
}

}  // namespace

void add_reduce_layers(Registrar& r) {
  add_reduction(r, "Mean", "Mean", "Averages over the chosen dimensions, e.g. [2, 3] of [C, H, W] for a global average pool.",
                [](const Tensor& x, const std::vector<int64_t>& d, bool keep) { return mean(x, d, keep); }, "ReduceMean",
                false);
  add_reduction(r, "Sum", "Sum", "Sums over the chosen dimensions.",
                [](const Tensor& x, const std::vector<int64_t>& d, bool keep) { return sum(x, d, keep); }, "ReduceSum",
                true);
}

}  // namespace plexus::layers
