#pragma once
// The one registry of layer types, as schemas: each type's ports, its parameters (type,
// default, range or choices, doc), how output shapes follow from input shapes, how many values
// it learns and how many multiply-adds it does. The validator (its memory estimate included),
// shape inference, the editor's palette and property panel and docs/layers.md read it. How a
// type computes and exports, its lowering, is core/layers/lowering.h; schema and lowering of a
// type are one entry in a family file of core/layers/ (core/layers/families.h lists them).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/param_spec.h"
#include "tensor/shape.h"

namespace plexus::graph {

struct PortSpec {
  std::string name;
  std::string doc;
  bool required = true;
  bool variadic = false;  // accepts any number of edges (Add, Concat); otherwise at most one
  // Its values are indices the layer looks up (an Embedding's rows): whole numbers from 0, so the
  // validator refuses a standardised Input column feeding it.
  bool indices = false;
};

// What the dataset bound to the graph provides to its Input node, per example.
struct DatasetInfo {
  Shape input_shape;   // e.g. [1, 28, 28] or [13]
  Shape label_shape;   // [] for a class index or a single value
  int64_t classes = 0; // 0 for regression
  int64_t examples = 0;  // training and test examples together; 0 when not known without reading them
  // A table's (CSV) feature columns in input order, which an Input's `columns` choose from; else empty.
  std::vector<std::string> feature_names{};
  // What a person should know about the examples: a table's rows left out and why; else empty.
  std::string note{};
};

// Shapes are per example: the batch dimension is implicit (written "N" in messages). The
// node's parameters were checked (check_params) before a rule sees them.
struct ShapeContext {
  const Node& node;
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

// The number of values a node learns (its weights and biases), from its parameters and its
// per-example input shapes (those its shape rule accepted), as the module its lowering builds
// makes them. A double, so that absurd sizes (2^24 x 2^24 features) count without overflowing.
using ParameterCount = std::function<double(const Node&, const std::vector<Shape>& inputs)>;

// The multiply-adds of one example's forward pass through a node's matrix products and
// convolutions, from its parameters and per-example input and output shapes (those its shape
// rule gave). Elementwise work, pooling and normalisation are not counted: next to the
// products they are small and bound by memory, not arithmetic. graph/compute.h turns these
// into a training step's FLOPs.
using MacCount =
    std::function<double(const Node&, const std::vector<Shape>& inputs, const std::vector<Shape>& outputs)>;

struct LayerType {
  std::string name;          // "Conv2d", the type name in project files
  std::string category;      // "Data", "Layers", "Convolution", "Normalization", "Activation", "Merge", "Loss"
  std::string display_name;  // "2-D convolution"
  std::string description;   // one line
  std::vector<PortSpec> inputs, outputs;
  // A type whose output ports follow from its parameters (Split: one per section) gives them
  // here, for a node whose parameters check_params accepts; `outputs` then holds the ports at
  // the default parameters (the palette's and the docs'). Null: every node has `outputs`.
  std::function<std::vector<PortSpec>(const Node&)> output_ports;
  std::vector<ParamSpec> params;
  ShapeRule shape;  // one shape per port of outputs_of(node)
  ParameterCount parameter_count;  // null: it learns nothing
  MacCount macs;                   // null: no products counted
  // A loss node: prediction and target in, one number out; it ends the model.
  bool loss = false;
  // Loss nodes: the prediction is class scores and the target class indices, so training
  // reports accuracy, top-k, per-class accuracy and a confusion matrix.
  bool classification = false;
  bool is_input() const { return name == "Input"; }
  bool is_loss() const { return loss; }
  const ParamSpec* param(const std::string& name) const;
  const PortSpec* input(const std::string& name) const;
  // The output ports of `node`, a node of this type: `outputs`, or output_ports' while the
  // node's parameters are valid (a node with invalid ones keeps `outputs` until it is fixed).
  std::vector<PortSpec> outputs_of(const Node& node) const;
  // Where `node`'s output port `name` is among outputs_of(node); nullopt when it has none.
  std::optional<size_t> output_index(const Node& node, const std::string& name) const;
};

class Registry {
 public:
  static const Registry& instance();
  const std::vector<LayerType>& types() const { return types_; }  // in palette order
  const LayerType* find(const std::string& name) const;            // null if unknown
  void add(LayerType type);                                        // after the others

 private:
  Registry();
  std::vector<LayerType> types_;
};

// Adds every layer type, in palette order, to the registry as it is made. Defined by
// core/layers/families.cpp, whose family files hold each type's schema next to its lowering:
// graph/ declares it so that it needs nothing of theirs (nn/ modules, ONNX rules) to see.
void add_layer_types(Registry& registry);

// Problems with a node's parameters: unknown names, and values check_param_value refuses
// ("Linear 'fc1': out_features must be between 1 and 16777216, got 0").
std::vector<std::string> check_params(const Node& node, const LayerType& type);

}  // namespace plexus::graph
