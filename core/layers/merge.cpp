// The Merge family: nodes that join several inputs into one (residual sums, gates, differences,
// concatenation).
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "ops/ops.h"
#include "util/text.h"

namespace plexus::layers {
namespace {

void require_two_or_more(const graph::ShapeContext& c) {
  if (c.inputs.size() < 2) fail("inputs", c.node.label() + " needs at least two inputs, it has " + std::to_string(c.inputs.size()));
}

// A node that combines its inputs left to right: ((in0 ∘ in1) ∘ in2) ∘ ...
template <class Combine>
BuiltNode left_fold(Combine combine) {
  return BuiltNode{nullptr, [combine](const std::vector<Tensor>& in) {
                     Tensor acc = in.at(0);
                     for (size_t i = 1; i < in.size(); ++i) acc = combine(acc, in[i]);
                     return acc;
                   }};
}

// The same fold in ONNX: one binary `op` node per further input, the partial results named
// `partial`1, `partial`2, ..., so that the exported graph computes in Plexus's order.
void onnx_left_fold(const OnnxContext& c, const char* op, const std::string& partial) {
  std::string acc = c.input_names[0];
  for (size_t i = 1; i < c.input_names.size(); ++i) {
    const std::string next = i + 1 == c.input_names.size() ? c.output_names[0] : c.name(partial + std::to_string(i));
    c.out.add_node(op, {acc, c.input_names[i]}, {next});
    acc = next;
  }
}

// The same fold in code, Python's and C++'s alike: `a + b + c` is ((a + b) + c), Plexus' order.
void code_left_fold(const CodeContext& c, const char* op) {
  c.assign(join(c.input_names, std::string(" ") + op + " "));
}

void add_add(Registrar& r) {
  Layer<> t;
  t.name = "Add";
  t.category = "Merge";
  t.display_name = "Add";
  t.description = "Sums its inputs, e.g. for a residual connection.";
  t.inputs = {{"inputs", "two or more tensors of the same shape", true, true}};
  t.outputs = {{"output", "their shape"}};
  t.shape = [](const graph::ShapeContext& c, const NoParams&) -> std::vector<Shape> {
    require_two_or_more(c);
    for (size_t i = 1; i < c.inputs.size(); ++i)
      if (c.inputs[i] != c.inputs[0])
        fail("inputs", c.node.label() + " adds " + batched(c.inputs[0]) + from(c, 0) + " and " +
                           batched(c.inputs[i]) + from(c, i) + ": the shapes must be equal");
    return {c.inputs[0]};
  };
  t.build = [](const BuildContext&, const NoParams&) { return left_fold(std::plus<Tensor>()); };
  t.onnx = [](const OnnxContext& c, const NoParams&) { onnx_left_fold(c, "Add", "sum"); };
  t.pytorch = t.cpp = [](const CodeContext& c, const NoParams&) { code_left_fold(c, "+"); };
  r.add(std::move(t));
}

// Two per-example shapes broadcast as PyTorch does: the same number of dimensions (the batch
// dimension lines up only then), each equal or 1, a 1 repeating to match the other (a gate
// [C, 1, 1] scaling a feature map [C, H, W]). The messages name `a` as `a_text` says and b as
// input `ib`; `verb` words the refusal ("multiplies").
Shape broadcast(const graph::ShapeContext& c, const char* verb, const Shape& a, const std::string& a_text, size_t ib) {
  const Shape& b = c.inputs[ib];
  const auto refuse = [&](const std::string& why) {
    fail("", c.node.label() + " " + verb + " " + a_text + " and " + batched(b) + from(c, ib) + ": " + why);
  };
  if (a.size() != b.size())
    refuse("they must have as many dimensions, each equal or 1 (a Reshape with 1s lets the smaller repeat)");
  Shape out(a.size());
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] != b[d] && a[d] != 1 && b[d] != 1)
      refuse("dimension " + std::to_string(d + 1) + " is " + std::to_string(a[d]) + " against " + std::to_string(b[d]) +
             ", and only equal sizes or 1 broadcast");
    out[d] = a[d] == 1 ? b[d] : a[d];
  }
  return out;
}

void add_mul(Registrar& r) {
  Layer<> t;
  t.name = "Mul";
  t.category = "Merge";
  t.display_name = "Multiply";
  t.description = "Multiplies its inputs elementwise, broadcasting dimensions of size 1, e.g. to gate channels.";
  t.inputs = {{"inputs", "two or more tensors with as many dimensions, each equal or 1", true, true}};
  t.outputs = {{"output", "the broadcast shape"}};
  t.shape = [](const graph::ShapeContext& c, const NoParams&) -> std::vector<Shape> {
    require_two_or_more(c);
    Shape out = c.inputs[0];
    for (size_t i = 1; i < c.inputs.size(); ++i)
      out = broadcast(c, "multiplies", out, i == 1 ? batched(out) + from(c, 0) : batched(out) + " (its inputs before)", i);
    return {out};
  };
  t.build = [](const BuildContext&, const NoParams&) { return left_fold(std::multiplies<Tensor>()); };
  t.onnx = [](const OnnxContext& c, const NoParams&) { onnx_left_fold(c, "Mul", "product"); };
  t.pytorch = t.cpp = [](const CodeContext& c, const NoParams&) { code_left_fold(c, "*"); };
  r.add(std::move(t));
}

void add_sub(Registrar& r) {
  Layer<> t;
  t.name = "Sub";
  t.category = "Merge";
  t.display_name = "Subtract";
  t.description = "input − other, elementwise, broadcasting dimensions of size 1.";
  t.inputs = {{"input", "the tensor subtracted from"}, {"other", "the tensor subtracted: as many dimensions, each equal or 1"}};
  t.outputs = {{"output", "the broadcast shape"}};
  t.shape = [](const graph::ShapeContext& c, const NoParams&) -> std::vector<Shape> {
    return {broadcast(c, "subtracts", c.inputs[0], batched(c.inputs[0]) + from(c, 0), 1)};
  };
  t.build = [](const BuildContext&, const NoParams&) {
    return BuiltNode{nullptr, [](const std::vector<Tensor>& in) { return in.at(0) - in.at(1); }};
  };
  t.onnx = [](const OnnxContext& c, const NoParams&) { onnx_op("Sub")(c); };
  t.pytorch = t.cpp = [](const CodeContext& c, const NoParams&) { code_left_fold(c, "-"); };
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
  t.pytorch = [](const CodeContext& c, const P& p) {
    c.assign("torch.cat([" + join(c.input_names) + "], dim=" + std::to_string(p.dim) + ")");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    c.assign("concat({" + join(c.input_names) + "}, " + std::to_string(p.dim) + ")");
  };
  r.add(std::move(t));
}

}  // namespace

void add_merge_layers(Registrar& r) {
  add_add(r);
  add_mul(r);
  add_sub(r);
  add_concat(r);
}

}  // namespace plexus::layers
