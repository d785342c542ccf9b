// nn.MultiheadAttention as PyTorch 1.13 exports it (self-attention, batch_first, no mask): a
// subgraph of some thirty nodes around the shape arithmetic of its reshapes, which becomes one
// Plexus MultiheadAttention (layers/attention.cpp). The subgraph is matched by its structure from
// the input projection on: the ops, transposes, constants and shapes; what differs (a mask added
// to the scores, another split into heads) is refused, naming the ONNX node where it differs.
#include <cmath>

#include "export/onnx_importer.h"
#include "ops/ops.h"

namespace plexus::exporter::onnx_import {
namespace {

using Node = onnx::NodeProto;

std::string describe(const Node& n) { return "'" + n.name() + "' (" + n.op_type() + ")"; }

std::vector<int64_t> ints_attr(const Node& n, const std::string& name) {
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  return {};
}

// Walks the subgraph, collecting the nodes it takes in.
struct Walk {
  const Importer& im;
  std::vector<const Node*> taken;
  std::string reading;  // what the first node was read as, for messages

  [[noreturn]] void differs(const Node& at, const std::string& what) const {
    throw Unmappable{"read as " + reading + ", but at " + describe(at) + " " + what +
                     " (Plexus imports self-attention as PyTorch 1.13 and Plexus export it, with no mask but a "
                     "causal one)"};
  }

  // The node writing `tensor`, of op type `op`, taken in; `user` reads it.
  const Node& from(const Node& user, const std::string& tensor, const std::string& op) {
    const Node* n = producer(im, tensor);
    if (!n || n->op_type() != op) differs(user, "'" + tensor + "' does not come from a " + op);
    taken.push_back(n);
    return *n;
  }

  // The one node computing with `from`'s output (its Shape readers only feed shape arithmetic);
  // null when there are none or several.
  const Node* only(const Node& from) const {
    const Node* found = nullptr;
    for (auto [it, end] = im.readers.equal_range(from.output(0)); it != end; ++it)
      if (it->second->op_type() != "Shape") {
        if (found) return nullptr;
        found = it->second;
      }
    return found;
  }

  // That node, of op type `op`, taken in.
  const Node& next(const Node& from, const std::string& op) {
    const Node* n = only(from);
    if (!n || n->op_type() != op)
      differs(from, "its output goes to " + (n ? describe(*n) : std::string("no one node")) + " where a " + op +
                        " was expected");
    taken.push_back(n);
    return *n;
  }

  const Node& transpose(const Node& from, const std::vector<int64_t>& perm) {
    const Node& t = next(from, "Transpose");
    if (ints_attr(t, "perm") != perm) differs(t, "the permutation is not the expected one");
    return t;
  }

  const Constant* constant(const std::string& tensor) const {
    const auto c = im.constants.find(tensor);
    return c == im.constants.end() ? nullptr : &c->second;
  }

  // A Div by c (scores / √D) or Mul by c (scores · 1/√D): head size D.
  std::optional<int64_t> head_size(const Node& n) const {
    const Constant* c = constant(n.input(1));
    if ((n.op_type() != "Div" && n.op_type() != "Mul") || !c || c->numel() != 1 || c->integer) return std::nullopt;
    const double v = n.op_type() == "Div" ? c->floats[0] : 1.0 / c->floats[0];
    const double d = std::round(v * v);
    if (d < 1 || std::abs(std::sqrt(d) - v) > 1e-5 * v) return std::nullopt;
    return int64_t(d);
  }
};

}  // namespace

bool torch_attention(Importer& im) {
  const Node& in_proj = *im.node;
  const auto source = im.time_major.find(in_proj.input(0));
  const auto weight = im.constants.find(in_proj.input(1));
  if (source == im.time_major.end() || weight == im.constants.end() || !source->second.shape ||
      source->second.shape->size() != 2)
    return false;
  const int64_t e = source->second.shape->back();
  if (weight->second.dims != std::vector<int64_t>{e, 3 * e}) return false;
  Walk w{im, {}, "nn.MultiheadAttention's input projection"};

  // The projection's bias, then q, k and v as slices of the last axis, each start the last one's end.
  const Node& bias_add = w.next(in_proj, "Add");
  const Constant* bias = w.constant(bias_add.input(bias_add.input(0) == in_proj.output(0) ? 1 : 0));
  if (!bias || bias->numel() != 3 * e || bias->integer) w.differs(bias_add, "the bias is not 3E constants");
  std::vector<const Node*> slices;
  for (auto [it, end] = im.readers.equal_range(bias_add.output(0)); it != end; ++it)
    if (it->second->op_type() != "Shape") slices.push_back(it->second);
  const auto last_axis = [&](const Node* s) {
    const Constant* axes = s->input_size() > 3 ? w.constant(s->input(3)) : nullptr;
    return s->op_type() == "Slice" && s->input_size() == 4 && axes && axes->ints.size() == 1 &&
           (axes->ints[0] == -1 || axes->ints[0] == 2);
  };
  if (slices.size() != 3 || !std::all_of(slices.begin(), slices.end(), last_axis))
    w.differs(bias_add, "its output is not split into three Slices of the last axis");
  const Node* ordered[3] = {};
  for (const Node* s : slices) {
    const Constant* start = w.constant(s->input(1));
    if (start && start->ints == std::vector<int64_t>{0}) ordered[0] = s;
  }
  for (int i = 1; i < 3; ++i)
    for (const Node* s : slices)
      if (ordered[i - 1] && s->input(1) == ordered[i - 1]->input(2)) ordered[i] = s;
  if (!ordered[0] || !ordered[1] || !ordered[2])
    w.differs(bias_add, "the three Slices do not follow one another from 0 (q, k, v)");
  for (const Node* s : ordered) w.taken.push_back(s);

  // Each to heads [N·H, T, D] (k to [N·H, D, T]); q scaled by 1/√D, here or after q·kᵀ.
  const Node& q_split = w.next(*ordered[0], "Reshape");
  const Node& k_split = w.next(*ordered[1], "Reshape");
  const Node& v_split = w.next(*ordered[2], "Reshape");
  const Node& q_heads = w.transpose(q_split, {1, 0, 2});
  const Node& k_heads = w.transpose(k_split, {1, 2, 0});
  const Node& v_heads = w.transpose(v_split, {1, 0, 2});
  std::optional<int64_t> d;
  const Node* q = &q_heads;
  if (const Node* scale = w.only(q_heads); scale && (d = w.head_size(*scale))) {
    w.taken.push_back(scale);
    q = scale;
  }
  const Node& product = w.next(*q, "MatMul");
  if (product.input(0) != q->output(0) || product.input(1) != k_heads.output(0))
    w.differs(product, "it does not multiply the queries by the keys");
  const Node* scores = &product;
  if (!d) {
    const Node* scale = w.only(product);
    if (!scale || !(d = w.head_size(*scale)))
      w.differs(product, "the scores are not scaled by a constant 1/√D before the Softmax, as Plexus's attention does");
    w.taken.push_back(scale);
    scores = scale;
  }
  const Node& softmax = w.next(*scores, "Softmax");
  for (const onnx::AttributeProto& a : softmax.attribute())
    if (a.name() == "axis" && a.i() != -1 && a.i() != 2) w.differs(softmax, "it is not over the keys (the last axis)");
  const Node& attended = w.next(softmax, "MatMul");
  if (attended.input(1) != v_heads.output(0)) w.differs(attended, "it does not weight the values");

  // The heads E / D: the Reshapes split the batch into N·H, a Mul by H in their shape's Concat.
  const int64_t heads = e / *d;
  if (e % *d != 0)
    w.differs(*scores, "the head size " + std::to_string(*d) + " does not divide E = " + std::to_string(e));
  const Node* shape = producer(im, q_split.input(1));
  const Node* unsqueeze =
      shape && shape->op_type() == "Concat" && shape->input_size() == 3 ? producer(im, shape->input(1)) : nullptr;
  const Node* times = unsqueeze && unsqueeze->op_type() == "Unsqueeze" ? producer(im, unsqueeze->input(0)) : nullptr;
  const auto is_heads = [&](int i) {
    const Constant* c = w.constant(times->input(i));
    return c && c->numel() == 1 && (c->integer ? c->ints[0] : int64_t(c->floats[0])) == heads;
  };
  if (!times || times->op_type() != "Mul" || !(is_heads(0) || is_heads(1)))
    w.differs(q_split, "its shape does not split the batch into the " + std::to_string(heads) +
                           " heads that the scale 1/√" + std::to_string(*d) + " implies");

  // Back to [T, N, E], out_proj (a Gemm of [T·N, E], or MatMul + Add), back to batch-major.
  const Node& joined = w.next(w.transpose(attended, {1, 0, 2}), "Reshape");
  Tensor out_weight, out_bias;
  const Node* out_proj = nullptr;
  const auto read_bias = [&](const Node& n, const std::string& tensor) {
    const Constant* b = w.constant(tensor);
    if (!b || b->numel() != e || b->integer) w.differs(n, "out_proj's bias is not E constants");
    out_bias = b->tensor().reshape({e});
  };
  if ((out_proj = w.only(joined)) && out_proj->op_type() == "Gemm") {
    const Node& gemm = w.next(joined, "Gemm");
    const Constant* b = w.constant(gemm.input(1));
    bool trans_b = false, plain = true;
    for (const onnx::AttributeProto& a : gemm.attribute()) {
      if (a.name() == "transB") trans_b = a.i() != 0;
      if ((a.name() == "alpha" || a.name() == "beta") && a.f() != 1.f) plain = false;
      if (a.name() == "transA" && a.i() != 0) plain = false;
    }
    if (!b || b->dims != std::vector<int64_t>{e, e} || !plain || gemm.input_size() != 3)
      w.differs(gemm, "it is not out_proj, x · Wᵀ + b with W [E, E]");
    out_weight = trans_b ? b->tensor() : b->tensor().t().contiguous();
    read_bias(gemm, gemm.input(2));
    out_proj = &gemm;
  } else {
    const Node& mm = w.next(joined, "MatMul");
    const Constant* b = w.constant(mm.input(1));
    if (!b || b->dims != std::vector<int64_t>{e, e}) w.differs(mm, "it is not out_proj, x · W with W [E, E]");
    out_weight = b->tensor().t().contiguous();
    const Node& add = w.next(mm, "Add");
    read_bias(add, add.input(add.input(0) == mm.output(0) ? 1 : 0));
    out_proj = &add;
  }
  const Node* last = out_proj;
  if (const Node* r = w.only(*last); r && r->op_type() == "Reshape") {  // [T·N, E] -> [T, N, E] after a Gemm
    w.taken.push_back(r);
    last = r;
  }
  const Node& batch_major = w.transpose(*last, {1, 0, 2});

  const std::string id =
      im.add_node("MultiheadAttention", {{"num_heads", heads}, {"causal", false}, {"dropout", 0.0}}, {source->second});
  im.set_weight(id, "in_proj_weight", weight->second.tensor().t().contiguous());
  im.set_weight(id, "in_proj_bias", bias->tensor().reshape({3 * e}));
  im.set_weight(id, "out_proj.weight", out_weight);
  im.set_weight(id, "out_proj.bias", out_bias);
  // add_node gave the projection's output the layer's; what the subgraph ends in is it too.
  im.values[batch_major.output(0)] = {im.values.at(in_proj.output(0)).port, source->second.shape};
  for (const Node* n : w.taken) im.absorbed.insert(n);
  return true;
}

namespace {

// A constant [T, T] of 0 on and below the diagonal and -inf above it: Plexus's causal mask.
bool causal_mask(const Constant* c) {
  if (!c || c->integer || c->dims.size() != 2 || c->dims[0] != c->dims[1]) return false;
  const int64_t t = c->dims[0];
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < t; ++j) {
      const float v = c->floats[size_t(i * t + j)];
      if (j > i ? !(std::isinf(v) && v < 0) : v != 0.f) return false;
    }
  return true;
}

// A projection MatMul by a constant [E, E] and its bias Add, into heads: Reshape to the constant
// [0, -1, H, D] and Transpose to `perm`. Walked back from the Transpose.
struct Projection {
  const Node* matmul;
  Tensor weight, bias;  // PyTorch's [E, E] (out, in) and [E]
};

Projection projection_to(Walk& w, const Node& user, const std::string& heads, const std::vector<int64_t>& perm,
                         const std::vector<int64_t>& shape, int64_t e) {
  const Node& t = w.from(user, heads, "Transpose");
  if (ints_attr(t, "perm") != perm) w.differs(t, "the permutation is not the expected one");
  const Node& r = w.from(t, t.input(0), "Reshape");
  const Constant* s = w.constant(r.input(1));
  if (!s || s->ints != shape) w.differs(r, "its shape is not the queries'");
  const Node& add = w.from(r, r.input(0), "Add");
  const Node& mm = w.from(add, add.input(0), "MatMul");
  const Constant* weight = w.constant(mm.input(1));
  const Constant* bias = w.constant(add.input(1));
  if (!weight || weight->dims != std::vector<int64_t>{e, e} || !bias || bias->numel() != e)
    w.differs(mm, "it is not a projection x · W + b with W [E, E]");
  return {&mm, weight->tensor().t().contiguous(), bias->tensor().reshape({e})};
}

}  // namespace

bool plexus_attention(Importer& im) {
  const Node& q_mm = *im.node;
  const auto source = im.values.find(q_mm.input(0));
  const auto weight = im.constants.find(q_mm.input(1));
  if (source == im.values.end() || weight == im.constants.end() || !source->second.shape ||
      source->second.shape->size() != 2)
    return false;
  const int64_t e = source->second.shape->back();
  Walk w{im, {}, "the query projection of Plexus's MultiheadAttention"};
  // Until the split into heads, it may be a Linear followed by a Reshape: not attention.
  const Node* add = w.only(q_mm);
  const Node* split = add && add->op_type() == "Add" ? w.only(*add) : nullptr;
  const Constant* shape = split && split->op_type() == "Reshape" ? w.constant(split->input(1)) : nullptr;
  const Node* q_heads = shape ? w.only(*split) : nullptr;
  if (weight->second.dims != std::vector<int64_t>{e, e} || !shape || shape->ints.size() != 4 || shape->ints[0] != 0 ||
      shape->ints[1] != -1 || shape->ints[2] * shape->ints[3] != e || !q_heads || q_heads->op_type() != "Transpose" ||
      ints_attr(*q_heads, "perm") != std::vector<int64_t>{0, 2, 1, 3})
    return false;
  const int64_t heads = shape->ints[2];
  const Projection q = projection_to(w, *q_heads, q_heads->output(0), {0, 2, 1, 3}, shape->ints, e);

  const Node& product = w.next(*q_heads, "MatMul");
  if (product.input(0) != q_heads->output(0)) w.differs(product, "it does not multiply the queries by the keys");
  const Projection k = projection_to(w, product, product.input(1), {0, 2, 3, 1}, shape->ints, e);
  const Node& scale = w.next(product, "Mul");
  if (w.head_size(scale) != shape->ints[3]) w.differs(scale, "it does not scale the scores by 1/√D");
  const Node* scores = &scale;
  bool causal = false;
  if (const Node* mask = w.only(scale); mask && mask->op_type() == "Add") {
    if (!causal_mask(w.constant(mask->input(1))))
      w.differs(*mask, "it adds a mask to the scores that is not the causal one");
    causal = true;
    scores = &w.next(scale, "Add");
  }
  const Node& softmax = w.next(*scores, "Softmax");
  const Node& attended = w.next(softmax, "MatMul");
  const Projection v = projection_to(w, attended, attended.input(1), {0, 2, 1, 3}, shape->ints, e);
  for (const Projection* p : {&k, &v})
    if (p->matmul->input(0) != q_mm.input(0))
      w.differs(*p->matmul, "keys or values come from another tensor than the queries (cross-attention)");
  const Node& joined = w.next(w.transpose(attended, {0, 2, 1, 3}), "Reshape");
  const Constant* joined_shape = w.constant(joined.input(1));
  if (!joined_shape || joined_shape->ints != std::vector<int64_t>{0, -1, e})
    w.differs(joined, "it does not join the heads to [N, T, E]");
  const Node& out_mm = w.next(joined, "MatMul");
  const Node& out_add = w.next(out_mm, "Add");
  const Constant* out_w = w.constant(out_mm.input(1));
  const Constant* out_b = w.constant(out_add.input(1));
  if (!out_w || out_w->dims != std::vector<int64_t>{e, e} || !out_b || out_b->numel() != e)
    w.differs(out_mm, "it is not out_proj, x · W + b with W [E, E]");

  const std::string id =
      im.add_node("MultiheadAttention", {{"num_heads", heads}, {"causal", causal}, {"dropout", 0.0}}, {source->second});
  im.set_weight(id, "in_proj_weight", concat({q.weight, k.weight, v.weight}, 0));
  im.set_weight(id, "in_proj_bias", concat({q.bias, k.bias, v.bias}, 0));
  im.set_weight(id, "out_proj.weight", out_w->tensor().t().contiguous());
  im.set_weight(id, "out_proj.bias", out_b->tensor().reshape({e}));
  im.values[out_add.output(0)] = {im.values.at(q_mm.output(0)).port, source->second.shape};
  for (const Node* n : w.taken)
    if (n != &q_mm) im.absorbed.insert(n);
  return true;
}

}  // namespace plexus::exporter::onnx_import
