#pragma once
// One layer type as its family file writes it: the schema (ports, parameters, shape rule,
// counts: graph/registry.h) and the lowering (module, loss, ONNX and code rules: layers/lowering.h)
// side by side, every rule given the node's parameters as the type's own struct P, read once
// from the node (graph/layer_params.h). A Registrar files the schema with graph::Registry and
// the lowering with lowering().
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/layer_params.h"
#include "graph/registry.h"
#include "layers/lowering.h"

namespace plexus::layers {

struct NoParams {};

template <class P = NoParams>
struct Layer {
  // ---- schema ----
  std::string name;          // "Conv2d", the type name in project files
  std::string category;      // "Data", "Layers", "Convolution", ..., "Loss": the palette's groups
  std::string display_name;  // "2-D convolution"
  std::string description;   // one line
  std::vector<graph::PortSpec> inputs, outputs;
  // Output ports that follow from the parameters; `outputs` are then those of the defaults
  // (graph::LayerType::output_ports).
  std::function<std::vector<graph::PortSpec>(const P&)> output_ports;
  std::vector<graph::ParamField<P>> params;
  std::function<std::vector<Shape>(const graph::ShapeContext&, const P&)> shape;
  std::function<double(const P&, const std::vector<Shape>& inputs)> parameter_count;  // null: learns nothing
  std::function<double(const P&, const std::vector<Shape>& inputs, const std::vector<Shape>& outputs)> macs;
  bool classification = false;  // a loss over class scores and class indices
  // ---- lowering ----
  std::function<BuiltNode(const BuildContext&, const P&)> build;  // layers
  std::function<LossFunction(const P&)> loss;                     // loss nodes
  std::function<void(const OnnxContext&, const P&)> onnx;
  std::function<void(const CodeContext&, const P&)> pytorch, cpp;
};

// An entry with its names filled in; the family file adds ports, parameters and rules.
template <class P = NoParams>
Layer<P> named(std::string name, std::string category, std::string display_name, std::string description) {
  Layer<P> t;
  t.name = std::move(name);
  t.category = std::move(category);
  t.display_name = std::move(display_name);
  t.description = std::move(description);
  return t;
}

class Registrar {
 public:
  explicit Registrar(graph::Registry& schemas) : schemas_(schemas) {}

  template <class P>
  void add(Layer<P> l) {
    graph::LayerType s{std::move(l.name), std::move(l.category), std::move(l.display_name), std::move(l.description),
                       std::move(l.inputs), std::move(l.outputs), {}, graph::specs(l.params), {}, {}, {},
                       bool(l.loss), l.classification};
    if (l.loss) s.params.push_back(loss_weight_param());
    // Each rule reads the node's values into P itself, with the one field list.
    auto read = [fields = std::make_shared<const std::vector<graph::ParamField<P>>>(std::move(l.params))](
                    const graph::Node& node) { return graph::decode(node, *fields); };
    if (l.output_ports)
      s.output_ports = [read, f = std::move(l.output_ports)](const graph::Node& n) { return f(read(n)); };
    if (l.shape) s.shape = [read, f = std::move(l.shape)](const graph::ShapeContext& c) { return f(c, read(c.node)); };
    if (l.parameter_count)
      s.parameter_count = [read, f = std::move(l.parameter_count)](const graph::Node& n, const std::vector<Shape>& in) {
        return f(read(n), in);
      };
    if (l.macs)
      s.macs = [read, f = std::move(l.macs)](const graph::Node& n, const std::vector<Shape>& in,
                                             const std::vector<Shape>& out) { return f(read(n), in, out); };
    Lowering lowered;
    if (l.build) lowered.build = [read, f = std::move(l.build)](const BuildContext& b) { return f(b, read(b.node)); };
    if (l.loss) lowered.loss = [read, f = std::move(l.loss)](const graph::Node& n) { return f(read(n)); };
    if (l.onnx) lowered.onnx = [read, f = std::move(l.onnx)](const OnnxContext& c) { f(c, read(c.node)); };
    if (l.pytorch)
      lowered.pytorch = [read, f = std::move(l.pytorch)](const CodeContext& c) { f(c, read(c.node)); };
    if (l.cpp) lowered.cpp = [read, f = std::move(l.cpp)](const CodeContext& c) { f(c, read(c.node)); };
    add(std::move(s), std::move(lowered));
  }

 private:
  void add(graph::LayerType schema, Lowering lowering);
  graph::Registry& schemas_;
};

}  // namespace plexus::layers
