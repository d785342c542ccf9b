#pragma once
// The one registry of layer types. Each type says everything the rest of Plexus needs: its
// ports, its parameters (type, default, range or choices, doc), how output shapes follow from
// input shapes, how many values it learns, and how to build the core module. The compiler, the
// validator (its memory estimate included), shape inference, the editor's palette and property
// panel, the ONNX exporter and docs/layers.md all read it; adding a layer type means adding one
// entry in registry.cpp.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/onnx_rules.h"
#include "nn/module.h"
#include "tensor/shape.h"

namespace plexus::graph {

enum class ParamType { Int, Float, Bool, Choice, IntList };
std::string to_string(ParamType t);  // "int", "float", "bool", "choice", "int list"

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Int;
  ParamValue default_value;
  double min = 0, max = 0;           // inclusive range of Int / Float (and of IntList entries)
  std::vector<std::string> choices;  // Choice
  std::string doc;
  // What the default stands for when it is not meant at face value, in a word or two for
  // editors ("auto" for a size taken from the input); "" = the value itself.
  std::string default_means;
};

struct PortSpec {
  std::string name;
  std::string doc;
  bool required = true;
  bool variadic = false;  // accepts any number of edges (Add, Concat); otherwise at most one
};

// A node's parameters with the type's defaults filled in. Values were checked by
// check_params (validator); the getters throw ValueError on a type mismatch.
class Params {
 public:
  Params(const Node& node, const std::vector<ParamSpec>& specs) : node_(node), specs_(specs) {}
  const ParamValue& value(const std::string& name) const;
  int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;  // Float (an Int value is accepted)
  bool flag(const std::string& name) const;
  const std::string& choice(const std::string& name) const;
  const std::vector<int64_t>& list(const std::string& name) const;

 private:
  const Node& node_;
  const std::vector<ParamSpec>& specs_;
};

// What the dataset bound to the graph provides to its Input node, per example.
struct DatasetInfo {
  Shape input_shape;   // e.g. [1, 28, 28] or [13]
  Shape label_shape;   // [] for a class index or a single value
  int64_t classes = 0; // 0 for regression
  int64_t examples = 0;  // training and test examples together; 0 when not known without reading them
};

// Shapes are per example: the batch dimension is implicit (written "N" in messages).
struct ShapeContext {
  const Node& node;
  const Params& params;
  std::vector<Shape> inputs;               // connected inputs, in port order (variadic expanded)
  std::vector<std::string> input_ports;    // the port of each input
  std::vector<std::string> input_sources;  // label of the node each input comes from, e.g. "'fc1'"
  const DatasetInfo* dataset = nullptr;    // null when no dataset is bound or it cannot be read
  bool dataset_bound = false;              // the graph names a dataset (readable or not)
};

// Thrown by a shape rule that cannot decide yet (e.g. the bound dataset cannot be read): its
// outputs stay unknown and no problem is reported for the node.
struct ShapeUnknown {};

// Thrown by a shape rule; the message is shown to the user as is.
struct ShapeProblem {
  std::string port;  // the input port at fault ("" = the node)
  std::string message;
};

using ShapeRule = std::function<std::vector<Shape>(const ShapeContext&)>;  // one shape per output port

// The number of values a layer learns (its weights and biases), from its parameters and its
// per-example input shapes (those its shape rule accepted), as the module `build` makes them.
// A double, so that absurd sizes (2^24 x 2^24 features) count without overflowing.
using ParameterCount = std::function<double(const Params&, const std::vector<Shape>& inputs)>;

// The multiply-adds of one example's forward pass through a layer's matrix products and
// convolutions, from its parameters and per-example input and output shapes (those its shape
// rule gave). Elementwise work, pooling and normalisation are not counted: next to the
// products they are small and bound by memory, not arithmetic. graph/compute.h turns these
// into a training step's FLOPs.
using MacCount =
    std::function<double(const Params&, const std::vector<Shape>& inputs, const std::vector<Shape>& outputs)>;

struct BuildContext {
  const Node& node;
  const Params& params;
  std::vector<Shape> inputs;  // per-example input shapes, as in ShapeContext
  Generator* gen;             // for seeded initialisation
};

// How a node computes: a module (registered in the model under the node id, so its
// parameters are named "<id>.<param>") and the function applying it to the inputs.
struct BuiltNode {
  std::shared_ptr<nn::Module> module;  // may be null (Add, Concat, Input)
  std::function<Tensor(const std::vector<Tensor>&)> run;
};

using Builder = std::function<BuiltNode(const BuildContext&)>;
// A loss node turns prediction and target (batched) into a scalar.
using LossBuilder = std::function<std::function<Tensor(const Tensor& prediction, const Tensor& target)>(const Params&)>;

struct LayerType {
  std::string name;          // "Conv2d", the type name in project files
  std::string category;      // "Data", "Layers", "Convolution", "Normalization", "Activation", "Merge", "Loss"
  std::string display_name;  // "2-D convolution"
  std::string description;   // one line
  std::vector<PortSpec> inputs, outputs;
  std::vector<ParamSpec> params;
  ShapeRule shape;
  ParameterCount parameter_count;  // null: it learns nothing
  MacCount macs;                   // null: no products counted
  Builder build;             // layers
  LossBuilder loss;          // loss nodes
  // How the node exports to ONNX (core/export/onnx.h), in inference mode. Every type but the
  // losses has one: an exported model ends at the loss node's prediction input.
  OnnxRule onnx;
  // Loss nodes: the prediction is class scores and the target class indices, so training
  // reports accuracy, top-k, per-class accuracy and a confusion matrix.
  bool classification = false;
  bool is_input() const { return name == "Input"; }
  bool is_loss() const { return bool(loss); }
  const ParamSpec* param(const std::string& name) const;
  const PortSpec* input(const std::string& name) const;
  const PortSpec* output(const std::string& name) const;
};

class Registry {
 public:
  static const Registry& instance();
  const std::vector<LayerType>& types() const { return types_; }  // in palette order
  const LayerType* find(const std::string& name) const;            // null if unknown

 private:
  Registry();
  std::vector<LayerType> types_;
};

// The range of an Int, Float or IntList parameter (of each entry) as messages word it:
// "between 1 and 16777216", "between 0 and 0.99".
std::string param_range(const ParamSpec& spec);

// "" when `value` suits `spec` (its type, range, choices, at most 8 list entries); else why
// not, worded to follow the parameter's name: "must be between 1 and 16777216". The one check
// of a parameter value: the validator and the editor's property panel both use it.
std::string check_param_value(const ParamSpec& spec, const ParamValue& value);

// Problems with a node's parameters: unknown names, and values check_param_value refuses
// ("Linear 'fc1': out_features must be between 1 and 16777216, got 0").
std::vector<std::string> check_params(const Node& node, const LayerType& type);

}  // namespace plexus::graph
