#include "export/onnx.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "data/table_prep.h"
#include "graph/inference.h"
#include "graph/inputs.h"
#include "graph/registry.h"
#include "io/atomic_file.h"
#include "layers/lowering.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::exporter {
namespace {

using graph::Node;

constexpr int64_t kOpset = 13;
static_assert(std::endian::native == std::endian::little, "tensors are copied as ONNX's little-endian raw_data");

// "Linear 'fc1'", and the node's id where its name is another.
std::string where(const Node& n) {
  return n.label() + (n.name.empty() || n.name == n.id ? "" : " (node " + n.id + ")");
}

[[noreturn]] void fail(const std::string& message) { throw ValueError("ONNX export: " + message); }

// Writes the rules' nodes and constants into the graph proto; knows the node being exported,
// to name its ONNX nodes and its errors.
class ProtoEmitter final : public layers::OnnxEmitter {
 public:
  ProtoEmitter(onnx::GraphProto& graph, const nn::NamedTensors& state) : graph_(graph), state_(state.begin(), state.end()) {}

  void begin(const Node& node) {
    node_ = &node;
    count_ = 0;
  }
  bool produced(const std::string& tensor) const { return produced_.count(tensor) > 0; }

  void add_node(const std::string& op_type, const std::vector<std::string>& inputs,
                const std::vector<std::string>& outputs, const layers::OnnxAttributes& attributes) override {
    onnx::NodeProto& n = *graph_.add_node();
    n.set_op_type(op_type);
    n.set_name(node_->id + "/" + op_type + (count_ ? std::to_string(count_) : ""));
    ++count_;
    n.set_doc_string(where(*node_));
    for (const std::string& i : inputs) n.add_input(i);
    for (const std::string& o : outputs) {
      n.add_output(o);
      produced_.insert(o);
    }
    for (const auto& [name, value] : attributes) {
      onnx::AttributeProto& a = *n.add_attribute();
      a.set_name(name);
      if (const int64_t* i = std::get_if<int64_t>(&value)) {
        a.set_type(onnx::AttributeProto::INT);
        a.set_i(*i);
      } else if (const float* f = std::get_if<float>(&value)) {
        a.set_type(onnx::AttributeProto::FLOAT);
        a.set_f(*f);
      } else if (const std::string* str = std::get_if<std::string>(&value)) {
        a.set_type(onnx::AttributeProto::STRING);
        a.set_s(*str);
      } else {
        a.set_type(onnx::AttributeProto::INTS);
        for (int64_t v : std::get<std::vector<int64_t>>(value)) a.add_ints(v);
      }
    }
  }

  void add_initializer(const std::string& name, const Tensor& value) override {
    onnx::TensorProto& t = *graph_.add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : value.shape()) t.add_dims(d);
    const std::vector<float> v = value.to_vector();
    t.set_raw_data(v.data(), v.size() * sizeof(float));
  }

  void add_initializer(const std::string& name, const std::vector<int64_t>& values) override {
    onnx::TensorProto& t = *graph_.add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(int64_t(values.size()));
    for (int64_t v : values) t.add_int64_data(v);
  }

  Tensor weights(const std::string& name) const override {
    const auto it = state_.find(name);
    if (it == state_.end()) fail(where(*node_) + ": the model has no tensor '" + name + "'");
    return it->second;
  }

 private:
  onnx::GraphProto& graph_;
  std::map<std::string, Tensor> state_;
  std::set<std::string> produced_;
  const Node* node_ = nullptr;
  int count_ = 0;
};

void set_tensor_type(onnx::ValueInfoProto& v, const std::string& name, const Shape& per_example, const std::string& doc) {
  v.set_name(name);
  v.set_doc_string(doc);
  onnx::TypeProto::Tensor& t = *v.mutable_type()->mutable_tensor_type();
  t.set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto& s = *t.mutable_shape();
  s.add_dim()->set_dim_param("N");
  for (int64_t d : per_example) s.add_dim()->set_dim_value(d);
}

// "x float32 [N, 1, 28, 28], ...": a graph's inputs or outputs, as set_tensor_type wrote them.
std::string values_text(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values) {
  std::string out;
  for (const onnx::ValueInfoProto& v : values) {
    Shape per_example;
    for (const auto& d : v.type().tensor_type().shape().dim())
      if (d.has_dim_value()) per_example.push_back(d.dim_value());
    out += (out.empty() ? "" : ", ") + v.name() + " float32 " + graph::batched(per_example);
  }
  return out;
}

void add_metadata(onnx::ModelProto& model, const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto& e = *model.add_metadata_props();
  e.set_key(key);
  e.set_value(value);
}

struct Built {
  onnx::ModelProto model;
  std::vector<std::pair<std::string, Shape>> inputs;  // name, per-example shape
  Shape output;                                       // per example
};

// What standardises the columns at `columns` (all when empty) of a table's examples.
std::vector<float> picked(const std::vector<float>& all, const std::vector<int64_t>& columns) {
  if (columns.empty() || all.empty()) return all;
  std::vector<float> out;
  for (int64_t c : columns) out.push_back(all.at(size_t(c)));
  return out;
}

Built build(const session::TrainedModel& m, const OnnxOptions& options) {
  const graph::Graph& g = m.project;
  const graph::Registry& registry = graph::Registry::instance();
  const graph::GraphIndex index(g);
  const graph::InferenceResult shapes = graph::infer_shapes(index, &m.info);
  // Every loss's prediction is an output: the primary one's "logits", the others named after
  // their loss node ("<loss id>.prediction").
  struct Output {
    const Node* loss;
    size_t edge;
    std::string name;
  };
  std::vector<Output> outputs;
  for (const layers::LossTerm& term : m.compiled.terms) {
    const Node* loss = index.find(term.node);
    if (!loss) fail("the project has no loss node '" + term.node + "' (the compiled model's)");
    size_t prediction = graph::GraphIndex::npos;
    for (size_t e : index.edges_into(loss->id))
      if (g.edges[e].to.port == "input") prediction = e;
    if (prediction == graph::GraphIndex::npos || index.source[prediction] == graph::GraphIndex::npos ||
        !shapes.edge_shapes[prediction])
      fail(where(*loss) + " has no prediction input of a known shape");
    outputs.push_back({loss, prediction, term.node == m.compiled.loss_node ? "logits" : term.node + ".prediction"});
  }
  std::stable_partition(outputs.begin(), outputs.end(), [](const Output& o) { return o.name == "logits"; });
  const graph::PortRef& pred = g.edges[outputs.at(0).edge].from;
  std::vector<size_t> ends;
  for (const Output& o : outputs) ends.push_back(index.source[o.edge]);
  const std::vector<char> needed = index.feeding(ends);

  // One input "x" for the whole example; Inputs reading a table's columns apart each their own.
  const std::vector<graph::InputRead> reads = graph::input_reads(g);
  const bool apart = std::any_of(reads.begin(), reads.end(), [&](const graph::InputRead& r) {
    return needed[index.node.at(r.node->id)] && !r.columns.empty();
  });

  Built out;
  out.output = *shapes.edge_shapes[outputs[0].edge];
  onnx::ModelProto& model = out.model;
  model.set_ir_version(onnx::IR_VERSION);
  model.add_opset_import()->set_version(kOpset);  // the default domain
  model.set_producer_name("plexus");
  model.set_producer_version(PLEXUS_VERSION);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(options.name.empty() ? "plexus" : options.name);

  ProtoEmitter emitter(graph, m.compiled.model->state());
  std::map<std::pair<std::string, std::string>, std::string> tensor;  // (node, output port) -> ONNX name
  for (const std::string& id : shapes.order) {
    if (!needed[index.node.at(id)]) continue;
    const Node& node = *index.find(id);
    const graph::LayerType& type = *registry.find(node.type);
    const layers::OnnxRule& rule = layers::lowering(type).onnx;
    if (!rule) fail(where(node) + ": layer type " + type.name + " has no ONNX export rule");
    std::vector<Shape> in_shapes;
    std::vector<std::string> in_names;
    std::vector<int64_t> columns;
    if (type.is_input()) {
      in_names.push_back(apart ? id : "x");
      columns = layers::input_columns(graph::input_read(node), m.info);
      if (apart) out.inputs.emplace_back(id, shapes.outputs.at(id).at(0));
    }
    for (const auto& [port, edges] : graph::input_edges(index, node, type))
      for (size_t e : edges) {
        // Validation let only the losses' targets take the labels y, which are not exported.
        in_names.push_back(tensor.at({g.edges[e].from.node, g.edges[e].from.port}));
        in_shapes.push_back(*shapes.edge_shapes[e]);
      }
    const std::vector<graph::PortSpec> out_ports = type.outputs_of(node);
    std::vector<std::string> out_names;
    for (const graph::PortSpec& p : out_ports)
      out_names.push_back(pred == graph::PortRef{id, p.name} ? "logits" : id + "." + p.name);
    const std::vector<Shape>& out_shapes = shapes.outputs.at(id);
    emitter.begin(node);
    try {
      rule({node, in_shapes, out_shapes, in_names, out_names, picked(m.normalization.mean, columns),
            picked(m.normalization.std, columns), emitter});
    } catch (const layers::OnnxUnsupported& u) {
      fail(where(node) + " cannot be exported: " + u.reason);
    }
    for (size_t i = 0; i < out_names.size(); ++i)
      if (emitter.produced(out_names[i])) tensor[{id, out_ports[i].name}] = out_names[i];
  }

  if (!apart) out.inputs.emplace_back("x", m.info.input_shape);
  nlohmann::json input_columns = nlohmann::json::object();
  for (const auto& input : out.inputs) {
    const std::string& name = input.first;
    const Shape& shape = input.second;
    if (!apart) {
      set_tensor_type(*graph.add_input(), name, shape,
                      "raw inputs, as the dataset reader yields them (images: pixel / 255); the model standardises "
                      "them");
      continue;
    }
    const auto read = std::find_if(reads.begin(), reads.end(), [&](const auto& r) { return r.node->id == name; });
    const std::vector<std::string> names = read->columns.empty() ? m.info.feature_names : read->columns;
    input_columns[name] = names;
    set_tensor_type(*graph.add_input(), name, shape,
                    "the table's columns " + join(names) + " in the file's units, as Input '" + name + "' reads them");
  }
  set_tensor_type(*graph.add_output(), "logits", out.output,
                  "what feeds the loss " + where(*outputs[0].loss) + (m.classification() ? ": class scores" : ""));
  for (size_t i = 1; i < outputs.size(); ++i) {
    const graph::PortRef& from = g.edges[outputs[i].edge].from;
    emitter.begin(*outputs[i].loss);  // an alias, so each output has its own name
    emitter.add_node("Identity", {tensor.at({from.node, from.port})}, {outputs[i].name}, {});
    set_tensor_type(*graph.add_output(), outputs[i].name, *shapes.edge_shapes[outputs[i].edge],
                    "what feeds the loss " + where(*outputs[i].loss));
  }
  add_metadata(model, "class_names", nlohmann::json(m.class_names).dump());
  if (apart) add_metadata(model, "input_columns", input_columns.dump());
  if (!m.vocabulary.empty()) add_metadata(model, "vocabulary", nlohmann::json(m.vocabulary).dump());
  // A table's model takes prepared rows: what each input value is, and how raw rows become them.
  if (m.preparation) {
    add_metadata(model, "input_names", nlohmann::json(m.preparation->input_names()).dump());
    add_metadata(model, "table_preparation", m.preparation->to_json());
  }
  if (!options.name.empty()) add_metadata(model, "project", options.name);
  return out;
}

// ONNX's checker, then strict shape inference: every node's inputs suit it, and the output's
// shape follows from the input's as Plexus infers it.
void check(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
    onnx::ModelProto inferred = model;
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/true, /*strict=*/1));
  } catch (const std::exception& e) {
    fail(std::string("the ONNX checker refuses the model (an export rule is wrong): ") + e.what());
  }
}

}  // namespace

OnnxSummary export_onnx(const session::TrainedModel& model, const std::filesystem::path& out,
                        const OnnxOptions& options) {
  const Built built = build(model, options);
  // One protobuf message holds at most 2 GiB; larger weights would need ONNX's external data.
  const size_t size = built.model.ByteSizeLong();
  if (size > size_t(INT_MAX))
    fail("the model needs " + std::to_string(size >> 20) + " MiB, more than the 2 GiB one ONNX file can hold");
  check(built.model);
  std::string bytes;
  if (!built.model.SerializeToString(&bytes)) fail("protobuf could not serialize the model");
  io::write_file_atomically(out, bytes);

  OnnxSummary s;
  s.input = values_text(built.model.graph().input());
  s.output = values_text(built.model.graph().output());
  s.opset = kOpset;
  s.nodes = size_t(built.model.graph().node_size());
  s.initializers = size_t(built.model.graph().initializer_size());
  s.bytes = bytes.size();
  return s;
}

}  // namespace plexus::exporter
