#pragma once
// How a layer type computes and exports, its lowering: the module (or ops) a node becomes in
// the model, a loss node's loss function, its ONNX and code rules. The other half of a layer entry next
// to its schema (graph/registry.h); both come from one entry of a family file (layers/layer.h).
#include <functional>
#include <memory>
#include <vector>

#include "graph/inputs.h"
#include "graph/registry.h"
#include "layers/onnx_rules.h"
#include "layers/code_rules.h"
#include "nn/module.h"
#include "tensor/shape.h"

namespace plexus::layers {

struct BuildContext {
  const graph::Node& node;
  std::vector<Shape> inputs;  // per-example input shapes, as in graph::ShapeContext
  Generator* gen;             // for seeded initialisation
};

// How a node computes: a module (registered in the model under the node id, so its
// parameters are named "<id>.<param>") and the function applying it to the inputs, giving one
// tensor per output port.
struct BuiltNode {
  using Run = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  using RunOne = std::function<Tensor(const std::vector<Tensor>&)>;
  BuiltNode() = default;  // the Input's: nothing to run
  BuiltNode(std::shared_ptr<nn::Module> m, Run r) : module(std::move(m)), run(std::move(r)) {}
  // A node with one output port, as most are.
  BuiltNode(std::shared_ptr<nn::Module> m, RunOne one)
      : module(std::move(m)), run([one = std::move(one)](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{one(in)};
        }) {}
  std::shared_ptr<nn::Module> module;  // may be null (Add, Concat, Input)
  Run run;
};

// A node computing its module's forward pass on its one input.
BuiltNode single(std::shared_ptr<nn::Module> module);

// A loss node turns prediction and target (batched) into a scalar.
using LossFunction = std::function<Tensor(const Tensor& prediction, const Tensor& target)>;

// Every loss type's `loss_weight` (Keras' loss_weights): a graph with several loss nodes trains
// on their sum, each times its weight. Filed with each loss type by the Registrar, beside the
// type's own parameters.
const graph::ParamSpec& loss_weight_param();
double loss_weight(const graph::Node& loss);

// An Input's `columns` as positions among `dataset`'s feature columns, in its order; empty when
// it reads the whole example. The graph was validated against `dataset`.
std::vector<int64_t> input_columns(const graph::InputRead& input, const graph::DatasetInfo& dataset);

struct Lowering {
  std::function<BuiltNode(const BuildContext&)> build;       // layers
  std::function<LossFunction(const graph::Node&)> loss;      // loss nodes
  // How the node exports to ONNX (core/export/onnx.h), in inference mode. Every type but the
  // losses has one: an exported model ends at the loss node's prediction input.
  OnnxRule onnx;
  // How the node exports as PyTorch code and as C++ against the core (layers/code_rules.h), in
  // inference mode; null where it has no rule yet: the exporter then refuses the node, naming it.
  CodeRule pytorch, cpp;
};

// The lowering of a type of graph::Registry::instance().
const Lowering& lowering(const graph::LayerType& type);

}  // namespace plexus::layers
