#pragma once
// What the explanations share to run a trained model's graph on their own terms: the raw input
// checked against the model's, the standardisation as ops autograd follows (so gradients reach raw
// units), and a scope that puts the graph in eval mode with its observer and replacer its own for
// a while, restoring them after (the model may be the Try It model the GUI keeps using).
#include <string>
#include <vector>

#include "layers/compiler.h"
#include "session/trained_model.h"
#include "tensor/tensor.h"

namespace plexus::explain::detail {

// One raw example (the input shape) as a batch of one; ShapeError naming expected vs got.
Tensor one_example(const session::TrainedModel& model, const Tensor& raw);
// ShapeError unless `raw_batch` is [N, input shape...].
void check_batch(const session::TrainedModel& model, const Tensor& raw_batch);
// (raw - mean) / std per channel, as InputNormalization::apply computes it, but recorded for autograd.
Tensor standardise(const session::InputNormalization& norm, const Tensor& raw_batch);

class ModelScope {
 public:
  explicit ModelScope(const session::TrainedModel& model);
  ~ModelScope();
  ModelScope(const ModelScope&) = delete;
  ModelScope& operator=(const ModelScope&) = delete;
  layers::GraphModel& graph() const { return graph_; }

 private:
  layers::GraphModel& graph_;
  layers::GraphModel::Observer observer_;
  layers::GraphModel::Replacer replacer_;
  bool training_;
};

// The module node `node` built (registered under its id); ValueError naming the node and the
// model's nodes when it has none.
nn::Module& node_module(const session::TrainedModel& model, const std::string& node);
// ValueError for a node the model does not run: `seen` are the nodes it ran, in order.
[[noreturn]] void unknown_node(const std::string& node, const std::vector<std::string>& seen);

}  // namespace plexus::explain::detail
