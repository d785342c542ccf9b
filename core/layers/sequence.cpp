// The sequence tools: each padded example's length, and pooling a sequence [N, T, E] to one
// vector [N, E] (a sentence or name classifier's last step before its Linear), over each
// example's own length when its lengths are wired.
#include <limits>

#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/sequence.h"

namespace plexus::layers {
namespace {

void add_sequence_lengths(Registrar& r) {
  Layer<> t = named("SequenceLengths", "Recurrent", "Sequence lengths",
                    "The length of each example of token ids padded with id 0 at its end (as labelled texts are): its "
                    "count of non-zero ids, for Sequence pooling to skip the padding.");
  t.inputs = {{"input", "[N, T] token ids, padded with 0 at the end"}};
  t.outputs = {{"output", "[N]: each example's length"}};
  t.shape = [](const graph::ShapeContext& c, const NoParams&) -> std::vector<Shape> {
    require_rank(c, 1, "[N, T] (token ids padded with 0, such as a labelled-texts dataset's inputs)");
    return {{}};
  };
  t.build = [](const BuildContext&, const NoParams&) {
    return BuiltNode{nullptr, [](const std::vector<Tensor>& in) { return nn::functional::sequence_lengths(in.at(0)); }};
  };
  // Not(Equal(ids, 0)) counted along T.
  t.onnx = [](const OnnxContext& c, const NoParams&) {
    c.out.add_initializer(c.name("zero"), full({}, 0.f));
    c.out.add_initializer(c.name("axis"), std::vector<int64_t>{1});
    c.out.add_node("Equal", {c.input_names[0], c.name("zero")}, {c.name("padding")});
    c.out.add_node("Not", {c.name("padding")}, {c.name("token")});
    c.out.add_node("Cast", {c.name("token")}, {c.name("counted")}, {{"to", kOnnxFloat}});
    c.out.add_node("ReduceSum", {c.name("counted"), c.name("axis")}, c.output_names, {{"keepdims", int64_t(0)}});
  };
  t.pytorch = [](const CodeContext& c, const NoParams&) { c.assign("(" + c.input() + " != 0).sum(dim=1).float()"); };
  t.cpp = [](const CodeContext& c, const NoParams&) {
    c.assign("nn::functional::sequence_lengths(" + c.input() + ")");
  };
  r.add(std::move(t));
}

struct SequencePoolParams {
  std::string mode;
};

// The ONNX of nn::functional::sequence_pool with lengths: masks of the positions each example
// has (Less against 0..T-1) and of the examples that have any.
void export_masked_pool(const OnnxContext& c, const std::string& mode) {
  const int64_t time = c.inputs[0][0], features = c.inputs[0][1];
  const std::string& x = c.input_names[0];
  const std::string& lengths = c.input_names[1];
  std::vector<float> positions;
  for (int64_t i = 0; i < time; ++i) positions.push_back(float(i));
  c.out.add_initializer(c.name("positions"), from_vector(positions, {1, time}));
  c.out.add_initializer(c.name("zero"), full({}, 0.f));
  c.out.add_initializer(c.name("one"), full({}, 1.f));
  c.out.add_initializer(c.name("axis1"), std::vector<int64_t>{1});
  c.out.add_initializer(c.name("axis2"), std::vector<int64_t>{2});
  c.out.add_node("Max", {lengths, c.name("zero")}, {c.name("length")});
  c.out.add_node("Unsqueeze", {c.name("length"), c.name("axis1")}, {c.name("length_column")});   // [N, 1]
  c.out.add_node("Less", {c.name("positions"), c.name("length_column")}, {c.name("valid_2d")});  // [N, T]
  c.out.add_node("Unsqueeze", {c.name("valid_2d"), c.name("axis2")}, {c.name("valid")});         // [N, T, 1]
  c.out.add_node("Greater", {c.name("length_column"), c.name("zero")}, {c.name("nonempty")});    // [N, 1]
  if (mode == "mean") {
    c.out.add_node("Where", {c.name("valid"), x, c.name("zero")}, {c.name("kept")});
    c.out.add_node("ReduceSum", {c.name("kept"), c.name("axis1")}, {c.name("total")}, {{"keepdims", int64_t(0)}});
    c.out.add_node("Max", {c.name("length_column"), c.name("one")}, {c.name("count")});
    c.out.add_node("Div", {c.name("total"), c.name("count")}, c.output_names);
    return;
  }
  std::string pooled = c.name("pooled");
  if (mode == "max") {
    c.out.add_initializer(c.name("minus_inf"), full({}, -std::numeric_limits<float>::infinity()));
    c.out.add_node("Where", {c.name("valid"), x, c.name("minus_inf")}, {c.name("kept")});
    c.out.add_node("ReduceMax", {c.name("kept")}, {pooled}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(0)}});
  } else {  // last: GatherElements at max(length - 1, 0), one index per feature
    c.out.add_initializer(c.name("index_shape"), std::vector<int64_t>{1, 1, features});
    c.out.add_node("Sub", {c.name("length_column"), c.name("one")}, {c.name("before")});
    c.out.add_node("Max", {c.name("before"), c.name("zero")}, {c.name("last_float")});
    c.out.add_node("Cast", {c.name("last_float")}, {c.name("last")}, {{"to", kOnnxInt64}});
    c.out.add_node("Unsqueeze", {c.name("last"), c.name("axis2")}, {c.name("last_3d")});  // [N, 1, 1]
    c.out.add_node("Expand", {c.name("last_3d"), c.name("index_shape")}, {c.name("index")});
    c.out.add_node("GatherElements", {x, c.name("index")}, {c.name("gathered")}, {{"axis", int64_t(1)}});
    c.out.add_node("Squeeze", {c.name("gathered"), c.name("axis1")}, {pooled});
  }
  c.out.add_node("Where", {c.name("nonempty"), pooled, c.name("zero")}, c.output_names);
}

void add_sequence_pool(Registrar& r) {
  using P = SequencePoolParams;
  Layer<P> t = named<P>("SequencePool", "Recurrent", "Sequence pooling",
                        "Reduces each sequence [N, T, E] to one vector [N, E]: the mean or the largest value of its "
                        "positions, its last position or its first; over each example's own length when lengths are "
                        "wired, so padding is never pooled.");
  t.inputs = {{"input", "[N, T, E]"},
              {"lengths", "[N]: each example's length (Sequence lengths); all T positions when not wired", false}};
  t.outputs = {{"output", "[N, E]"}};
  t.params = {graph::param("mode", "Pooling", &P::mode, "mean", {"mean", "max", "last", "first"},
                           "Mean: the average of the positions. Max: the largest value of each feature. Last: the "
                           "last position (a recurrent layer's summary of the whole sequence). First: position 0 (a "
                           "classification token's).")};
  t.shape = [](const graph::ShapeContext& c, const P&) -> std::vector<Shape> {
    const Shape& s = one_input(c);
    if (s.size() != 2)
      fail("input", c.node.label() + " expects input [N, T, E] (a sequence of T positions with E features each) but "
                                     "receives " + batched(s) + from(c, 0));
    if (c.inputs.size() > 1 && !c.inputs[1].empty())
      fail("lengths", c.node.label() + " expects lengths [N], one per example (from Sequence lengths), but receives " +
                          batched(c.inputs[1]) + from(c, 1));
    return {{s[1]}};
  };
  t.build = [](const BuildContext& b, const P& p) -> BuiltNode {
    auto m = std::make_shared<nn::SequencePool>(nn::sequence_pool_mode(p.mode));
    if (b.inputs.size() == 1) return single(m);
    return {m, [m = m.get()](const std::vector<Tensor>& in) { return m->forward(in[0], in[1]); }};
  };
  t.onnx = [](const OnnxContext& c, const P& p) {
    if (c.input_names.size() > 1 && p.mode != "first") return export_masked_pool(c, p.mode);
    const OnnxAttributes reduce{{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(0)}};
    if (p.mode == "mean") return c.out.add_node("ReduceMean", {c.input_names[0]}, c.output_names, reduce);
    if (p.mode == "max") return c.out.add_node("ReduceMax", {c.input_names[0]}, c.output_names, reduce);
    c.out.add_initializer(c.name("position"), std::vector<int64_t>{p.mode == "first" ? 0 : c.inputs[0][0] - 1});
    c.out.add_node("Gather", {c.input_names[0], c.name("position")}, {c.name("picked")}, {{"axis", int64_t(1)}});
    c.out.add_initializer(c.name("axis1"), std::vector<int64_t>{1});
    c.out.add_node("Squeeze", {c.name("picked"), c.name("axis1")}, c.output_names);
  };
  t.pytorch = [](const CodeContext& c, const P& p) {
    const std::string& x = c.input();
    if (c.input_names.size() > 1 && p.mode != "first") {
      c.out.helper("pool_sequence", R"(def pool_sequence(x, lengths, mode):
    """Plexus' sequence pooling of x [N, T, E] over each example's own length: padding is never
    pooled, and an example of length 0 pools to zeros."""
    lengths = lengths.clamp(min=0)
    valid = (torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None])[..., None]
    if mode == "mean":
        return x.masked_fill(~valid, 0).sum(dim=1) / lengths.clamp(min=1)[:, None]
    if mode == "max":
        pooled = x.masked_fill(~valid, float("-inf")).amax(dim=1)
    else:  # the last step of each
        pooled = x[torch.arange(x.shape[0], device=x.device), (lengths - 1).clamp(min=0).long()]
    return torch.where((lengths > 0)[:, None], pooled, torch.zeros_like(pooled))
)");
      return c.assign("pool_sequence(" + x + ", " + c.input_names[1] + ", \"" + p.mode + "\")");
    }
    if (p.mode == "mean") return c.assign(x + ".mean(dim=1)");
    if (p.mode == "max") return c.assign(x + ".amax(dim=1)");
    c.assign(x + (p.mode == "first" ? "[:, 0]" : "[:, -1]"));
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    module_call(c, "nn::SequencePool(nn::sequence_pool_mode(\"" + p.mode + "\"))");
  };
  r.add(std::move(t));
}

}  // namespace

void add_sequence_layers(Registrar& r) {
  add_sequence_lengths(r);
  add_sequence_pool(r);
}

}  // namespace plexus::layers
