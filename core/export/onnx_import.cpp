#include "export/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/csv_format.h"
#include "export/onnx_importer.h"
#include "graph/layout.h"
#include "graph/module_blocks.h"
#include "graph/registry.h"
#include "graph/validate.h"
#include "io/safetensors.h"
#include "layers/compiler.h"
#include "session/trained_model.h"
#include "train/checkpoint.h"
#include "util/error.h"

namespace plexus::exporter {
namespace onnx_import {

int64_t Constant::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Tensor Constant::tensor() const {
  if (!integer) return from_vector(floats, Shape(dims.begin(), dims.end()));
  std::vector<float> f(ints.begin(), ints.end());
  return from_vector(f, Shape(dims.begin(), dims.end()));
}

bool Importer::has_input(size_t input) const {
  return int(input) < node->input_size() && !node->input(int(input)).empty();
}

bool Importer::is_constant(size_t input) const {
  return has_input(input) && constants.count(node->input(int(input))) > 0;
}

const Constant& Importer::constant(size_t input) const {
  if (!has_input(input)) throw Unmappable{"input " + std::to_string(input) + " is missing"};
  const auto it = constants.find(node->input(int(input)));
  if (it == constants.end())
    throw Unmappable{"input " + std::to_string(input) + " ('" + node->input(int(input)) +
                     "') is computed by the graph, where only a constant (an initializer) can be mapped"};
  return it->second;
}

const Value& Importer::value(size_t input) const {
  if (!has_input(input)) throw Unmappable{"input " + std::to_string(input) + " is missing"};
  const auto it = values.find(node->input(int(input)));
  if (it == values.end() && time_major.count(node->input(int(input))))
    throw Unmappable{"input " + std::to_string(input) + " ('" + node->input(int(input)) +
                     "') is a sequence transposed to time-major, which only a recurrent layer or the packed input "
                     "projection of nn.MultiheadAttention (self-attention) is read from"};
  if (it == values.end())
    throw Unmappable{"input " + std::to_string(input) + " ('" + node->input(int(input)) +
                     "') is a constant, where only a tensor the graph computes can be mapped"};
  return it->second;
}

std::optional<Shape> Importer::output_shape(size_t output) const {
  if (int(output) >= node->output_size()) return std::nullopt;
  const auto it = inferred.find(node->output(int(output)));
  if (it == inferred.end()) return std::nullopt;
  return it->second;
}

namespace {
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
}  // namespace

bool Importer::has_attr(const std::string& name) const { return find_attr(*node, name) != nullptr; }
int64_t Importer::attr_int(const std::string& name, int64_t fallback) const {
  const onnx::AttributeProto* a = find_attr(*node, name);
  return a ? a->i() : fallback;
}
float Importer::attr_float(const std::string& name, float fallback) const {
  const onnx::AttributeProto* a = find_attr(*node, name);
  return a ? a->f() : fallback;
}
std::vector<int64_t> Importer::attr_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
  const onnx::AttributeProto* a = find_attr(*node, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}
std::string Importer::attr_string(const std::string& name, const std::string& fallback) const {
  const onnx::AttributeProto* a = find_attr(*node, name);
  return a ? a->s() : fallback;
}

bool Importer::accounted_for(const std::string& t) const {
  return values.count(t) || constants.count(t) || shape_values.count(t) || zeros.count(t) || time_major.count(t) ||
         recurrent_y.count(t) || recurrent_y_tn.count(t) || recurrent_h.count(t) || recurrent_h_t.count(t) ||
         sequence_lens.count(t);
}

const onnx::NodeProto* producer(const Importer& im, const std::string& tensor) {
  for (const auto& entry : im.readers)
    for (const std::string& o : entry.second->output())
      if (o == tensor) return entry.second;
  return nullptr;
}

int Importer::consumers(const std::string& tensor) const {
  const auto it = consumer_count.find(tensor);
  return it == consumer_count.end() ? 0 : it->second;
}

std::string Importer::unique_id(const std::string& wanted) {
  std::string id;
  for (char c : wanted) id += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0])) || id[0] == '-') id = "_" + id;
  std::string out = id;
  for (int i = 2; used_ids_.count(out); ++i) out = id + "_" + std::to_string(i);
  used_ids_.insert(out);
  return out;
}

namespace {
// Plexus's export names a node "<id>/<Op>" and documents it "<Type> '<name>' (node <id>)": the name.
std::string plexus_name(const onnx::NodeProto& n) {
  if (n.name().empty() || n.name()[0] == '/' || n.name().find('/') == std::string::npos) return "";
  const std::string& doc = n.doc_string();
  const size_t open = doc.find('\''), close = doc.rfind('\'');
  return open == std::string::npos || close <= open + 1 ? "" : doc.substr(open + 1, close - open - 1);
}
}  // namespace

std::string Importer::node_name() {
  std::string op = node->op_type();
  std::transform(op.begin(), op.end(), op.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  const std::string path = module_path(node->name()), own = plexus_name(*node);
  std::string name = !own.empty()  ? own
                     : path.empty() ? op
                     : containers.count(path) || used_names_.count(path) ? path + "." + op
                                                                         : path;
  const std::string base = name;
  for (int i = 2; used_names_.count(name); ++i) name = base + "_" + std::to_string(i);
  used_names_.insert(name);
  return name;
}

std::string Importer::add_node(const std::string& type_name, std::map<std::string, graph::ParamValue> params,
                               const std::vector<Value>& inputs) {
  const graph::LayerType* type = graph::Registry::instance().find(type_name);
  if (!type) throw Error("ONNX import: no layer type " + type_name);  // a mapping's mistake
  graph::Node n;
  n.name = node_name();
  // Plexus's export gives back the node's id; other models' nodes take it from the name.
  n.id = unique_id(plexus_name(*node).empty() ? n.name : module_path(node->name()));
  n.type = type_name;
  n.params = std::move(params);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const graph::PortSpec& port = type->inputs.at(std::min(i, type->inputs.size() - 1));
    built.edges.push_back({inputs[i].port, {n.id, port.name}});
  }
  const std::vector<graph::PortSpec> outs = type->outputs_of(n);
  // Where ONNX's shape inference lost track (after reshapes computed from Shape, as attention
  // writes), the layer's own shape rule gives the output shapes.
  std::vector<Shape> own;
  graph::ShapeContext context{n, {}, {}, {}};
  for (size_t i = 0; i < inputs.size() && inputs[i].shape; ++i) {
    context.inputs.push_back(*inputs[i].shape);
    context.input_ports.push_back(type->inputs.at(std::min(i, type->inputs.size() - 1)).name);
    context.input_sources.push_back("'" + inputs[i].port.node + "'");
  }
  if (context.inputs.size() == inputs.size() && type->shape) try {
      own = type->shape(context);
    } catch (const graph::ShapeProblem&) {  // the import's checks name what is wrong
    } catch (const graph::ShapeUnknown&) {
    }
  for (size_t o = 0; o < outs.size() && int(o) < node->output_size(); ++o) {
    std::optional<Shape> shape = output_shape(o);
    if (!shape && o < own.size()) shape = own[o];
    if (!node->output(int(o)).empty()) values[node->output(int(o))] = {{n.id, outs[o].name}, shape};
  }
  built.nodes.push_back(std::move(n));
  return built.nodes.back().id;
}

void Importer::set_weight(const std::string& id, const std::string& param, const Tensor& value) {
  const std::string name = id + "." + param;
  if (Tensor* t = weight(name))
    *t = value.contiguous();
  else
    weights.emplace_back(name, value.contiguous());
}

Tensor* Importer::weight(const std::string& full_name) {
  for (auto& [name, t] : weights)
    if (name == full_name) return &t;
  return nullptr;
}

void Importer::alias(size_t output, const Value& v) {
  values[node->output(int(output))] = {v.port, output_shape(output) ? output_shape(output) : v.shape};
}

void Importer::alias_constant(size_t output, const Constant& c) { constants[node->output(int(output))] = c; }

std::string module_path(const std::string& onnx_name) {
  if (onnx_name.empty()) return "";
  if (onnx_name[0] != '/') {
    const size_t slash = onnx_name.find('/');
    return slash == std::string::npos ? "" : onnx_name.substr(0, slash);
  }
  // PyTorch's scopes: each segment is a child's name, and a Sequential's child repeats the
  // Sequential's segment ("/layer1/layer1.0/conv1/Conv", ".../downsample/downsample.0/Conv");
  // the last segment is the op.
  std::vector<std::string> segments;
  size_t start = 1;
  for (size_t slash = onnx_name.find('/', start); slash != std::string::npos; slash = onnx_name.find('/', start)) {
    const std::string segment = onnx_name.substr(start, slash - start);
    start = slash + 1;
    if (segment.empty()) continue;
    if (!segments.empty() && segment.starts_with(segments.back() + "."))
      segments.back() = segment;
    else
      segments.push_back(segment);
  }
  std::string path;
  for (const std::string& s : segments) path += (path.empty() ? "" : ".") + s;
  return path;
}

}  // namespace onnx_import

namespace {

using onnx_import::Constant;
using onnx_import::Importer;
using onnx_import::Unmappable;

[[noreturn]] void malformed(const std::string& source, const std::string& what) {
  throw IoError(source + ": not a valid ONNX model: " + what);
}

// A tensor's `n` values of ONNX type `Stored` — raw_data (little-endian) or the typed field — as
// `Out`; `size_error` is called with the count found when it is not n.
template <class Stored, class Field, class Out, class OnSize>
void read_values(const onnx::TensorProto& t, const Field& typed, int64_t n, std::vector<Out>& out,
                 const OnSize& size_error) {
  // The count is checked against what the file holds before anything is reserved: dims alone
  // may claim terabytes.
  if (!t.has_raw_data()) {
    if (typed.size() != n) size_error(size_t(typed.size()));
    out.reserve(size_t(n));
    for (const auto v : typed) out.push_back(Out(v));
    return;
  }
  const std::string& raw = t.raw_data();
  if (raw.size() != size_t(n) * sizeof(Stored)) size_error(raw.size() / sizeof(Stored));
  out.reserve(size_t(n));
  for (size_t i = 0; i < size_t(n); ++i) {
    Stored v;
    std::memcpy(&v, raw.data() + i * sizeof(Stored), sizeof(Stored));
    out.push_back(Out(v));
  }
}

// A tensor's values: raw_data (little-endian) or the typed fields.
Constant read_tensor(const onnx::TensorProto& t, const std::string& source) {
  Constant c;
  c.dims.assign(t.dims().begin(), t.dims().end());
  int64_t n = 1;
  for (int64_t d : c.dims) {
    if (d < 0 || (d > 0 && n > (int64_t(1) << 40) / d)) malformed(source, "tensor '" + t.name() + "' has bad dims");
    n *= d;
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw IoError(source + ": tensor '" + t.name() +
                  "' keeps its data in an external file, which import does not read");
  auto size_error = [&](size_t got) {
    malformed(source, "tensor '" + t.name() + "' holds " + std::to_string(got) + " values where its dims need " +
                          std::to_string(n));
  };
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      read_values<float>(t, t.float_data(), n, c.floats, size_error);
      return c;
    case onnx::TensorProto::DOUBLE:
      read_values<double>(t, t.double_data(), n, c.floats, size_error);
      return c;
    case onnx::TensorProto::INT64:
      c.integer = true;
      read_values<int64_t>(t, t.int64_data(), n, c.ints, size_error);
      return c;
    case onnx::TensorProto::INT32:
      c.integer = true;
      read_values<int32_t>(t, t.int32_data(), n, c.ints, size_error);
      return c;
    default:
      throw IoError(source + ": tensor '" + t.name() + "' has data type " + std::to_string(t.data_type()) +
                    ", which import does not read (float, double, int32 and int64 only)");
  }
}

// Per-example shape of a value info: its dims after the batch, when all are known.
std::optional<Shape> per_example(const onnx::ValueInfoProto& v) {
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return std::nullopt;
  const auto& dims = v.type().tensor_type().shape().dim();
  if (dims.empty()) return std::nullopt;
  Shape s;
  for (int i = 1; i < dims.size(); ++i) {
    if (!dims[i].has_dim_value() || dims[i].dim_value() < 1) return std::nullopt;
    s.push_back(dims[i].dim_value());
  }
  return s;
}

onnx::ModelProto parse(std::string_view bytes, const std::string& source) {
  if (bytes.size() > size_t(INT_MAX)) malformed(source, "larger than the 2 GiB one protobuf message can hold");
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
    malformed(source, "the protobuf cannot be parsed (a truncated or damaged file, or not an ONNX model)");
  if (!model.has_graph() || model.graph().node_size() == 0) malformed(source, "it holds no graph");
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    malformed(source, std::string("ONNX's checker refuses it: ") + e.what());
  }
  // Names become a project's ids, labels and description, which are UTF-8 text; proto2 strings
  // are not checked as they are parsed.
  const auto utf8 = [&](const std::string& text, const std::string& what) {
    if (const int64_t at = data::csv_format::invalid_utf8_at(text); at >= 0)
      malformed(source, what + " is not valid UTF-8 (at byte " + std::to_string(at) + " of it)");
  };
  utf8(model.producer_name(), "the producer's name");
  utf8(model.producer_version(), "the producer's version");
  const onnx::GraphProto& g = model.graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const std::string which = "node " + std::to_string(i);
    utf8(g.node(i).name(), which + "'s name");
    for (const std::string& v : g.node(i).input()) utf8(v, which + "'s input name");
    for (const std::string& v : g.node(i).output()) utf8(v, which + "'s output name");
  }
  for (int i = 0; i < g.initializer_size(); ++i)
    utf8(g.initializer(i).name(), "initializer " + std::to_string(i) + "'s name");
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
    for (const onnx::ValueInfoProto& v : *list) utf8(v.name(), "a value's name");
  // ONNX's shape inference divides by these without checking them (a stride of 0 is a SIGFPE).
  for (const onnx::NodeProto& n : g.node())
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape" || a.name() == "group" ||
          a.name() == "blocksize") {
        const bool positive = a.type() == onnx::AttributeProto::INT
                                  ? a.i() >= 1
                                  : std::all_of(a.ints().begin(), a.ints().end(), [](int64_t v) { return v >= 1; });
        if (!positive) malformed(source, "node '" + n.name() + "' (" + n.op_type() + ") has " + a.name() + " below 1");
      }
  return model;
}

// Plexus's own export standardises the input first: Sub(x, mean), Mul(., 1/std), both
// per channel. Taken out, they become the imported model's input standardisation.
struct Standardisation {
  std::string centred, output;  // the Sub's and the Mul's outputs
  std::vector<float> mean, std;
  std::string input_id;  // the Input node's id in Plexus's names ("in/Sub": "in")
};
std::optional<Standardisation> find_standardisation(const onnx::GraphProto& g, const std::string& input,
                                                    const std::map<std::string, Constant>& constants) {
  const onnx::NodeProto *sub = nullptr, *mul = nullptr;
  for (const onnx::NodeProto& n : g.node())
    if (n.op_type() == "Sub" && n.input_size() == 2 && n.input(0) == input && constants.count(n.input(1))) sub = &n;
  if (!sub) return std::nullopt;
  for (const onnx::NodeProto& n : g.node())
    if (n.op_type() == "Mul" && n.input_size() == 2 && n.input(0) == sub->output(0) && constants.count(n.input(1)))
      mul = &n;
  if (!mul) return std::nullopt;
  const Constant &mean = constants.at(sub->input(1)), &inv = constants.at(mul->input(1));
  if (mean.integer || inv.integer || mean.numel() != inv.numel()) return std::nullopt;
  Standardisation s{sub->output(0), mul->output(0), mean.floats, {}, onnx_import::module_path(sub->name())};
  for (float v : inv.floats) {
    if (!(v > 0)) return std::nullopt;
    s.std.push_back(1.f / v);
  }
  return s;
}

std::vector<std::string> default_class_names(int64_t classes) {
  std::vector<std::string> out;
  for (int64_t c = 0; c < classes; ++c) out.push_back(std::to_string(c));
  return out;
}

// Every tensor the compiled graph holds must have come from the file, with its shape; a buffer
// ONNX has no counterpart of (BatchNorm's num_batches_tracked) keeps its initial value.
nn::NamedTensors complete_weights(const graph::Graph& g, const graph::DatasetInfo& info, const nn::NamedTensors& got,
                                  const std::string& source) {
  // A model whose nodes all map can still give a graph that does not check (shapes a crafted
  // file's value_info contradicts): refused naming the file, as the nodes that do not map are.
  const graph::Validation checked = graph::validate(g, &info);
  if (!checked.ok()) {
    std::string text = source + ": the graph the model maps to does not check (nothing was written):";
    for (const graph::Problem& p : checked.problems)
      if (p.severity == graph::Severity::Error) text += "\n  " + graph::to_string(p);
    throw ValueError(text);
  }
  const layers::CompiledGraph c = layers::compile(g, info, g.training.seed);
  nn::NamedTensors out;
  for (const auto& entry : c.model->state()) {
    const std::string& name = entry.first;
    const Tensor& initial = entry.second;
    const auto it = std::find_if(got.begin(), got.end(), [&](const auto& w) { return w.first == name; });
    if (it == got.end()) {
      if (name.ends_with(".num_batches_tracked")) {
        out.emplace_back(name, initial);
        continue;
      }
      throw Error("ONNX import of " + source + ": no weights for '" + name + "'");  // a mapping's mistake
    }
    // A file can contradict itself (a Gemm's weight that does not fit its input's shape) where
    // ONNX's checks leave the dimension open.
    if (it->second.shape() != initial.shape())
      throw ValueError(source + ": the file's '" + name + "' has shape " + to_string(it->second.shape()) +
                       " where the layer, from the shape of its input, holds " + to_string(initial.shape()));
    out.emplace_back(name, it->second);
  }
  return out;
}

}  // namespace

ImportedModel import_onnx_bytes(std::string_view bytes, const std::string& source) {
  const onnx::ModelProto model = parse(bytes, source);
  const onnx::GraphProto& g = model.graph();
  ImportedModel out;
  out.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") out.opset = op.version();

  Importer im;
  for (const onnx::TensorProto& t : g.initializer()) im.constants[t.name()] = read_tensor(t, source);
  // Constant nodes up front: a mapping looking ahead (a LayerNorm's chain) reads the exponent and
  // eps that PyTorch writes after the nodes using them.
  for (const onnx::NodeProto& n : g.node())
    if (n.op_type() == "Constant" && n.output_size() == 1) {
      const auto value = std::find_if(n.attribute().begin(), n.attribute().end(),
                                      [](const onnx::AttributeProto& a) { return a.name() == "value"; });
      if (value != n.attribute().end() && value->has_t()) im.constants[n.output(0)] = read_tensor(value->t(), source);
    }
  // ONNX's shape inference gives every intermediate tensor its shape.
  onnx::ModelProto inferred = model;
  try {
    onnx::shape_inference::InferShapes(inferred);
  } catch (const std::exception& e) {
    malformed(source, std::string("ONNX's shape inference fails: ") + e.what());
  }
  for (const auto* list : {&inferred.graph().value_info(), &inferred.graph().output(), &inferred.graph().input()})
    for (const onnx::ValueInfoProto& v : *list)
      if (std::optional<Shape> s = per_example(v)) im.inferred[v.name()] = *s;

  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const onnx::ValueInfoProto& v : g.input())
    if (!im.constants.count(v.name())) inputs.push_back(&v);
  if (inputs.size() != 1)
    throw ValueError(source + ": the model has " + std::to_string(inputs.size()) +
                     " inputs; import takes models with one input (the examples)");
  if (g.output_size() == 0) malformed(source, "it has no output");
  // Plexus's export of a graph with several losses: each other loss's prediction is an output
  // "<loss id>.prediction", through an Identity named "<loss id>/Identity".
  std::map<std::string, std::string> other_losses;  // output -> the loss id it names
  for (int o = 1; o < g.output_size(); ++o)
    for (const onnx::NodeProto& n : g.node())
      if (n.op_type() == "Identity" && n.output_size() == 1 && n.output(0) == g.output(o).name() &&
          n.name().ends_with("/Identity"))
        other_losses[n.output(0)] = onnx_import::module_path(n.name());
  const onnx::ValueInfoProto& input = *inputs[0];
  const std::optional<Shape> in_shape = per_example(input);
  if (!in_shape)
    throw ValueError(source + ": input '" + input.name() +
                     "' has no fixed shape after its batch dimension; import needs one shape per example");
  const int32_t in_type = input.type().tensor_type().elem_type();
  const bool ids = in_type == onnx::TensorProto::INT64 || in_type == onnx::TensorProto::INT32;
  if (!ids && in_type != onnx::TensorProto::FLOAT)
    throw ValueError(source + ": input '" + input.name() + "' is not float32 or integer (its ONNX type is " +
                     std::to_string(in_type) + ")");

  // Consumers, and the module paths that hold other modules (a node of such a path is named
  // after its op too: "layer1.0.add").
  for (const onnx::NodeProto& n : g.node()) {
    for (const std::string& i : n.input()) {
      ++im.consumer_count[i];
      im.readers.emplace(i, &n);
    }
    const std::string path = onnx_import::module_path(n.name());
    for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1))
      im.containers.insert(path.substr(0, dot));
  }
  for (const onnx::ValueInfoProto& o : g.output()) ++im.consumer_count[o.name()];

  // The Input node. Plexus's own export begins with the Input's standardisation, or an
  // Identity without one ("in/Identity"): those are the Input, and name it.
  std::optional<Standardisation> standardisation;
  if (!ids) standardisation = find_standardisation(g, input.name(), im.constants);
  std::set<std::string> skipped;
  std::string input_id = "input";
  for (const onnx::NodeProto& n : g.node())
    if (!standardisation && n.op_type() == "Identity" && n.input_size() == 1 && n.input(0) == input.name() &&
        n.name().ends_with("/Identity") && !onnx_import::module_path(n.name()).empty()) {
      input_id = onnx_import::module_path(n.name());
      skipped.insert(n.output(0));
      im.values[n.output(0)] = {};  // set below, once the id is known
      break;
    }
  if (standardisation && !standardisation->input_id.empty()) input_id = standardisation->input_id;
  graph::Node in;
  in.id = im.unique_id(input_id);
  in.name = in.id;
  in.type = "Input";
  in.params["shape"] = std::vector<int64_t>(in_shape->begin(), in_shape->end());
  // An imported model learned on inputs as they come, unless it standardised them itself.
  if (!standardisation) in.params["standardize"] = false;
  im.built.nodes.push_back(in);
  im.values[input.name()] = {{in.id, "x"}, *in_shape};
  for (const std::string& t : skipped) im.values[t] = {{in.id, "x"}, *in_shape};
  if (standardisation) {
    out.input_mean = standardisation->mean;
    out.input_std = standardisation->std;
    im.values[standardisation->output] = {{in.id, "x"}, *in_shape};
    skipped = {standardisation->centred, standardisation->output};
  }

  // Every node, in the file's (topological) order. A node reading what could not be mapped is
  // left out of the list: only the causes are named.
  const auto& mappings = onnx_import::op_mappings();
  std::vector<std::string> problems;
  std::set<std::string> unmapped;  // tensors
  for (const onnx::NodeProto& n : g.node()) {
    if ((n.output_size() > 0 && skipped.count(n.output(0))) || im.absorbed.count(&n)) continue;
    if (n.output_size() == 1 && other_losses.count(n.output(0)) && im.values.count(n.input(0))) {
      im.values[n.output(0)] = im.values.at(n.input(0));
      continue;
    }
    if (n.output_size() == 1 && im.constants.count(n.output(0))) continue;  // a Constant, read before
    const bool upstream =
        std::any_of(n.input().begin(), n.input().end(), [&](const std::string& i) { return unmapped.count(i) > 0; });
    // Shape arithmetic (the batch size of an initial state) is never materialised.
    const auto in_any = [&n](const auto& set) {
      return std::any_of(n.input().begin(), n.input().end(), [&](const std::string& i) { return set.count(i) > 0; });
    };
    const bool of_shape = n.op_type() == "Shape" || (in_any(im.shape_values) && !in_any(im.values));
    if (!upstream && of_shape) {
      if (n.op_type() == "ConstantOfShape") {
        const auto value = std::find_if(n.attribute().begin(), n.attribute().end(),
                                        [](const onnx::AttributeProto& a) { return a.name() == "value"; });
        const bool zero = value == n.attribute().end() || (value->has_t() && [&] {
                            const Constant c = read_tensor(value->t(), source);
                            return std::all_of(c.floats.begin(), c.floats.end(), [](float v) { return v == 0; }) &&
                                   std::all_of(c.ints.begin(), c.ints.end(), [](int64_t v) { return v == 0; });
                          }());
        if (zero) {
          im.zeros.insert(n.output(0));
          continue;
        }
      } else {
        for (const std::string& o : n.output()) im.shape_values.insert(o);
        continue;
      }
    }
    std::string reason;
    if (!upstream) {
      if (!n.domain().empty() && n.domain() != "ai.onnx")
        reason = "op domain '" + n.domain() + "' is not ONNX's own";
      else if (const auto m = mappings.find(n.op_type()); m == mappings.end())
        reason = "no Plexus layer computes it";
      else {
        im.node = &n;
        try {
          m->second(im);
        } catch (const Unmappable& u) {
          reason = u.reason;
        } catch (const ShapeError& e) {  // a file whose tensors contradict each other (a bias of the wrong length)
          reason = std::string("its tensors do not fit: ") + e.what();
        }
      }
    }
    if (!upstream && reason.empty()) {
      for (const std::string& o : n.output())
        if (!o.empty() && im.consumers(o) && !im.accounted_for(o)) reason = "its output '" + o + "' is not mapped";
    }
    if (upstream || !reason.empty()) {
      for (const std::string& o : n.output()) unmapped.insert(o);
      if (!upstream)
        problems.push_back("  " + (n.name().empty() ? std::string("(unnamed)") : "'" + n.name() + "'") + " (" +
                           n.op_type() + "): " + reason);
    }
  }
  if (!problems.empty()) {
    std::string text = source + ": " + std::to_string(problems.size()) + " ONNX node" +
                       (problems.size() == 1 ? "" : "s") + " cannot be imported (nothing was written):";
    for (const std::string& p : problems) text += "\n" + p;
    throw ValueError(text);
  }

  // The prediction feeds a loss: class scores CrossEntropy, a single value MSE.
  const std::string& output_name = g.output(0).name();
  const auto pred = im.values.find(output_name);
  if (pred == im.values.end())
    throw ValueError(source + ": output '" + output_name + "' is a constant, not computed from the input");
  const std::optional<Shape> out_shape =
      im.inferred.count(output_name) ? im.inferred.at(output_name) : pred->second.shape;
  if (!out_shape || out_shape->empty())
    throw ValueError(source + ": output '" + output_name + "' has no known shape per example");
  // Class scores: one row per example [C], per position of a sequence of ids [T, C], or what
  // the file's class names (Plexus's export) say.
  std::vector<std::string> class_names;
  for (const auto& p : model.metadata_props())
    if (p.key() == "class_names") {
      try {
        class_names = nlohmann::json::parse(p.value()).get<std::vector<std::string>>();
      } catch (const std::exception&) {  // not the names Plexus writes: none
      }
    }
  const int64_t last = out_shape->back();
  const bool classes =
      last > 1 && (out_shape->size() == 1 || (ids && out_shape->size() == 2) || int64_t(class_names.size()) == last);
  // A prediction of the input's own shape (an autoencoder's) reconstructs it: MSE against x.
  const auto add_loss = [&](const std::string& wanted, const char* type, const onnx_import::Value& prediction,
                            bool reconstructs) {
    graph::Node loss;
    loss.type = type;
    loss.id = im.unique_id(wanted);
    loss.name = loss.id;
    im.built.nodes.push_back(loss);
    im.built.edges.push_back({prediction.port, {loss.id, "input"}});
    im.built.edges.push_back({{in.id, reconstructs ? "x" : "y"}, {loss.id, "target"}});
  };
  const bool reconstructs = !classes && *out_shape == *in_shape;
  add_loss("loss", classes ? "CrossEntropy" : "MSE", pred->second, reconstructs);
  for (int o = 1; o < g.output_size(); ++o) {
    const std::string& name = g.output(o).name();
    const auto v = im.values.find(name);
    const auto shape = im.inferred.find(name);
    if (v == im.values.end() || !other_losses.count(name) || shape == im.inferred.end() || shape->second != *in_shape)
      throw ValueError(source + ": output '" + name +
                       "' is a second prediction; import takes one, and besides it only the reconstruction of the "
                       "input that Plexus's export of a graph with several losses writes");
    add_loss(other_losses.at(name), "MSE", v->second, true);
  }

  out.info.input_shape = *in_shape;
  out.info.label_shape = classes ? Shape(out_shape->begin(), out_shape->end() - 1) : *out_shape;
  if ((!classes && numel(*out_shape) == 1) || reconstructs) out.info.label_shape = {};
  out.info.classes = classes ? out_shape->back() : 0;
  out.class_names =
      int64_t(class_names.size()) == out.info.classes && classes ? class_names : default_class_names(out.info.classes);

  graph::Graph& graph = im.built;
  graph.description = "Imported from " + std::filesystem::path(source).filename().string() +
                      (out.producer.empty() ? "" : " (written by " + out.producer + ")") + ".";
  // Every node laid out (where it stands once its block is opened), then what shows with the
  // blocks closed: the modules as cards, left to right.
  for (const auto& [id, position] : graph::auto_layout(graph)) graph.find(id)->position = position;
  graph::blocks_from_module_names(graph, [&](const std::string& prefix) { return im.unique_id(prefix); });
  const graph::ShownLayout shown = graph::auto_layout_shown(graph);
  for (const auto& [id, position] : shown.nodes) graph.find(id)->position = position;
  for (graph::Block& b : graph.blocks)
    if (const auto it = shown.blocks.find(b.id); it != shown.blocks.end()) b.position = it->second;
  out.weights = complete_weights(graph, out.info, im.weights, source);
  out.graph = std::move(graph);
  return out;
}

ImportedModel import_onnx(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw IoError(file.string() + ": cannot be opened");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw IoError(file.string() + ": cannot be read");
  return import_onnx_bytes(bytes.str(), file.string());
}

void save_imported_weights(const ImportedModel& model, const std::filesystem::path& path) {
  train::Metadata meta;
  session::write_model_metadata(meta, model.info, {model.input_mean, model.input_std}, model.class_names);
  meta["imported_from"] = model.producer;
  io::save_safetensors(path, model.weights, meta);
}

}  // namespace plexus::exporter
