// Every layer type Plexus knows, one entry each: ports, parameters, shape rule, builder.
#include "graph/registry.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/grad_mode.h"
#include "graph/inference.h"
#include "nn/layers.h"
#include "ops/ops.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::graph {

std::string to_string(ParamType t) {
  switch (t) {
    case ParamType::Int: return "int";
    case ParamType::Float: return "float";
    case ParamType::Bool: return "bool";
    case ParamType::Choice: return "choice";
    case ParamType::IntList: return "int list";
  }
  return "?";
}

// ---- parameters ---------------------------------------------------------------------------
const ParamValue& Params::value(const std::string& name) const {
  const auto it = node_.params.find(name);
  if (it != node_.params.end()) return it->second;
  for (const ParamSpec& s : specs_)
    if (s.name == name) return s.default_value;
  throw ValueError(node_.label() + " has no parameter '" + name + "'");
}

namespace {
template <class T>
const T& get(const ParamValue& v, const Node& node, const std::string& name, const char* type) {
  if (const T* x = std::get_if<T>(&v)) return *x;
  throw ValueError(node.label() + ": parameter '" + name + "' must be " + type + ", got " + to_string(v));
}
}  // namespace

int64_t Params::integer(const std::string& name) const { return get<int64_t>(value(name), node_, name, "a whole number"); }
double Params::real(const std::string& name) const {
  const ParamValue& v = value(name);
  if (const int64_t* i = std::get_if<int64_t>(&v)) return double(*i);
  return get<double>(v, node_, name, "a number");
}
bool Params::flag(const std::string& name) const { return get<bool>(value(name), node_, name, "true or false"); }
const std::string& Params::choice(const std::string& name) const { return get<std::string>(value(name), node_, name, "a text"); }
const std::vector<int64_t>& Params::list(const std::string& name) const {
  return get<std::vector<int64_t>>(value(name), node_, name, "a list of whole numbers");
}

namespace {
// A value as a message shows it: texts quoted, so "128" (a text) is not mistaken for 128.
std::string shown(const ParamValue& v) {
  if (const std::string* s = std::get_if<std::string>(&v)) return "the text \"" + *s + "\"";
  std::string text = to_string(v);
  // A real number that happens to be whole still shows it is one: "got 128.0", not "got 128".
  if (std::holds_alternative<double>(v) && text.find_first_of(".eninf") == std::string::npos) text += ".0";
  return text;
}

// A bound as the messages write it: "16777216", "0.99", "1e-12" (the shortest text that reads
// back as the same number).
std::string bound_text(const ParamSpec& spec, double bound) {
  if (spec.type != ParamType::Float) return std::to_string(int64_t(bound));
  return shortest_text(bound);
}

bool in_range(const ParamSpec& spec, double x) { return x >= spec.min && x <= spec.max; }
}  // namespace

std::string param_range(const ParamSpec& spec) {
  return "between " + bound_text(spec, spec.min) + " and " + bound_text(spec, spec.max);
}

std::string check_param_value(const ParamSpec& spec, const ParamValue& value) {
  switch (spec.type) {
    case ParamType::Int: {
      const auto* x = std::get_if<int64_t>(&value);
      if (!x) return "must be a whole number";
      return in_range(spec, double(*x)) ? "" : "must be " + param_range(spec);
    }
    case ParamType::Float: {
      // A whole number is a real number too (Params::real takes it).
      const auto* real = std::get_if<double>(&value);
      const auto* whole = std::get_if<int64_t>(&value);
      const double x = real ? *real : whole ? double(*whole) : NAN;
      if (!std::isfinite(x)) return "must be a number";
      return in_range(spec, x) ? "" : "must be " + param_range(spec);
    }
    case ParamType::Bool: return std::holds_alternative<bool>(value) ? "" : "must be true or false";
    case ParamType::Choice: {
      const auto* choice = std::get_if<std::string>(&value);
      if (choice && std::find(spec.choices.begin(), spec.choices.end(), *choice) != spec.choices.end()) return "";
      std::string known;
      for (const std::string& c : spec.choices) known += (known.empty() ? "" : ", ") + c;
      return "must be one of " + known;
    }
    case ParamType::IntList: {
      const auto* list = std::get_if<std::vector<int64_t>>(&value);
      if (!list) return "must be a list of whole numbers";
      if (list->size() > 8) return "must have at most 8 entries";
      for (int64_t x : *list)
        if (!in_range(spec, double(x))) return "must have every entry " + param_range(spec);
      return "";
    }
  }
  return "";
}

std::vector<std::string> check_params(const Node& node, const LayerType& type) {
  std::vector<std::string> out;
  for (const auto& [name, v] : node.params) {
    const ParamSpec* s = type.param(name);
    if (!s) {
      std::string known;
      for (const ParamSpec& p : type.params) known += (known.empty() ? "" : ", ") + p.name;
      out.push_back(node.label() + " has no parameter '" + name + "'" +
                    (known.empty() ? " (it takes none)" : " (it takes: " + known + ")"));
    } else if (const std::string reason = check_param_value(*s, v); !reason.empty()) {
      out.push_back(node.label() + ": " + name + " " + reason + ", got " + shown(v));
    }
  }
  return out;
}

// ---- the registry ----------------------------------------------------------------------------
const ParamSpec* LayerType::param(const std::string& n) const {
  for (const ParamSpec& p : params)
    if (p.name == n) return &p;
  return nullptr;
}
const PortSpec* LayerType::input(const std::string& n) const {
  for (const PortSpec& p : inputs)
    if (p.name == n) return &p;
  return nullptr;
}
const PortSpec* LayerType::output(const std::string& n) const {
  for (const PortSpec& p : outputs)
    if (p.name == n) return &p;
  return nullptr;
}

const Registry& Registry::instance() {
  static const Registry registry;
  return registry;
}

const LayerType* Registry::find(const std::string& name) const {
  for (const LayerType& t : types_)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

constexpr double kBig = 1 << 24;

ParamSpec int_param(std::string name, int64_t def, double lo, double hi, std::string doc) {
  return {std::move(name), ParamType::Int, def, lo, hi, {}, std::move(doc), {}};
}
ParamSpec float_param(std::string name, double def, double lo, double hi, std::string doc) {
  return {std::move(name), ParamType::Float, def, lo, hi, {}, std::move(doc), {}};
}
ParamSpec bool_param(std::string name, bool def, std::string doc) {
  return {std::move(name), ParamType::Bool, def, 0, 1, {}, std::move(doc), {}};
}
// A whole-number parameter whose default 0 stands for something else (`means`).
ParamSpec int_param_0(std::string name, double hi, std::string doc, std::string means) {
  ParamSpec p = int_param(std::move(name), 0, 0, hi, std::move(doc));
  p.default_means = std::move(means);
  return p;
}

[[noreturn]] void fail(const std::string& port, const std::string& message) { throw ShapeProblem{port, message}; }

const Shape& one_input(const ShapeContext& c) { return c.inputs.at(0); }

std::string from(const ShapeContext& c, size_t i) { return " from " + c.input_sources.at(i); }

void require_rank(const ShapeContext& c, size_t rank, const char* layout) {
  const Shape& s = one_input(c);
  if (s.size() != rank)
    fail("input", c.node.label() + " expects input " + layout + " but receives " + batched(s) + from(c, 0));
}

BuiltNode single(std::shared_ptr<nn::Module> m) {
  nn::Module* raw = m.get();
  return {std::move(m), [raw](const std::vector<Tensor>& in) { return raw->forward(in.at(0)); }};
}

// The output size of a window sliding over `in` (convolution or pooling), checked. A kernel
// larger than the padded input is refused before dividing: integer division truncates toward
// zero, so the formula alone would give one output row for, e.g., a kernel of 5 over 4 rows
// with stride 2.
int64_t window_out(const ShapeContext& c, int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation,
                   const char* axis) {
  const int64_t span = dilation * (k - 1) + 1;  // parameters are range-checked: no overflow
  if (in + 2 * pad < span) {
    const std::string kernel = std::to_string(k) + "x" + std::to_string(k) + " kernel" +
                               (dilation > 1 ? " with dilation " + std::to_string(dilation) + " (spanning " +
                                                   std::to_string(span) + ")"
                                             : "");
    const std::string size = std::to_string(in) + (pad ? " + 2x" + std::to_string(pad) + " padding" : "");
    fail("input", c.node.label() + ": its " + kernel + " is larger than the " + axis + " (" + size + ") of input " +
                      batched(one_input(c)) + from(c, 0) + " (use a smaller kernel" + (pad ? "" : " or add padding") +
                      ")");
  }
  return (in + 2 * pad - span) / stride + 1;
}

std::vector<Shape> same_shape(const ShapeContext& c) { return {one_input(c)}; }

LayerType activation(std::string name, std::string display, std::string description,
                     std::function<std::shared_ptr<nn::Module>(const Params&)> make, OnnxRule onnx,
                     std::vector<ParamSpec> params = {}) {
  LayerType t;
  t.name = std::move(name);
  t.category = "Activation";
  t.display_name = std::move(display);
  t.description = std::move(description);
  t.inputs = {{"input", "any shape"}};
  t.outputs = {{"output", "the input's shape"}};
  t.params = std::move(params);
  t.shape = same_shape;
  t.build = [make](const BuildContext& b) { return single(make(b.params)); };
  t.onnx = std::move(onnx);
  return t;
}

// The layer options a node's parameters stand for: its module and its ONNX rule both read them.
Conv2dOptions conv_options(const Params& p) {
  const int64_t pad = p.integer("padding"), s = p.integer("stride"), d = p.integer("dilation");
  return {s, s, pad, pad, d, d, p.integer("groups")};
}
Pool2dOptions pool_options(const Params& p) {
  const int64_t k = p.integer("kernel_size"), s = p.integer("stride"), pad = p.integer("padding");
  return {k, k, s, s, pad, pad, true};
}

// Loss nodes: `input` is the prediction, `target` the dataset's labels (Input's y).
LayerType loss_type(std::string name, std::string display, std::string description, std::vector<ParamSpec> params,
                    ShapeRule rule, LossBuilder loss, bool classification = false) {
  LayerType t;
  t.name = std::move(name);
  t.category = "Loss";
  t.display_name = std::move(display);
  t.description = std::move(description);
  t.inputs = {{"input", "the prediction"}, {"target", "the labels: connect the Input's y"}};
  t.params = std::move(params);
  t.shape = std::move(rule);
  t.loss = std::move(loss);
  t.classification = classification;
  return t;
}

// Regression-style losses compare prediction and target element by element.
std::vector<Shape> elementwise_loss_rule(const ShapeContext& c) {
  const Shape &pred = c.inputs.at(0), &target = c.inputs.at(1);
  if (numel(pred) != numel(target))
    fail("input", c.node.label() + " compares the prediction " + batched(pred) + from(c, 0) + " with targets " +
                      batched(target) + from(c, 1) + ": they need the same number of values per example");
  return {};
}

// Prediction [N, 1] against targets [N] (a regression column) compares value by value.
Tensor match_target(const Tensor& pred, const Tensor& target) {
  return pred.shape() == target.shape() ? pred : pred.reshape(target.shape());
}

}  // namespace

Registry::Registry() {
  // ---- Data ----
  {
    LayerType t;
    t.name = "Input";
    t.category = "Data";
    t.display_name = "Input";
    t.description = "The examples of the bound dataset: inputs x and labels y.";
    t.outputs = {{"x", "one example's input, e.g. [N, 1, 28, 28] for MNIST"}, {"y", "its label"}};
    t.params = {{"shape", ParamType::IntList, std::vector<int64_t>{}, 1, kBig, {},
                 "per-example input shape; empty = taken from the dataset", {}}};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      const std::vector<int64_t>& fixed = c.params.list("shape");
      if (!c.dataset && fixed.empty()) {
        if (c.dataset_bound) throw ShapeUnknown{};  // the caller reports why it cannot be read
        fail("", c.node.label() + " has no shape: bind a dataset in the training settings or set its shape");
      }
      const Shape x = fixed.empty() ? c.dataset->input_shape : Shape(fixed.begin(), fixed.end());
      if (c.dataset && !fixed.empty() && x != c.dataset->input_shape)
        fail("", c.node.label() + " is set to shape " + batched(x) + " but the dataset gives " +
                     batched(c.dataset->input_shape) + " (clear its shape to take the dataset's)");
      return {x, c.dataset ? c.dataset->label_shape : Shape{}};
    };
    t.build = [](const BuildContext&) { return BuiltNode{}; };
    // The model's input x in raw units, standardised as the run's loaders did:
    // (x - mean) * (1 / std) per channel (data::Normalize). An exported model has no labels y.
    t.onnx = [](const OnnxContext& c) {
      const std::vector<float>& mean = c.input_mean, &deviation = c.input_std;
      if (mean.empty()) return c.out.add_node("Identity", c.input_names, {c.output_names[0]});
      const Shape& x = c.outputs[0];
      if (deviation.size() != mean.size() || (mean.size() > 1 && (x.empty() || x[0] != int64_t(mean.size()))))
        throw OnnxUnsupported{"its input standardisation has " + std::to_string(mean.size()) + " means and " +
                              std::to_string(deviation.size()) + " standard deviations, but the input " + batched(x) +
                              " needs one of each, or one per channel (dim 1)"};
      Shape per_channel(x.size() + 1, 1);  // [1, C, 1, 1] or [1, F]: broadcast over dim 1
      if (!x.empty()) per_channel[1] = int64_t(mean.size());
      std::vector<float> inv_std;
      for (float s : deviation) inv_std.push_back(1.f / s);
      c.out.add_initializer(c.name("mean"), from_vector(mean, per_channel));
      c.out.add_initializer(c.name("inv_std"), from_vector(inv_std, per_channel));
      c.out.add_node("Sub", {c.input_names[0], c.name("mean")}, {c.name("centered")});
      c.out.add_node("Mul", {c.name("centered"), c.name("inv_std")}, {c.output_names[0]});
    };
    types_.push_back(std::move(t));
  }

  // ---- Layers ----
  {
    LayerType t;
    t.name = "Linear";
    t.category = "Layers";
    t.display_name = "Linear (fully connected)";
    t.description = "y = x·Wᵀ + b over the last dimension.";
    t.inputs = {{"input", "[N, ..., in_features]"}};
    t.outputs = {{"output", "[N, ..., out_features]"}};
    t.params = {int_param_0("in_features", kBig, "input features; 0 = taken from the input", "auto"),
                int_param("out_features", 10, 1, kBig, "output features"),
                bool_param("bias", true, "learn an additive bias")};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      Shape s = one_input(c);
      if (s.empty()) fail("input", c.node.label() + " needs features but receives a single value per example" + from(c, 0));
      const int64_t want = c.params.integer("in_features");
      if (want && want != s.back())
        fail("input", c.node.label() + " expects " + std::to_string(want) + " input features but receives " +
                          std::to_string(s.back()) + from(c, 0));
      s.back() = c.params.integer("out_features");
      return {s};
    };
    t.parameter_count = [](const Params& p, const std::vector<Shape>& in) {
      const double out = double(p.integer("out_features"));
      return out * double(in.at(0).back()) + (p.flag("bias") ? out : 0);
    };
    // Every output value is a dot product over the input features.
    t.macs = [](const Params&, const std::vector<Shape>& in, const std::vector<Shape>& out) {
      return double(numel(out.at(0))) * double(in.at(0).back());
    };
    t.build = [](const BuildContext& b) {
      return single(std::make_shared<nn::Linear>(b.inputs.at(0).back(), b.params.integer("out_features"),
                                                 b.params.flag("bias"), b.gen));
    };
    // [N, in]: one Gemm with Wᵀ; [N, ..., in]: MatMul by a transposed copy of W, then the bias.
    t.onnx = [](const OnnxContext& c) {
      const bool bias = c.params.flag("bias");
      if (c.inputs[0].size() == 1) {
        std::vector<std::string> in{c.input_names[0], c.parameter("weight")};
        if (bias) in.push_back(c.parameter("bias"));
        return c.out.add_node("Gemm", in, c.output_names, {{"transB", int64_t(1)}});
      }
      c.out.add_initializer(c.name("weight_t"), c.out.weights(c.node.id + ".weight").t().contiguous());
      const std::string product = bias ? c.name("product") : c.output_names[0];
      c.out.add_node("MatMul", {c.input_names[0], c.name("weight_t")}, {product});
      if (bias) c.out.add_node("Add", {product, c.parameter("bias")}, c.output_names);
    };
    types_.push_back(std::move(t));
  }
  {
    LayerType t;
    t.name = "Embedding";
    t.category = "Layers";
    t.display_name = "Embedding";
    t.description = "Looks up a learned vector for each whole-number index.";
    t.inputs = {{"input", "indices of any shape, values in [0, num_embeddings)"}};
    t.outputs = {{"output", "the input's shape + [embedding_dim]"}};
    t.params = {int_param("num_embeddings", 1000, 1, kBig, "size of the vocabulary"),
                int_param("embedding_dim", 64, 1, kBig, "length of each vector")};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      Shape s = one_input(c);
      s.push_back(c.params.integer("embedding_dim"));
      return {s};
    };
    t.parameter_count = [](const Params& p, const std::vector<Shape>&) {
      return double(p.integer("num_embeddings")) * double(p.integer("embedding_dim"));
    };
    t.build = [](const BuildContext& b) {
      return single(std::make_shared<nn::Embedding>(b.params.integer("num_embeddings"),
                                                    b.params.integer("embedding_dim"), b.gen));
    };
    // Indices arrive as float32 whole numbers; Gather takes int64.
    t.onnx = [](const OnnxContext& c) {
      c.out.add_node("Cast", c.input_names, {c.name("indices")}, {{"to", kOnnxInt64}});
      c.out.add_node("Gather", {c.parameter("weight"), c.name("indices")}, c.output_names, {{"axis", int64_t(0)}});
    };
    types_.push_back(std::move(t));
  }
  {
    LayerType t;
    t.name = "Flatten";
    t.category = "Layers";
    t.display_name = "Flatten";
    t.description = "Turns each example into one vector.";
    t.inputs = {{"input", "any shape"}};
    t.outputs = {{"output", "[N, product of the input's dims]"}};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> { return {{numel(one_input(c))}}; };
    t.build = [](const BuildContext& b) {
      if (!b.inputs.at(0).empty()) return single(std::make_shared<nn::Flatten>());
      // One value per example arrives batched as [N], with no dim 1 for nn::Flatten to start at.
      return BuiltNode{nullptr,
                       [](const std::vector<Tensor>& in) { return reshape(in.at(0), {in.at(0).shape().at(0), 1}); }};
    };
    t.onnx = onnx_op("Flatten", {{"axis", int64_t(1)}});  // [N] becomes [N, 1] too
    types_.push_back(std::move(t));
  }
  {
    LayerType t;
    t.name = "Reshape";
    t.category = "Layers";
    t.display_name = "Reshape";
    t.description = "Gives each example a new shape with the same number of values.";
    t.inputs = {{"input", "any shape"}};
    t.outputs = {{"output", "[N, shape...]"}};
    t.params = {{"shape", ParamType::IntList, std::vector<int64_t>{-1}, -1, kBig, {},
                 "per-example shape; one entry may be -1 (inferred)", {}}};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      const std::vector<int64_t>& want = c.params.list("shape");
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
        fail("", c.node.label() + ": only one shape entry may be -1 (inferred), got " +
                     to_string(c.params.value("shape")));
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
    t.build = [](const BuildContext& b) {
      const std::vector<int64_t>& s = b.params.list("shape");
      return BuiltNode{nullptr, [s](const std::vector<Tensor>& in) {
                         Shape full{in.at(0).shape().at(0)};
                         full.insert(full.end(), s.begin(), s.end());
                         return reshape(in.at(0), full);
                       }};
    };
    // The inferred shape, with 0 ("as in the input") for the batch.
    t.onnx = [](const OnnxContext& c) {
      std::vector<int64_t> shape{0};
      shape.insert(shape.end(), c.outputs[0].begin(), c.outputs[0].end());
      c.out.add_initializer(c.name("shape"), shape);
      c.out.add_node("Reshape", {c.input_names[0], c.name("shape")}, c.output_names);
    };
    types_.push_back(std::move(t));
  }
  {
    LayerType t;
    t.name = "Dropout";
    t.category = "Layers";
    t.display_name = "Dropout";
    t.description = "Zeroes values at random while training (rate p); passes everything in evaluation.";
    t.inputs = {{"input", "any shape"}};
    t.outputs = {{"output", "the input's shape"}};
    t.params = {float_param("p", 0.5, 0, 0.99, "probability of zeroing each value")};
    t.shape = same_shape;
    t.build = [](const BuildContext& b) { return single(std::make_shared<nn::Dropout>(float(b.params.real("p")))); };
    t.onnx = onnx_op("Identity");  // evaluation passes everything
    types_.push_back(std::move(t));
  }

  // ---- Convolution ----
  {
    LayerType t;
    t.name = "Conv2d";
    t.category = "Convolution";
    t.display_name = "2-D convolution";
    t.description = "Slides learned kernels over images [N, C, H, W].";
    t.inputs = {{"input", "[N, in_channels, H, W]"}};
    t.outputs = {{"output", "[N, out_channels, H', W']"}};
    t.params = {int_param_0("in_channels", kBig, "input channels; 0 = taken from the input", "auto"),
                int_param("out_channels", 16, 1, kBig, "number of kernels"),
                int_param("kernel_size", 3, 1, 64, "kernel height and width"),
                int_param("stride", 1, 1, 64, "step between windows"),
                int_param("padding", 0, 0, 64, "zeros added on every side"),
                int_param("dilation", 1, 1, 64, "spacing of kernel taps"),
                int_param("groups", 1, 1, kBig, "channel groups (must divide both channel counts)"),
                bool_param("bias", true, "learn an additive bias")};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      require_rank(c, 3, "[N, C, H, W]");
      const Shape& s = one_input(c);
      const int64_t want = c.params.integer("in_channels"), groups = c.params.integer("groups");
      const int64_t oc = c.params.integer("out_channels");
      if (want && want != s[0])
        fail("input", c.node.label() + " expects " + std::to_string(want) + " input channels but receives " +
                          std::to_string(s[0]) + from(c, 0));
      if (s[0] % groups || oc % groups)
        fail("", c.node.label() + ": groups = " + std::to_string(groups) + " must divide the input channels (" +
                     std::to_string(s[0]) + ") and out_channels (" + std::to_string(oc) + ")");
      const int64_t k = c.params.integer("kernel_size"), st = c.params.integer("stride"),
                    p = c.params.integer("padding"), d = c.params.integer("dilation");
      return {{oc, window_out(c, s[1], k, st, p, d, "height"), window_out(c, s[2], k, st, p, d, "width")}};
    };
    t.parameter_count = [](const Params& p, const std::vector<Shape>& in) {
      const double oc = double(p.integer("out_channels")), k = double(p.integer("kernel_size"));
      const double per_kernel = double(in.at(0)[0] / p.integer("groups")) * k * k;
      return oc * per_kernel + (p.flag("bias") ? oc : 0);
    };
    // Every output value is a dot product over one kernel's window: its group's channels × k × k.
    t.macs = [](const Params& p, const std::vector<Shape>& in, const std::vector<Shape>& out) {
      const double k = double(p.integer("kernel_size"));
      return double(numel(out.at(0))) * double(in.at(0)[0] / p.integer("groups")) * k * k;
    };
    t.build = [](const BuildContext& b) {
      return single(std::make_shared<nn::Conv2d>(b.inputs.at(0)[0], b.params.integer("out_channels"),
                                                 b.params.integer("kernel_size"), conv_options(b.params),
                                                 b.params.flag("bias"), b.gen));
    };
    t.onnx = [](const OnnxContext& c) {
      const Conv2dOptions o = conv_options(c.params);
      const int64_t k = c.params.integer("kernel_size");
      std::vector<std::string> in{c.input_names[0], c.parameter("weight")};
      if (c.params.flag("bias")) in.push_back(c.parameter("bias"));
      c.out.add_node("Conv", in, c.output_names,
                     {{"kernel_shape", std::vector<int64_t>{k, k}},
                      {"strides", std::vector<int64_t>{o.stride_h, o.stride_w}},
                      {"pads", std::vector<int64_t>{o.pad_h, o.pad_w, o.pad_h, o.pad_w}},
                      {"dilations", std::vector<int64_t>{o.dilation_h, o.dilation_w}},
                      {"group", o.groups}});
    };
    types_.push_back(std::move(t));
  }
  for (const bool is_max : {true, false}) {
    LayerType t;
    t.name = is_max ? "MaxPool2d" : "AvgPool2d";
    t.category = "Convolution";
    t.display_name = is_max ? "2-D max pooling" : "2-D average pooling";
    t.description = is_max ? "Keeps the largest value of each window." : "Averages each window.";
    t.inputs = {{"input", "[N, C, H, W]"}};
    t.outputs = {{"output", "[N, C, H', W']"}};
    t.params = {int_param("kernel_size", 2, 1, 64, "window height and width"),
                int_param_0("stride", 64, "step between windows; 0 = the kernel size", "= kernel"),
                int_param("padding", 0, 0, 32, "padding on every side (at most half the kernel)")};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      require_rank(c, 3, "[N, C, H, W]");
      const Shape& s = one_input(c);
      const int64_t k = c.params.integer("kernel_size"), p = c.params.integer("padding");
      const int64_t st = c.params.integer("stride") ? c.params.integer("stride") : k;
      if (2 * p > k)
        fail("", c.node.label() + ": padding " + std::to_string(p) + " is more than half the kernel size " +
                     std::to_string(k) + " (at most " + std::to_string(k / 2) + ")");
      return {{s[0], window_out(c, s[1], k, st, p, 1, "height"), window_out(c, s[2], k, st, p, 1, "width")}};
    };
    t.build = [is_max](const BuildContext& b) {
      const Pool2dOptions o = pool_options(b.params);
      return single(is_max ? std::shared_ptr<nn::Module>(std::make_shared<nn::MaxPool2d>(o))
                           : std::make_shared<nn::AvgPool2d>(o));
    };
    // Windows that fit (ceil_mode 0); padding is skipped by max and counted by average.
    t.onnx = [is_max](const OnnxContext& c) {
      const Pool2dOptions o = pool_options(c.params);
      OnnxAttributes a{{"kernel_shape", std::vector<int64_t>{o.kernel_h, o.kernel_w}},
                       {"strides", std::vector<int64_t>{o.stride_h ? o.stride_h : o.kernel_h,
                                                        o.stride_w ? o.stride_w : o.kernel_w}},
                       {"pads", std::vector<int64_t>{o.pad_h, o.pad_w, o.pad_h, o.pad_w}}};
      if (!is_max) a.emplace_back("count_include_pad", int64_t(o.count_include_pad));
      c.out.add_node(is_max ? "MaxPool" : "AveragePool", c.input_names, c.output_names, a);
    };
    types_.push_back(std::move(t));
  }

  // ---- Normalization ----
  for (const bool two_d : {false, true}) {
    LayerType t;
    t.name = two_d ? "BatchNorm2d" : "BatchNorm1d";
    t.category = "Normalization";
    t.display_name = two_d ? "Batch normalization (images)" : "Batch normalization (features)";
    t.description = "Normalises each channel with batch statistics while training, running ones in evaluation.";
    t.inputs = {{"input", two_d ? "[N, C, H, W]" : "[N, C] or [N, C, L]"}};
    t.outputs = {{"output", "the input's shape"}};
    t.params = {int_param_0("num_features", kBig, "channels; 0 = taken from the input", "auto"),
                float_param("eps", 1e-5, 1e-12, 1, "added to the variance"),
                float_param("momentum", 0.1, 0, 1, "weight of each batch in the running statistics")};
    t.shape = [two_d](const ShapeContext& c) -> std::vector<Shape> {
      const Shape& s = one_input(c);
      if (two_d) require_rank(c, 3, "[N, C, H, W]");
      else if (s.size() != 1 && s.size() != 2)
        fail("input", c.node.label() + " expects input [N, C] or [N, C, L] but receives " + batched(s) + from(c, 0));
      const int64_t want = c.params.integer("num_features");
      if (want && want != s[0])
        fail("input", c.node.label() + " expects " + std::to_string(want) + " channels but receives " +
                          std::to_string(s[0]) + from(c, 0));
      return {s};
    };
    // A scale and a shift per channel (the running statistics are buffers, not learned).
    t.parameter_count = [](const Params&, const std::vector<Shape>& in) { return 2 * double(in.at(0)[0]); };
    t.build = [two_d](const BuildContext& b) {
      const int64_t n = b.inputs.at(0)[0];
      const float eps = float(b.params.real("eps")), m = float(b.params.real("momentum"));
      return single(two_d ? std::shared_ptr<nn::Module>(std::make_shared<nn::BatchNorm2d>(n, eps, m))
                          : std::make_shared<nn::BatchNorm1d>(n, eps, m));
    };
    t.onnx = [](const OnnxContext& c) {  // inference: the running statistics
      c.out.add_node("BatchNormalization",
                     {c.input_names[0], c.parameter("weight"), c.parameter("bias"), c.parameter("running_mean"),
                      c.parameter("running_var")},
                     c.output_names, {{"epsilon", float(c.params.real("eps"))}});
    };
    types_.push_back(std::move(t));
  }

  // ---- Recurrent ----
  // LSTM, GRU and RNN over a sequence [N, T, features] (batch first), as nn::Recurrent.
  // ONNX's LSTM / GRU / RNN (opset 13) are time-major and order the gates their own way
  // (LSTM i,o,f,c; GRU z,r,h), so the export transposes around one node per layer, reorders
  // the gate blocks of PyTorch's weights and stacks the directions; GRU's linear_before_reset=1
  // is PyTorch's b_hn inside r ⊙ (…).
  struct RecurrentKind {
    const char* name;
    const char* display;
    const char* description;
    int64_t gates;
    std::vector<int64_t> onnx_gate_order;  // PyTorch's gate blocks in ONNX's order
  };
  for (const RecurrentKind& k :
       {RecurrentKind{"LSTM", "LSTM (long short-term memory)",
                      "A recurrent layer with input, forget and output gates and a cell state.", 4, {0, 3, 1, 2}},
        RecurrentKind{"GRU", "GRU (gated recurrent unit)", "A recurrent layer with reset and update gates.", 3,
                      {1, 0, 2}},
        RecurrentKind{"RNN", "RNN (tanh)", "A plain recurrent layer: h' = tanh(W_ih x + W_hh h + b).", 1, {0}}}) {
    LayerType t;
    t.name = k.name;
    t.category = "Recurrent";
    t.display_name = k.display;
    t.description = k.description;
    t.inputs = {{"input", "a sequence [N, T, features]"}};
    t.outputs = {{"output", "the output at every step [N, T, hidden_size x directions]"}};
    t.params = {int_param("hidden_size", 128, 1, 65536, "units of the hidden state"),
                int_param("num_layers", 1, 1, 8, "recurrent layers stacked, each reading the previous one's outputs"),
                bool_param("bidirectional", false, "also run backward in time; the outputs are side by side"),
                float_param("dropout", 0, 0, 0.99, "dropout on the outputs of every layer but the last, in training")};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      const Shape& s = one_input(c);
      if (s.size() != 2)
        fail("input", c.node.label() + " expects a sequence [N, T, features] but receives " + batched(s) + from(c, 0) +
                          " (an Embedding or a Reshape to [T, F] makes one)");
      return {{s[0], c.params.integer("hidden_size") * (c.params.flag("bidirectional") ? 2 : 1)}};
    };
    // Per layer and direction: W_ih [G*H, in], W_hh [G*H, H] and two biases [G*H].
    auto per_direction = [g = k.gates](const Params& p, const Shape& in, auto&& f) {
      const int64_t h = p.integer("hidden_size"), dirs = p.flag("bidirectional") ? 2 : 1;
      for (int64_t l = 0; l < p.integer("num_layers"); ++l) f(double(g * h), double(l == 0 ? in.back() : h * dirs), double(h), dirs);
    };
    t.parameter_count = [per_direction](const Params& p, const std::vector<Shape>& in) {
      double n = 0;
      per_direction(p, in.at(0), [&n](double gh, double fin, double h, int64_t dirs) { n += double(dirs) * gh * (fin + h + 2); });
      return n;
    };
    // Every step: the input projection and the recurrent product of each layer and direction.
    t.macs = [per_direction](const Params& p, const std::vector<Shape>& in, const std::vector<Shape>&) {
      double m = 0;
      per_direction(p, in.at(0), [&m](double gh, double fin, double h, int64_t dirs) { m += double(dirs) * gh * (fin + h); });
      return m * double(in.at(0)[0]);
    };
    t.build = [name = std::string(k.name)](const BuildContext& b) {
      nn::RecurrentOptions o;
      o.hidden_size = b.params.integer("hidden_size");
      o.num_layers = b.params.integer("num_layers");
      o.bidirectional = b.params.flag("bidirectional");
      o.dropout = float(b.params.real("dropout"));
      const int64_t in = b.inputs.at(0).back();
      if (name == "LSTM") return single(std::make_shared<nn::LSTM>(in, o, b.gen));
      if (name == "GRU") return single(std::make_shared<nn::GRU>(in, o, b.gen));
      return single(std::make_shared<nn::RNN>(in, o, b.gen));
    };
    t.onnx = [k](const OnnxContext& c) {
      NoGradGuard no_grad;
      const int64_t h = c.params.integer("hidden_size"), layers = c.params.integer("num_layers");
      const bool bidirectional = c.params.flag("bidirectional");
      const int64_t dirs = bidirectional ? 2 : 1;
      // [G*H, …] in PyTorch's gate order -> ONNX's.
      auto reorder = [&](const Tensor& w) {
        std::vector<Tensor> blocks;
        for (int64_t g : k.onnx_gate_order) blocks.push_back(w.narrow(0, g * h, h));
        return concat(blocks, 0);
      };
      auto stacked = [&](int64_t l, const std::function<Tensor(const std::string& suffix)>& one) {
        std::vector<Tensor> per_dir;
        for (int64_t d = 0; d < dirs; ++d)
          per_dir.push_back(one("_l" + std::to_string(l) + (d ? "_reverse" : "")).unsqueeze(0));
        return concat(per_dir, 0).contiguous();
      };
      auto weight = [&](const std::string& name) { return c.out.weights(c.node.id + "." + name); };
      c.out.add_initializer(c.name("reshape"), std::vector<int64_t>{0, 0, -1});
      c.out.add_node("Transpose", {c.input_names[0]}, {c.name("x_l0")}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
      for (int64_t l = 0; l < layers; ++l) {
        const std::string L = "_l" + std::to_string(l);
        c.out.add_initializer(c.name("W" + L), stacked(l, [&](const std::string& sfx) { return reorder(weight("weight_ih" + sfx)); }));
        c.out.add_initializer(c.name("R" + L), stacked(l, [&](const std::string& sfx) { return reorder(weight("weight_hh" + sfx)); }));
        c.out.add_initializer(c.name("B" + L), stacked(l, [&](const std::string& sfx) {
                                return concat({reorder(weight("bias_ih" + sfx)), reorder(weight("bias_hh" + sfx))}, 0);
                              }));
        OnnxAttributes attrs{{"hidden_size", h}};
        if (bidirectional) attrs.push_back({"direction", std::string("bidirectional")});
        if (k.gates == 3) attrs.push_back({"linear_before_reset", int64_t(1)});
        // Y [T, dirs, N, H] -> [T, N, dirs, H] -> [T, N, dirs*H], the next layer's input.
        c.out.add_node(k.name, {c.name("x" + L), c.name("W" + L), c.name("R" + L), c.name("B" + L)}, {c.name("y" + L)},
                       attrs);
        c.out.add_node("Transpose", {c.name("y" + L)}, {c.name("yt" + L)}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
        c.out.add_node("Reshape", {c.name("yt" + L), c.name("reshape")}, {c.name("x_l" + std::to_string(l + 1))});
      }
      c.out.add_node("Transpose", {c.name("x_l" + std::to_string(layers))}, c.output_names,
                     {{"perm", std::vector<int64_t>{1, 0, 2}}});
    };
    types_.push_back(std::move(t));
  }

  // ---- Sequence models: LayerNorm, attention and learned positions ([N, T, E]) ----
  {
    LayerType t;
    t.name = "LayerNorm";
    t.category = "Normalization";
    t.display_name = "Layer normalization";
    t.description = "Normalises each position's features (the last dimension) to mean 0 and variance 1, then scales "
                    "and shifts them by learned weights.";
    t.inputs = {{"input", "[N, ..., features]"}};
    t.outputs = {{"output", "the input's shape"}};
    t.params = {float_param("eps", 1e-5, 1e-12, 1, "added to the variance")};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      if (one_input(c).empty())
        fail("input", c.node.label() + " normalises features but receives a single value per example" + from(c, 0));
      return {one_input(c)};
    };
    t.parameter_count = [](const Params&, const std::vector<Shape>& in) { return 2 * double(in.at(0).back()); };
    t.build = [](const BuildContext& b) {
      return single(std::make_shared<nn::LayerNorm>(b.inputs.at(0).back(), float(b.params.real("eps"))));
    };
    // opset 13 has no LayerNormalization: (x - mean) / sqrt(var + eps) * weight + bias.
    t.onnx = [](const OnnxContext& c) {
      const OnnxAttributes last{{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t(1)}};
      c.out.add_initializer(c.name("eps"), full({}, float(c.params.real("eps"))));
      c.out.add_node("ReduceMean", c.input_names, {c.name("mean")}, last);
      c.out.add_node("Sub", {c.input_names[0], c.name("mean")}, {c.name("centered")});
      c.out.add_node("Mul", {c.name("centered"), c.name("centered")}, {c.name("squared")});
      c.out.add_node("ReduceMean", {c.name("squared")}, {c.name("var")}, last);
      c.out.add_node("Add", {c.name("var"), c.name("eps")}, {c.name("var_eps")});
      c.out.add_node("Sqrt", {c.name("var_eps")}, {c.name("std")});
      c.out.add_node("Div", {c.name("centered"), c.name("std")}, {c.name("normalized")});
      c.out.add_node("Mul", {c.name("normalized"), c.parameter("weight")}, {c.name("scaled")});
      c.out.add_node("Add", {c.name("scaled"), c.parameter("bias")}, c.output_names);
    };
    types_.push_back(std::move(t));
  }
  {
    LayerType t;
    t.name = "MultiheadAttention";
    t.category = "Attention";
    t.display_name = "Multi-head self-attention";
    t.description = "Each position gathers information from the positions it attends to (with causal, only the earlier "
                    "ones), in num_heads heads over the features; PyTorch's nn.MultiheadAttention with query = key = "
                    "value.";
    t.inputs = {{"input", "[N, T, E], E divisible by num_heads"}};
    t.outputs = {{"output", "[N, T, E]"}};
    t.params = {int_param("num_heads", 4, 1, 4096, "attention heads; each sees E / num_heads features"),
                bool_param("causal", true, "each position sees only itself and earlier positions"),
                float_param("dropout", 0, 0, 0.99, "dropout on the attention weights while training")};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      require_rank(c, 2, "[N, T, E] (a sequence of T positions with E features each)");
      const Shape& s = one_input(c);
      const int64_t heads = c.params.integer("num_heads");
      if (s[1] % heads != 0)
        fail("input", c.node.label() + " splits the " + std::to_string(s[1]) + " features of " + batched(s) + from(c, 0) +
                          " into " + std::to_string(heads) + " heads, but " + std::to_string(s[1]) +
                          " is not divisible by " + std::to_string(heads) + " (change num_heads or the features)");
      return {s};
    };
    // in_proj [3E, E] + [3E], out_proj [E, E] + [E].
    t.parameter_count = [](const Params&, const std::vector<Shape>& in) {
      const double e = double(in.at(0)[1]);
      return 4 * e * e + 4 * e;
    };
    // The projections (3E + E outputs of E products per position) and the two T×T×E
    // products, scores and weighted values.
    t.macs = [](const Params&, const std::vector<Shape>& in, const std::vector<Shape>&) {
      const double time = double(in.at(0)[0]), e = double(in.at(0)[1]);
      return 4 * time * e * e + 2 * time * time * e;
    };
    t.build = [](const BuildContext& b) {
      return single(std::make_shared<nn::MultiheadAttention>(b.inputs.at(0)[1], b.params.integer("num_heads"),
                                                             b.params.flag("causal"), float(b.params.real("dropout")),
                                                             b.gen));
    };
    // MatMuls by slices of in_proj_weight, heads by Reshape/Transpose, the causal mask a
    // constant [T, T] of 0 and -inf added to the scores before Softmax.
    t.onnx = [](const OnnxContext& c) {
      const int64_t time = c.inputs[0][0], e = c.inputs[0][1], heads = c.params.integer("num_heads");
      const Tensor w = c.out.weights(c.node.id + ".in_proj_weight"), b = c.out.weights(c.node.id + ".in_proj_bias");
      c.out.add_initializer(c.name("heads_shape"), std::vector<int64_t>{0, -1, heads, e / heads});
      const char* parts[] = {"q", "k", "v"};
      for (int64_t i = 0; i < 3; ++i) {
        const std::string p = parts[i];
        c.out.add_initializer(c.name(p + "_weight_t"), narrow(w, 0, i * e, e).t().contiguous());
        c.out.add_initializer(c.name(p + "_bias"), narrow(b, 0, i * e, e).contiguous());
        c.out.add_node("MatMul", {c.input_names[0], c.name(p + "_weight_t")}, {c.name(p + "_product")});
        c.out.add_node("Add", {c.name(p + "_product"), c.name(p + "_bias")}, {c.name(p + "_flat")});
        c.out.add_node("Reshape", {c.name(p + "_flat"), c.name("heads_shape")}, {c.name(p + "_split")});
        // q and v to [N, H, T, D]; k to [N, H, D, T], ready for q·kᵀ.
        c.out.add_node("Transpose", {c.name(p + "_split")}, {c.name(p + "_heads")},
                       {{"perm", i == 1 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3}}});
      }
      c.out.add_initializer(c.name("scale"), full({}, 1.f / std::sqrt(float(e / heads))));
      c.out.add_node("MatMul", {c.name("q_heads"), c.name("k_heads")}, {c.name("product")});
      std::string scores = c.name("scores");
      c.out.add_node("Mul", {c.name("product"), c.name("scale")}, {scores});
      if (c.params.flag("causal")) {
        Tensor mask = zeros({time, time});
        for (int64_t i = 0; i < time; ++i)
          for (int64_t j = i + 1; j < time; ++j) mask.data()[i * time + j] = -std::numeric_limits<float>::infinity();
        c.out.add_initializer(c.name("causal_mask"), mask);
        c.out.add_node("Add", {scores, c.name("causal_mask")}, {c.name("masked_scores")});
        scores = c.name("masked_scores");
      }
      c.out.add_node("Softmax", {scores}, {c.name("weights")}, {{"axis", int64_t(-1)}});
      c.out.add_node("MatMul", {c.name("weights"), c.name("v_heads")}, {c.name("attended")});
      c.out.add_node("Transpose", {c.name("attended")}, {c.name("attended_t")}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
      c.out.add_initializer(c.name("joined_shape"), std::vector<int64_t>{0, -1, e});
      c.out.add_node("Reshape", {c.name("attended_t"), c.name("joined_shape")}, {c.name("joined")});
      c.out.add_initializer(c.name("out_weight_t"), c.out.weights(c.node.id + ".out_proj.weight").t().contiguous());
      c.out.add_node("MatMul", {c.name("joined"), c.name("out_weight_t")}, {c.name("out_product")});
      c.out.add_node("Add", {c.name("out_product"), c.parameter("out_proj.bias")}, c.output_names);
    };
    types_.push_back(std::move(t));
  }
  {
    LayerType t;
    t.name = "PositionalEmbedding";
    t.category = "Attention";
    t.display_name = "Positional embedding (learned)";
    t.description = "Adds a learned vector for each position 0..T-1, so that attention can tell positions apart.";
    t.inputs = {{"input", "[N, T, E], T at most max_len"}};
    t.outputs = {{"output", "[N, T, E]"}};
    t.params = {int_param("max_len", 64, 1, kBig, "the longest sequence; one learned vector per position")};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      require_rank(c, 2, "[N, T, E] (a sequence of T positions with E features each)");
      const Shape& s = one_input(c);
      const int64_t max_len = c.params.integer("max_len");
      if (s[0] > max_len)
        fail("input", c.node.label() + " receives sequences of T = " + std::to_string(s[0]) + " positions" + from(c, 0) +
                          " but max_len is " + std::to_string(max_len) + " (raise max_len to at least " +
                          std::to_string(s[0]) + ")");
      return {s};
    };
    t.parameter_count = [](const Params& p, const std::vector<Shape>& in) {
      return double(p.integer("max_len")) * double(in.at(0)[1]);
    };
    t.build = [](const BuildContext& b) {
      return single(std::make_shared<nn::PositionalEmbedding>(b.params.integer("max_len"), b.inputs.at(0)[1], b.gen));
    };
    // weight[:T] with T read from the input's shape, added.
    t.onnx = [](const OnnxContext& c) {
      c.out.add_initializer(c.name("one"), std::vector<int64_t>{1});
      c.out.add_initializer(c.name("two"), std::vector<int64_t>{2});
      c.out.add_initializer(c.name("zero"), std::vector<int64_t>{0});
      c.out.add_node("Shape", c.input_names, {c.name("shape")});
      c.out.add_node("Slice", {c.name("shape"), c.name("one"), c.name("two")}, {c.name("time")});
      c.out.add_node("Slice", {c.parameter("weight"), c.name("zero"), c.name("time"), c.name("zero")}, {c.name("positions")});
      c.out.add_node("Add", {c.input_names[0], c.name("positions")}, c.output_names);
    };
    types_.push_back(std::move(t));
  }

  // ---- Activation ----
  types_.push_back(activation("ReLU", "ReLU", "max(x, 0).", [](const Params&) { return std::make_shared<nn::ReLU>(); },
                              onnx_op("Relu")));
  types_.push_back(activation(
      "LeakyReLU", "Leaky ReLU", "x for x > 0, negative_slope·x otherwise.",
      [](const Params& p) { return std::make_shared<nn::LeakyReLU>(float(p.real("negative_slope"))); },
      [](const OnnxContext& c) {
        onnx_op("LeakyRelu", {{"alpha", float(c.params.real("negative_slope"))}})(c);
      },
      {float_param("negative_slope", 0.01, 0, 1, "slope for negative inputs")}));
  types_.push_back(activation("Sigmoid", "Sigmoid", "1 / (1 + e^-x).",
                              [](const Params&) { return std::make_shared<nn::Sigmoid>(); }, onnx_op("Sigmoid")));
  types_.push_back(activation("Tanh", "Tanh", "Hyperbolic tangent.", [](const Params&) { return std::make_shared<nn::Tanh>(); },
                              onnx_op("Tanh")));
  // The exact (erf) GELU as core computes it, (0.5·x)·(1 + erf(x·(1/√2))): opset 13 has no Gelu.
  types_.push_back(activation("GELU", "GELU", "x·Φ(x), the Gaussian error linear unit.",
                              [](const Params&) { return std::make_shared<nn::GELU>(); },
                              [](const OnnxContext& c) {
                                const std::string& x = c.input_names[0];
                                c.out.add_initializer(c.name("half"), full({}, 0.5f));
                                c.out.add_initializer(c.name("one"), full({}, 1.f));
                                c.out.add_initializer(c.name("inv_sqrt2"), full({}, float(M_SQRT1_2)));
                                c.out.add_node("Mul", {x, c.name("half")}, {c.name("half_x")});
                                c.out.add_node("Mul", {x, c.name("inv_sqrt2")}, {c.name("scaled")});
                                c.out.add_node("Erf", {c.name("scaled")}, {c.name("erf")});
                                c.out.add_node("Add", {c.name("erf"), c.name("one")}, {c.name("one_plus_erf")});
                                c.out.add_node("Mul", {c.name("half_x"), c.name("one_plus_erf")}, c.output_names);
                              }));
  {
    LayerType t = activation(
        "Softmax", "Softmax", "Turns scores into probabilities along a dimension.",
        [](const Params& p) { return std::make_shared<nn::Softmax>(p.integer("dim")); },
        [](const OnnxContext& c) { onnx_op("Softmax", {{"axis", c.params.integer("dim")}})(c); },
        {int_param("dim", -1, -8, 8, "dimension, counting the batch as 0; negative counts from the end")});
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      const int64_t rank = int64_t(one_input(c).size()) + 1, dim = c.params.integer("dim");
      const int64_t d = dim < 0 ? dim + rank : dim;
      if (d <= 0 || d >= rank)
        fail("", c.node.label() + ": dim " + std::to_string(dim) + " is not a feature dimension of " +
                     batched(one_input(c)) + (d == 0 ? " (0 is the batch; -1 is the last feature dimension)" : ""));
      return {one_input(c)};
    };
    types_.push_back(std::move(t));
  }

  // ---- Merge ----
  {
    LayerType t;
    t.name = "Add";
    t.category = "Merge";
    t.display_name = "Add";
    t.description = "Sums its inputs, e.g. for a residual connection.";
    t.inputs = {{"inputs", "two or more tensors of the same shape", true, true}};
    t.outputs = {{"output", "their shape"}};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      if (c.inputs.size() < 2) fail("inputs", c.node.label() + " needs at least two inputs, it has " + std::to_string(c.inputs.size()));
      for (size_t i = 1; i < c.inputs.size(); ++i)
        if (c.inputs[i] != c.inputs[0])
          fail("inputs", c.node.label() + " adds " + batched(c.inputs[0]) + from(c, 0) + " and " +
                             batched(c.inputs[i]) + from(c, i) + ": the shapes must be equal");
      return {c.inputs[0]};
    };
    t.build = [](const BuildContext&) {
      return BuiltNode{nullptr, [](const std::vector<Tensor>& in) {
                         Tensor s = in.at(0);
                         for (size_t i = 1; i < in.size(); ++i) s = s + in[i];
                         return s;
                       }};
    };
    t.onnx = [](const OnnxContext& c) {  // left to right, as the sum above
      std::string sum = c.input_names[0];
      for (size_t i = 1; i < c.input_names.size(); ++i) {
        const std::string next = i + 1 == c.input_names.size() ? c.output_names[0] : c.name("sum" + std::to_string(i));
        c.out.add_node("Add", {sum, c.input_names[i]}, {next});
        sum = next;
      }
    };
    types_.push_back(std::move(t));
  }
  {
    LayerType t;
    t.name = "Concat";
    t.category = "Merge";
    t.display_name = "Concatenate";
    t.description = "Joins its inputs along a dimension.";
    t.inputs = {{"inputs", "tensors equal in every dimension but dim", true, true}};
    t.outputs = {{"output", "the joined tensor"}};
    t.params = {int_param("dim", 1, 1, 8, "dimension to join along, counting the batch as 0")};
    t.shape = [](const ShapeContext& c) -> std::vector<Shape> {
      if (c.inputs.empty()) fail("inputs", c.node.label() + " has no inputs");
      const int64_t d = c.params.integer("dim") - 1;  // per-example index
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
    t.build = [](const BuildContext& b) {
      const int64_t dim = b.params.integer("dim");
      return BuiltNode{nullptr, [dim](const std::vector<Tensor>& in) { return concat(in, dim); }};
    };
    t.onnx = [](const OnnxContext& c) { onnx_op("Concat", {{"axis", c.params.integer("dim")}})(c); };
    types_.push_back(std::move(t));
  }

  // ---- Loss ----
  types_.push_back(loss_type(
      "CrossEntropy", "Cross-entropy loss", "Classification: softmax over class scores against class labels.",
      {float_param("label_smoothing", 0, 0, 1, "share of the target spread evenly over all classes")},
      [](const ShapeContext& c) -> std::vector<Shape> {
        // Class scores last: [N, classes] against [N], or per position [N, T, classes] against [N, T].
        const Shape &pred = c.inputs.at(0), &target = c.inputs.at(1);
        if (pred.empty())
          fail("input", c.node.label() + " expects class scores [N, classes] (or [N, T, classes] per position) but "
                            "receives " + batched(pred) + from(c, 0));
        const Shape lead(pred.begin(), pred.end() - 1);
        if (target != lead)
          fail("target", c.node.label() + " scores " + batched(pred) + from(c, 0) + " against targets " + batched(target) +
                             from(c, 1) + ": it needs one class index per " +
                             (lead.empty() ? "example, targets [N]" : "position, targets " + batched(lead)));
        if (c.dataset && c.dataset->classes == 0)
          fail("target", c.node.label() + " needs class labels, but the dataset is a regression task (use MSE)");
        if (c.dataset && pred.back() != c.dataset->classes)
          fail("input", c.node.label() + " receives " + std::to_string(pred.back()) + " class scores" + from(c, 0) +
                            " but the dataset has " + std::to_string(c.dataset->classes) + " classes");
        return {};
      },
      [](const Params& p) {
        const float smoothing = float(p.real("label_smoothing"));
        return [smoothing](const Tensor& pred, const Tensor& target) { return cross_entropy(pred, target, smoothing); };
      },
      /*classification=*/true));
  types_.push_back(loss_type("MSE", "Mean squared error", "Regression: mean of (prediction - target)².", {},
                             elementwise_loss_rule, [](const Params&) {
                               return [](const Tensor& pred, const Tensor& target) {
                                 return mse_loss(match_target(pred, target), target);
                               };
                             }));
  types_.push_back(loss_type("BCEWithLogits", "Binary cross-entropy (logits)",
                             "Yes/no targets in [0, 1] against raw scores (a sigmoid is built in).", {},
                             elementwise_loss_rule, [](const Params&) {
                               return [](const Tensor& pred, const Tensor& target) {
                                 return binary_cross_entropy_with_logits(match_target(pred, target), target);
                               };
                             }));
}

}  // namespace plexus::graph
