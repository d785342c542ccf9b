// How each ONNX op becomes Plexus layers (export/onnx_import.h): the inverse of the layers'
// export rules (core/layers/*.cpp, `t.onnx`), and of what PyTorch's exporter writes for its
// modules. A mapping reads the node through the Importer, adds Plexus nodes and weights, and
// throws Unmappable for what it cannot express.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "export/onnx_importer.h"
#include "ops/ops.h"

namespace plexus::exporter::onnx_import {
namespace {

using Params = std::map<std::string, graph::ParamValue>;

// The shortest decimal that reads back as this float: ONNX stores eps as float32, Plexus as
// double; 1e-05, not 9.99999974738e-06, so that the project reads as it was written.
double decimal(float v) {
  char text[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, double(v));
    if (std::strtof(text, nullptr) == v) return std::strtod(text, nullptr);
  }
  return double(v);
}

const Shape& known(const Value& v, const char* what) {
  if (!v.shape) throw Unmappable{std::string("the shape of its ") + what + " is not known"};
  return *v.shape;
}

// An ONNX axis of a [N, ...] tensor of `rank` dims per example, counted with the batch as 0.
int64_t batch_axis(int64_t axis, size_t rank) {
  const int64_t full = int64_t(rank) + 1;
  if (axis < -full || axis >= full) throw Unmappable{"axis " + std::to_string(axis) + " is out of range"};
  if (axis < 0) axis += full;
  if (axis == 0) throw Unmappable{"it works along the batch dimension, which Plexus layers keep apart"};
  return axis;
}

// One number for equal axes, else the list: a Size2 parameter's forms.
graph::ParamValue size_param(const std::vector<int64_t>& v) {
  if (v.size() == 1 || (v.size() == 2 && v[0] == v[1])) return v[0];
  return v;
}

// Symmetric pads [b1, b2, ..., e1, e2, ...] -> [p1, p2].
std::vector<int64_t> symmetric_pads(const Importer& im, size_t axes) {
  const std::vector<int64_t> pads = im.attr_ints("pads", std::vector<int64_t>(2 * axes, 0));
  if (pads.size() != 2 * axes) throw Unmappable{"its pads have " + std::to_string(pads.size()) + " entries"};
  std::vector<int64_t> out;
  for (size_t i = 0; i < axes; ++i) {
    if (pads[i] != pads[i + axes]) throw Unmappable{"its padding differs before and after an axis"};
    out.push_back(pads[i]);
  }
  return out;
}

void no_auto_pad(const Importer& im) {
  const std::string a = im.attr_string("auto_pad", "NOTSET");
  if (a != "NOTSET" && a != "VALID") throw Unmappable{"auto_pad " + a + " (set explicit pads when exporting)"};
}

void pass_through(Importer& im) {
  if (im.is_constant(0))
    im.alias_constant(0, im.constant(0));
  else
    im.alias(0, im.value(0));
}

OpMapping plain(std::string type) {
  return [type](Importer& im) { im.add_node(type, {}, {im.value(0)}); };
}

void gemm(Importer& im) {
  if (im.attr_int("transA", 0) || im.attr_float("alpha", 1) != 1 || im.attr_float("beta", 1) != 1)
    throw Unmappable{"Gemm with transA, or alpha or beta other than 1"};
  const Value x = im.value(0);
  const Constant& b = im.constant(1);
  if (b.dims.size() != 2) throw Unmappable{"its weight is not a matrix"};
  Tensor w = b.tensor();
  if (!im.attr_int("transB", 0)) w = w.t().contiguous();
  const int64_t out = w.shape()[0];
  const bool bias = im.has_input(2);
  if (bias && im.constant(2).numel() != out) throw Unmappable{"its bias does not have one value per output"};
  const std::string id = im.add_node("Linear", {{"out_features", out}, {"bias", bias}}, {x});
  im.set_weight(id, "weight", w);
  if (bias) im.set_weight(id, "bias", im.constant(2).tensor().reshape({out}));
}

// x · B for a constant B [in, out]: a Linear of weight Bᵀ; an Add of a vector after it is its bias.
void matmul(Importer& im) {
  if (torch_attention(im) || plexus_attention(im)) return;
  const Value x = im.value(0);
  const Constant& b = im.constant(1);
  if (b.dims.size() != 2) throw Unmappable{"its second input is not a matrix"};
  const std::string id = im.add_node("Linear", {{"out_features", b.dims[1]}, {"bias", false}}, {x});
  im.set_weight(id, "weight", b.tensor().t().contiguous());
  im.open_linear[im.node->output(0)] = id;
}

// Add, Sub, Mul of two computed tensors; Add of a bias to a MatMul's Linear.
bool positional_embedding(Importer& im);
bool plexus_gelu(Importer& im);

OpMapping binary(std::string type) {
  return [type](Importer& im) {
    if ((type == "Add" && positional_embedding(im)) || (type == "Mul" && plexus_gelu(im))) return;
    for (size_t c = 0; c < 2 && type == "Add"; ++c) {
      if (!im.is_constant(c)) continue;
      const std::string x = im.node->input(int(1 - c));
      const auto open = im.open_linear.find(x);
      if (open == im.open_linear.end() || im.consumers(x) != 1)
        throw Unmappable{"it adds a constant, which only a MatMul's bias can be"};
      graph::Node& linear = *im.built.find(open->second);
      const int64_t out = std::get<int64_t>(linear.params.at("out_features"));
      const Constant& bias = im.constant(c);
      if (bias.numel() != out || bias.integer) throw Unmappable{"the constant it adds is not one value per feature"};
      linear.params["bias"] = true;
      im.set_weight(linear.id, "bias", bias.tensor().reshape({out}));
      im.open_linear.erase(open);
      im.alias(0, im.values.at(x));
      return;
    }
    im.add_node(type, {}, {im.value(0), im.value(1)});
  };
}

void conv(Importer& im) {
  no_auto_pad(im);
  const Value x = im.value(0);
  const Constant& w = im.constant(1);
  if (w.dims.size() != 4 && w.dims.size() != 3) throw Unmappable{"only 1-D and 2-D convolutions are mapped"};
  const size_t axes = w.dims.size() - 2;
  const std::vector<int64_t> ones(axes, 1);
  const bool bias = im.has_input(2);
  const std::vector<int64_t> kernel(w.dims.begin() + 2, w.dims.end());
  Params p{{"out_channels", w.dims[0]},
           {"kernel_size", size_param(kernel)},
           {"stride", size_param(im.attr_ints("strides", ones))},
           {"padding", size_param(symmetric_pads(im, axes))},
           {"dilation", size_param(im.attr_ints("dilations", ones))},
           {"groups", im.attr_int("group", 1)},
           {"bias", bias}};
  const std::string id = im.add_node(axes == 2 ? "Conv2d" : "Conv1d", std::move(p), {x});
  im.set_weight(id, "weight", w.tensor());
  if (bias) im.set_weight(id, "bias", im.constant(2).tensor().reshape({w.dims[0]}));
}

// 2-D ConvTranspose: weight [in, out / groups, kh, kw].
void conv_transpose(Importer& im) {
  no_auto_pad(im);
  const Value x = im.value(0);
  const Constant& w = im.constant(1);
  if (w.dims.size() != 4) throw Unmappable{"only 2-D transposed convolutions are mapped"};
  if (im.has_attr("output_shape")) throw Unmappable{"output_shape (give pads and output_padding instead)"};
  const std::vector<int64_t> ones{1, 1};
  const int64_t groups = im.attr_int("group", 1), out = w.dims[1] * groups;
  const bool bias = im.has_input(2);
  Params p{{"out_channels", out},
           {"kernel_size", size_param({w.dims[2], w.dims[3]})},
           {"stride", size_param(im.attr_ints("strides", ones))},
           {"padding", size_param(symmetric_pads(im, 2))},
           {"output_padding", size_param(im.attr_ints("output_padding", {0, 0}))},
           {"dilation", size_param(im.attr_ints("dilations", ones))},
           {"groups", groups},
           {"bias", bias}};
  const std::string id = im.add_node("ConvTranspose2d", std::move(p), {x});
  im.set_weight(id, "weight", w.tensor());
  if (bias) im.set_weight(id, "bias", im.constant(2).tensor().reshape({out}));
}

void batch_norm(Importer& im) {
  // Exported in training mode, it also outputs the updated running statistics, which Plexus's
  // BatchNorm keeps itself.
  for (int o = 1; o < im.node->output_size(); ++o)
    if (im.consumers(im.node->output(o))) throw Unmappable{"its running statistics outputs are used"};
  const Value x = im.value(0);
  const Shape& s = known(x, "input");
  if (s.empty() || s.size() > 3)
    throw Unmappable{"its input has " + std::to_string(s.size()) + " dimensions per example"};
  Params p{{"eps", decimal(im.attr_float("epsilon", 1e-5f))},
           {"momentum", decimal(1.f - im.attr_float("momentum", 0.9f))}};
  const std::string id = im.add_node(s.size() == 3 ? "BatchNorm2d" : "BatchNorm1d", std::move(p), {x});
  const int64_t c = s[0];
  const char* names[] = {"weight", "bias", "running_mean", "running_var"};
  for (size_t i = 0; i < 4; ++i) {
    const Constant& t = im.constant(i + 1);
    if (t.numel() != c) throw Unmappable{std::string("its ") + names[i] + " does not have one value per channel"};
    im.set_weight(id, names[i], t.tensor().reshape({c}));
  }
}

OpMapping pool(bool is_max) {
  return [is_max](Importer& im) {
    no_auto_pad(im);
    const std::vector<int64_t> k = im.attr_ints("kernel_shape");
    if (k.size() != 1 && k.size() != 2) throw Unmappable{"only 1-D and 2-D pooling is mapped"};
    if (im.attr_int("ceil_mode", 0)) throw Unmappable{"ceil_mode 1 (windows past the edge)"};
    for (int64_t d : im.attr_ints("dilations", std::vector<int64_t>(k.size(), 1)))
      if (d != 1) throw Unmappable{"dilated pooling"};
    if (im.node->output_size() > 1 && !im.node->output(1).empty() && im.consumers(im.node->output(1)))
      throw Unmappable{"its indices output is used"};
    const std::vector<int64_t> pads = symmetric_pads(im, k.size());
    const bool padded = std::any_of(pads.begin(), pads.end(), [](int64_t v) { return v > 0; });
    if (!is_max && padded && !im.attr_int("count_include_pad", 0))
      throw Unmappable{"average pooling that leaves the padding out of the count (Plexus counts it)"};
    Params p{{"kernel_size", size_param(k)},
             {"stride", size_param(im.attr_ints("strides", std::vector<int64_t>(k.size(), 1)))},
             {"padding", size_param(pads)}};
    const std::string type = std::string(is_max ? "Max" : "Avg") + "Pool" + (k.size() == 2 ? "2d" : "1d");
    im.add_node(type, std::move(p), {im.value(0)});
  };
}

OpMapping global_pool(bool is_max) {
  return [is_max](Importer& im) {
    const Value x = im.value(0);
    if (known(x, "input").size() != 3) throw Unmappable{"only images [C, H, W] are pooled globally"};
    im.add_node(is_max ? "AdaptiveMaxPool2d" : "AdaptiveAvgPool2d", {{"output_size", std::vector<int64_t>{1, 1}}}, {x});
  };
}

void flatten(Importer& im) {
  const Value x = im.value(0);
  if (batch_axis(im.attr_int("axis", 1), known(x, "input").size()) != 1)
    throw Unmappable{"it flattens from an axis other than 1"};
  im.add_node("Flatten", {}, {x});
}

void reshape(Importer& im) {
  // [T, N, 2, H] -> [T, N, 2H]: a bidirectional layer's outputs side by side, still time-major.
  if (const auto y = im.recurrent_y_tn.find(im.node->input(0)); y != im.recurrent_y_tn.end()) {
    im.time_major[im.node->output(0)] = y->second;
    return;
  }
  if (const auto h = im.recurrent_h_t.find(im.node->input(0)); h != im.recurrent_h_t.end())
    return im.alias(0, h->second);
  const Value x = im.value(0);
  // A shape computed from the input's (PyTorch's x.view(x.size(0), -1) with a dynamic batch):
  // what shape inference found.
  if (!im.is_constant(1) && im.shape_values.count(im.node->input(1))) {
    const std::optional<Shape> out = im.output_shape();
    if (!out || out->empty()) throw Unmappable{"its shape is computed, and shape inference cannot tell it"};
    im.add_node("Reshape", {{"shape", std::vector<int64_t>(out->begin(), out->end())}}, {x});
    return;
  }
  const Constant& target = im.constant(1);
  if (!target.integer || target.ints.empty()) throw Unmappable{"its shape is not a list of whole numbers"};
  const Shape& in = known(x, "input");
  std::vector<int64_t> shape(target.ints.begin() + 1, target.ints.end());  // the first is the batch
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 0) {
      if (i >= in.size()) throw Unmappable{"its shape copies a dimension the input lacks"};
      shape[i] = in[i];
    }
  if (shape.empty()) throw Unmappable{"it leaves no dimension per example"};
  im.add_node("Reshape", {{"shape", shape}}, {x});
}

void concat(Importer& im) {
  std::vector<Value> inputs;
  for (int i = 0; i < im.node->input_size(); ++i) inputs.push_back(im.value(size_t(i)));
  const int64_t dim = batch_axis(im.attr_int("axis", 1), known(inputs.at(0), "first input").size());
  im.add_node("Concat", {{"dim", dim}}, inputs);
}

void transpose(Importer& im) {
  const std::vector<int64_t> perm = im.attr_ints("perm");
  const std::string& in = im.node->input(0);
  const std::string& out = im.node->output(0);
  // Around a recurrent layer: batch-major <-> time-major, which Plexus's layers need not.
  if (perm == std::vector<int64_t>{1, 0, 2}) {
    if (const auto t = im.time_major.find(in); t != im.time_major.end()) return im.alias(0, t->second);
    if (const auto h = im.recurrent_h.find(in); h != im.recurrent_h.end()) {
      im.recurrent_h_t[out] = h->second;
      return;
    }
    if (const auto v = im.values.find(in); v != im.values.end() && v->second.shape && v->second.shape->size() == 2) {
      im.time_major[out] = v->second;
      return;
    }
  }
  if (perm == std::vector<int64_t>{0, 2, 1, 3}) {  // a bidirectional layer's Y [T, 2, N, H] -> [T, N, 2, H]
    if (const auto y = im.recurrent_y.find(in); y != im.recurrent_y.end()) {
      im.recurrent_y_tn[out] = y->second;
      return;
    }
  }
  const Value x = im.value(0);
  if (perm.empty() || perm[0] != 0) throw Unmappable{"it moves the batch dimension"};
  im.add_node("Permute", {{"dims", perm}}, {x});
}

// Squeeze / Unsqueeze of one axis: the axes as an attribute (before opset 13) or an input.
std::vector<int64_t> axes_of(const Importer& im) {
  if (im.has_attr("axes")) return im.attr_ints("axes");
  if (im.has_input(1)) return im.constant(1).ints;
  return {};
}

OpMapping squeeze(bool un) {
  return [un](Importer& im) {
    const std::vector<int64_t> axes = axes_of(im);
    // A one-direction layer's Y [T, 1, N, H] -> [T, N, H]: its output, time-major.
    if (const auto y = im.recurrent_y.find(im.node->input(0)); !un && y != im.recurrent_y.end()) {
      if (axes != std::vector<int64_t>{1}) throw Unmappable{"it squeezes a recurrent output along another axis than 1"};
      im.time_major[im.node->output(0)] = y->second;
      return;
    }
    const Value x = im.value(0);
    if (axes.size() != 1) throw Unmappable{"only one axis at a time is mapped"};
    const size_t rank = known(x, "input").size() + (un ? 1 : 0);
    im.add_node(un ? "Unsqueeze" : "Squeeze", {{"dim", batch_axis(axes[0], rank)}}, {x});
  };
}

// The one node reading `tensor`, when it is of `op` (and reads `other` too, where given).
const onnx::NodeProto* only_reader(const Importer& im, const std::string& tensor, const std::string& op) {
  if (im.consumers(tensor) != 1) return nullptr;
  const onnx::NodeProto* n = im.readers.find(tensor)->second;
  return n->op_type() == op ? n : nullptr;
}

// A constant scalar, or nullopt.
std::optional<float> scalar(const Importer& im, const std::string& tensor) {
  const auto c = im.constants.find(tensor);
  if (c == im.constants.end() || c->second.numel() != 1) return std::nullopt;
  return c->second.integer ? float(c->second.ints[0]) : c->second.floats[0];
}

void add_layer_norm(Importer& im, const Value& x, float eps, const Constant& weight, const Constant* bias) {
  const int64_t features = known(x, "input").empty() ? 0 : known(x, "input").back();
  if (weight.numel() != features || (bias && bias->numel() != features))
    throw Unmappable{"its scale or bias does not have one value per feature"};
  const std::string id = im.add_node("LayerNorm", {{"eps", decimal(eps)}}, {x});
  im.set_weight(id, "weight", weight.tensor().reshape({features}));
  im.set_weight(id, "bias", bias ? bias->tensor().reshape({features}) : zeros({features}));
}

// LayerNorm as PyTorch exports it before opset 17, and as Plexus exports it: mean over the last
// axis, x - mean, its square's mean, + eps, sqrt, divide, times the weight, plus the bias. Found
// from the first ReduceMean; the chain's other nodes are taken in.
bool layer_norm_chain(Importer& im) {
  const onnx::NodeProto& mean = *im.node;
  if (im.attr_ints("axes") != std::vector<int64_t>{-1} || !im.attr_int("keepdims", 1)) return false;
  const std::string& x = mean.input(0);
  std::vector<const onnx::NodeProto*> chain;
  const onnx::NodeProto* sub = nullptr;
  for (auto [it, end] = im.readers.equal_range(mean.output(0)); it != end; ++it)
    if (it->second->op_type() == "Sub" && it->second->input(0) == x) sub = it->second;
  if (!sub || im.consumers(mean.output(0)) != 1) return false;
  // The square: PyTorch's Pow by 2, Plexus's Mul of the centred values by themselves.
  const onnx::NodeProto *pow = nullptr, *div = nullptr;
  for (auto [it, end] = im.readers.equal_range(sub->output(0)); it != end; ++it) {
    const onnx::NodeProto* n = it->second;
    if ((n->op_type() == "Pow" && scalar(im, n->input(1)) == 2.f) ||
        (n->op_type() == "Mul" && n->input(0) == sub->output(0) && n->input(1) == sub->output(0)))
      pow = n;
    if (n->op_type() == "Div") div = n;
  }
  if (!pow || !div || im.consumers(sub->output(0)) != (pow->op_type() == "Pow" ? 2 : 3)) return false;
  const onnx::NodeProto* var = only_reader(im, pow->output(0), "ReduceMean");
  const onnx::NodeProto* add_eps = var ? only_reader(im, var->output(0), "Add") : nullptr;
  const onnx::NodeProto* sqrt = add_eps ? only_reader(im, add_eps->output(0), "Sqrt") : nullptr;
  if (!sqrt || div->input(1) != sqrt->output(0) || !scalar(im, add_eps->input(1))) return false;
  const onnx::NodeProto* scale = only_reader(im, div->output(0), "Mul");
  const onnx::NodeProto* shift = scale ? only_reader(im, scale->output(0), "Add") : nullptr;
  if (!scale || !im.constants.count(scale->input(1)) || !shift || !im.constants.count(shift->input(1))) return false;
  add_layer_norm(im, im.value(0), *scalar(im, add_eps->input(1)), im.constants.at(scale->input(1)),
                 &im.constants.at(shift->input(1)));
  // The layer's output, of its input's shape (not the mean's, which add_node gave it).
  im.values[shift->output(0)] = {im.values.at(mean.output(0)).port, im.value(0).shape};
  for (const onnx::NodeProto* n : {sub, pow, var, add_eps, sqrt, div, scale, shift}) im.absorbed.insert(n);
  return true;
}

OpMapping reduce(std::string type) {
  return [type](Importer& im) {
    if (type == "Mean" && layer_norm_chain(im)) return;
    const Value x = im.value(0);
    std::vector<int64_t> dims;
    for (int64_t a : axes_of(im)) dims.push_back(batch_axis(a, known(x, "input").size()));
    if (dims.empty()) throw Unmappable{"it reduces every axis, the batch's too"};
    im.add_node(type, {{"dim", dims}, {"keepdim", im.attr_int("keepdims", 1) != 0}}, {x});
  };
}

// An embedding table looked up by indices: Gather(table, indices) on axis 0.
void gather(Importer& im) {
  const Constant& table = im.constant(0);
  if (im.attr_int("axis", 0) != 0 || table.dims.size() != 2) throw Unmappable{"only an embedding lookup is mapped"};
  const std::string id =
      im.add_node("Embedding", {{"num_embeddings", table.dims[0]}, {"embedding_dim", table.dims[1]}}, {im.value(1)});
  im.set_weight(id, "weight", table.tensor());
}

// Pad of a [C, H, W] image with zeros: ZeroPad2d.
void pad(Importer& im) {
  const Value x = im.value(0);
  if (im.attr_string("mode", "constant") != "constant") throw Unmappable{"only zero padding is mapped"};
  if (im.has_input(2) && im.constant(2).floats != std::vector<float>{0.f})
    throw Unmappable{"it pads with a value other than 0"};
  const std::vector<int64_t> pads = im.has_input(1) ? im.constant(1).ints : im.attr_ints("pads");
  if (known(x, "input").size() != 3 || pads.size() != 8 || pads[0] || pads[1] || pads[4] || pads[5])
    throw Unmappable{"only the height and width of an image [C, H, W] are padded"};
  im.add_node("ZeroPad2d", {{"padding", std::vector<int64_t>{pads[3], pads[7], pads[2], pads[6]}}}, {x});
}

// ONNX's LSTM / GRU node, time-major, as PyTorch exports nn.LSTM / nn.GRU (one node per layer):
// a Plexus layer of one layer, its weights back in PyTorch's gate order (layers/recurrent.cpp
// writes the inverse). `onnx_order`: the PyTorch gate block at each of ONNX's positions.
OpMapping recurrent(std::string type, int64_t gates, std::vector<int64_t> onnx_order) {
  return [type, gates, onnx_order](Importer& im) {
    const auto x = im.time_major.find(im.node->input(0));
    if (x == im.time_major.end()) throw Unmappable{"its input is not a batch-major sequence transposed to time-major"};
    const std::string direction = im.attr_string("direction", "forward");
    if (direction != "forward" && direction != "bidirectional") throw Unmappable{"direction " + direction};
    if (im.has_attr("activations") || im.has_attr("clip") || im.attr_int("layout", 0) || im.attr_int("input_forget", 0))
      throw Unmappable{"activations, clip, layout or input_forget other than the defaults"};
    if (type == "GRU" && im.attr_int("linear_before_reset", 0) != 1)
      throw Unmappable{"linear_before_reset 0 (PyTorch's GRU, and Plexus's, apply the reset after the product)"};
    std::vector<Value> inputs{x->second};
    if (im.has_input(4)) {
      const auto lengths = im.sequence_lens.find(im.node->input(4));
      if (lengths == im.sequence_lens.end() || lengths->second.steps != float(known(x->second, "input").at(0)))
        throw Unmappable{"its sequence_lens are not lengths clamped to [1, T] (as Plexus's export writes them)"};
      inputs.push_back(lengths->second.lengths);
    }
    for (size_t i = 5; i < 7; ++i)
      if (im.has_input(i) && !im.zeros.count(im.node->input(int(i)))) {
        const Constant& c = im.constant(i);
        if (std::any_of(c.floats.begin(), c.floats.end(), [](float v) { return v != 0; }))
          throw Unmappable{"an initial state other than zeros"};
      }
    if (im.node->output_size() > 2 && im.consumers(im.node->output(2)))
      throw Unmappable{"its final cell state is used"};
    const Constant &w = im.constant(1), &r = im.constant(2);
    const int64_t dirs = direction == "bidirectional" ? 2 : 1, h = im.attr_int("hidden_size", 0);
    if (w.dims.size() != 3 || w.dims[0] != dirs || w.dims[1] != gates * h ||
        r.dims != std::vector<int64_t>{dirs, gates * h, h})
      throw Unmappable{"its weights do not have the shapes hidden_size and direction imply"};
    const std::string id = im.add_node(type, {{"hidden_size", h}, {"bidirectional", dirs == 2}}, inputs);
    const Tensor bias = im.has_input(3) ? im.constant(3).tensor() : zeros({dirs, 2 * gates * h});
    auto pytorch_order = [&](const Tensor& t) {  // [G*H, ...] in ONNX's gate order
      std::vector<Tensor> blocks;
      blocks.resize(size_t(gates));
      for (int64_t p = 0; p < gates; ++p) blocks[size_t(onnx_order[size_t(p)])] = t.narrow(0, p * h, h);
      return concat(blocks, 0).contiguous();
    };
    const Tensor wt = w.tensor(), rt = r.tensor();
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = std::string("_l0") + (d ? "_reverse" : "");
      const Tensor b = bias.narrow(0, d, 1).reshape({2 * gates * h});
      im.set_weight(id, "weight_ih" + sfx, pytorch_order(wt.narrow(0, d, 1).reshape({gates * h, w.dims[2]})));
      im.set_weight(id, "weight_hh" + sfx, pytorch_order(rt.narrow(0, d, 1).reshape({gates * h, h})));
      im.set_weight(id, "bias_ih" + sfx, pytorch_order(b.narrow(0, 0, gates * h)));
      im.set_weight(id, "bias_hh" + sfx, pytorch_order(b.narrow(0, gates * h, gates * h)));
    }
    // Y is the output port, time-major with a directions axis; what follows turns it back.
    im.recurrent_y[im.node->output(0)] = im.values.at(im.node->output(0));
    im.values.erase(im.node->output(0));
    if (im.node->output_size() > 1 && im.values.count(im.node->output(1))) {
      im.recurrent_h[im.node->output(1)] = im.values.at(im.node->output(1));
      im.values.erase(im.node->output(1));
    }
  };
}

// Plexus's SequenceLengths export: Equal(ids, 0), Not, Cast, ReduceSum along T (keepdims 0).
// Found from the Equal; the chain's other nodes are taken in.
void sequence_lengths(Importer& im) {
  const onnx::NodeProto& equal = *im.node;
  const onnx::NodeProto* negated = only_reader(im, equal.output(0), "Not");
  const onnx::NodeProto* cast = negated ? only_reader(im, negated->output(0), "Cast") : nullptr;
  const onnx::NodeProto* sum = cast ? only_reader(im, cast->output(0), "ReduceSum") : nullptr;
  const auto axes = sum && sum->input_size() == 2 ? im.constants.find(sum->input(1)) : im.constants.end();
  const auto keeps_dims = [](const onnx::NodeProto& n) {
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.name() == "keepdims") return a.i() != 0;
    return true;  // ONNX's default
  };
  if (scalar(im, equal.input(1)) != 0.f || axes == im.constants.end() || axes->second.ints != std::vector<int64_t>{1} ||
      keeps_dims(*sum))
    throw Unmappable{"only the count of non-zero ids of Sequence lengths (Equal 0, Not, Cast, ReduceSum along T) is "
                     "mapped"};
  const Value ids = im.value(0);
  if (known(ids, "input").size() != 1) throw Unmappable{"it counts the non-zero ids of another input than [N, T]"};
  im.add_node("SequenceLengths", {}, {ids});
  im.values[sum->output(0)] = im.values.at(equal.output(0));
  for (const onnx::NodeProto* n : {negated, cast, sum}) im.absorbed.insert(n);
}

// Plexus's export of a recurrent layer's lengths: Max(lengths, 1), Min(·, T), Cast to int32,
// read as sequence_lens by the recurrent node (which checks T). Found from the Max.
void clamped_lengths(Importer& im) {
  const onnx::NodeProto& max = *im.node;
  const onnx::NodeProto* min = only_reader(im, max.output(0), "Min");
  const onnx::NodeProto* cast = min ? only_reader(im, min->output(0), "Cast") : nullptr;
  const std::optional<float> steps = min ? scalar(im, min->input(1)) : std::nullopt;
  if (scalar(im, max.input(1)) != 1.f || !steps || !cast)
    throw Unmappable{"only lengths clamped to [1, T] for a recurrent layer (Max 1, Min T, Cast) are mapped"};
  const Importer::ClampedLengths clamped{im.value(0), *steps};
  im.sequence_lens[max.output(0)] = clamped;
  im.sequence_lens[cast->output(0)] = clamped;
  for (const onnx::NodeProto* n : {min, cast}) im.absorbed.insert(n);
}

// nn.GELU as PyTorch exports it before opset 20: x / √2, Erf, + 1, times x, times 0.5. Found
// from the Div; the chain's other nodes are taken in.
void gelu(Importer& im) {
  const onnx::NodeProto& div = *im.node;
  const std::string& x = div.input(0);
  const std::optional<float> root2 = scalar(im, div.input(1));
  const onnx::NodeProto* erf = only_reader(im, div.output(0), "Erf");
  const onnx::NodeProto* plus1 = erf ? only_reader(im, erf->output(0), "Add") : nullptr;
  const onnx::NodeProto* times_x = plus1 ? only_reader(im, plus1->output(0), "Mul") : nullptr;
  const onnx::NodeProto* half = times_x ? only_reader(im, times_x->output(0), "Mul") : nullptr;
  const auto other = [](const onnx::NodeProto& n, const std::string& t) { return n.input(n.input(0) == t ? 1 : 0); };
  if (!root2 || std::abs(*root2 - float(M_SQRT2)) > 1e-6f || !half ||
      scalar(im, other(*plus1, erf->output(0))) != 1.f ||
      other(*times_x, plus1->output(0)) != x || scalar(im, other(*half, times_x->output(0))) != 0.5f)
    throw Unmappable{"only the x / √2 of a GELU (Erf, + 1, times x, times 0.5) is mapped"};
  im.add_node("GELU", {}, {im.value(0)});
  im.values[half->output(0)] = im.values.at(div.output(0));
  for (const onnx::NodeProto* n : {erf, plus1, times_x, half}) im.absorbed.insert(n);
}

// Plexus's GELU export: (0.5 · x) · (1 + erf(x · 1/√2)). Found from the Mul by 0.5; the chain's
// other nodes are taken in.
bool plexus_gelu(Importer& im) {
  const onnx::NodeProto& half = *im.node;
  const std::string& x = half.input(0);
  if (scalar(im, half.input(1)) != 0.5f || !im.values.count(x) || im.consumers(half.output(0)) != 1) return false;
  for (auto [it, end] = im.readers.equal_range(x); it != end; ++it) {
    const onnx::NodeProto* scaled = it->second;
    const std::optional<float> c = scaled->op_type() == "Mul" ? scalar(im, scaled->input(1)) : std::nullopt;
    if (!c || std::abs(*c - float(M_SQRT1_2)) > 1e-6f) continue;
    const onnx::NodeProto* erf = only_reader(im, scaled->output(0), "Erf");
    const onnx::NodeProto* plus1 = erf ? only_reader(im, erf->output(0), "Add") : nullptr;
    const onnx::NodeProto* product = plus1 ? only_reader(im, plus1->output(0), "Mul") : nullptr;
    if (!product || scalar(im, plus1->input(1)) != 1.f || product->input(0) != half.output(0)) continue;
    im.add_node("GELU", {}, {im.value(0)});
    im.values[product->output(0)] = im.values.at(half.output(0));
    for (const onnx::NodeProto* n : {scaled, erf, plus1, product}) im.absorbed.insert(n);
    return true;
  }
  return false;
}

// Plexus's PositionalEmbedding export: its table [max_len, E] sliced to the input's T rows (the
// Slice's end read from the input's Shape, which makes it a shape value here), added.
bool positional_embedding(Importer& im) {
  for (size_t c = 0; c < 2; ++c) {
    if (!im.shape_values.count(im.node->input(int(c)))) continue;
    const onnx::NodeProto* slice = producer(im, im.node->input(int(c)));
    const auto table = slice && slice->op_type() == "Slice" && slice->input_size() == 4
                           ? im.constants.find(slice->input(0))
                           : im.constants.end();
    if (table == im.constants.end() || table->second.dims.size() != 2 || scalar(im, slice->input(1)) != 0.f ||
        scalar(im, slice->input(3)) != 0.f)
      throw Unmappable{"it adds something computed from a shape, of which only a positions table [max_len, E] cut "
                       "to the input's T rows is mapped"};
    const Value x = im.value(1 - c);
    const Shape& s = known(x, "input");
    const int64_t max_len = table->second.dims[0];
    if (s.size() != 2 || s[1] != table->second.dims[1] || s[0] > max_len)
      throw Unmappable{"the positions table is " +
                       to_string(Shape(table->second.dims.begin(), table->second.dims.end())) + " where the input is " +
                       to_string(s)};
    const std::string id =
        im.add_node("PositionalEmbedding", {{"max_len", max_len}, {"kind", std::string("learned")}}, {x});
    im.set_weight(id, "weight", table->second.tensor());
    return true;
  }
  return false;
}

// Opset 17's LayerNormalization over the last axis.
void layer_normalization(Importer& im) {
  const Value x = im.value(0);
  if (batch_axis(im.attr_int("axis", -1), known(x, "input").size()) != int64_t(known(x, "input").size()))
    throw Unmappable{"it normalises more than the last axis"};
  for (int o = 1; o < im.node->output_size(); ++o)
    if (im.consumers(im.node->output(o))) throw Unmappable{"its mean or inverse deviation outputs are used"};
  add_layer_norm(im, x, im.attr_float("epsilon", 1e-5f), im.constant(1), im.has_input(2) ? &im.constant(2) : nullptr);
}

OpMapping with_axis(std::string type) {
  return [type](Importer& im) { im.add_node(type, {{"dim", im.attr_int("axis", -1)}}, {im.value(0)}); };
}

}  // namespace

const std::map<std::string, OpMapping>& op_mappings() {
  static const std::map<std::string, OpMapping> table{
      {"Identity",
       [](Importer& im) {
         if (im.is_constant(0)) return im.alias_constant(0, im.constant(0));
         im.add_node("Identity", {}, {im.value(0)});  // kept, as Plexus's Dropout exports (and reads back)
       }},
      {"Dropout", pass_through},
      {"Cast", pass_through},  // Plexus's values are float32 whatever ONNX's type
      {"Gemm", gemm},
      {"MatMul", matmul},
      {"Add", binary("Add")},
      {"Sub", binary("Sub")},
      {"Mul", binary("Mul")},
      {"Div", gelu},
      {"Conv", conv},
      {"ConvTranspose", conv_transpose},
      {"BatchNormalization", batch_norm},
      {"Relu", plain("ReLU")},
      {"Sigmoid", plain("Sigmoid")},
      {"Tanh", plain("Tanh")},
      {"Softplus", plain("Softplus")},
      {"HardSwish", plain("Hardswish")},
      {"LeakyRelu",
       [](Importer& im) {
         im.add_node("LeakyReLU", {{"negative_slope", decimal(im.attr_float("alpha", 0.01f))}}, {im.value(0)});
       }},
      {"Elu",
       [](Importer& im) {
         im.add_node("ELU", {{"alpha", decimal(im.attr_float("alpha", 1.f))}}, {im.value(0)});
       }},
      {"Softmax", with_axis("Softmax")},
      {"LogSoftmax", with_axis("LogSoftmax")},
      {"MaxPool", pool(true)},
      {"AveragePool", pool(false)},
      {"GlobalAveragePool", global_pool(false)},
      {"GlobalMaxPool", global_pool(true)},
      {"Flatten", flatten},
      {"Reshape", reshape},
      {"Concat", concat},
      {"Transpose", transpose},
      {"Squeeze", squeeze(false)},
      {"Unsqueeze", squeeze(true)},
      {"ReduceMean", reduce("Mean")},
      {"ReduceSum", reduce("Sum")},
      {"Gather", gather},
      {"Pad", pad},
      {"Equal", sequence_lengths},
      {"Max", clamped_lengths},
      {"LayerNormalization", layer_normalization},
      {"LSTM", recurrent("LSTM", 4, {0, 3, 1, 2})},  // ONNX i, o, f, c: PyTorch's blocks 0, 3, 1, 2
      {"GRU", recurrent("GRU", 3, {1, 0, 2})},       // ONNX z, r, h: PyTorch's r, z, n
  };
  return table;
}

}  // namespace plexus::exporter::onnx_import
