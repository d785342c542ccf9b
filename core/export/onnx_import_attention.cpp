// nn.MultiheadAttention as PyTorch 1.13 exports it (self-attention, batch_first, no mask): a
// subgraph of some thirty nodes around the shape arithmetic of its reshapes, which becomes one
// Plexus MultiheadAttention (layers/attention.cpp). The subgraph is matched by its structure from
// the input projection on: the ops, transposes, constants and shapes; what differs (a mask added
// to the scores, another split into heads) is refused, naming the ONNX node where it differs.
#include <cmath>

#include "export/onnx_importer.h"

namespace plexus::exporter::onnx_import {
namespace {

using Node = onnx::NodeProto;

std::string describe(const Node& n) { return "'" + n.name() + "' (" + n.op_type() + ")"; }

std::vector<int64_t> ints_attr(const Node& n, const std::string& name) {
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  return {};
}

// The node writing `tensor`, if any.
const Node* producer(const Importer& im, const std::string& tensor) {
  for (const auto& [input, reader] : im.readers)
    for (const std::string& o : reader->output())
      if (o == tensor) return reader;
  return nullptr;
}

// Walks the subgraph, collecting the nodes it takes in.
struct Walk {
  const Importer& im;
  std::vector<const Node*> taken;

  [[noreturn]] void differs(const Node& at, const std::string& what) const {
    throw Unmappable{"read as nn.MultiheadAttention's input projection, but at " + describe(at) + " " + what +
                     " (Plexus imports self-attention without a mask, as PyTorch 1.13 exports it)"};
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

bool attention(Importer& im) {
  const Node& in_proj = *im.node;
  const auto source = im.time_major.find(in_proj.input(0));
  const auto weight = im.constants.find(in_proj.input(1));
  if (source == im.time_major.end() || weight == im.constants.end() || !source->second.shape ||
      source->second.shape->size() != 2)
    return false;
  const int64_t e = source->second.shape->back();
  if (weight->second.dims != std::vector<int64_t>{e, 3 * e}) return false;
  Walk w{im, {}};

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

}  // namespace plexus::exporter::onnx_import
