#include "explain/model_pass.h"

#include "ops/ops.h"
#include "session/text_sampling.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::explain::detail {

void check_batch(const session::TrainedModel& model, const Tensor& raw_batch) {
  const Shape& want = model.info.input_shape;
  const Shape& got = raw_batch.shape();
  if (got.size() != want.size() + 1 || !std::equal(want.begin(), want.end(), got.begin() + 1))
    throw ShapeError("the model takes inputs [N, " + plexus::to_string(want).substr(1) + ", got shape " +
                     plexus::to_string(got));
}

Tensor one_example(const session::TrainedModel& model, const Tensor& raw) {
  const Shape& want = model.info.input_shape;
  // A text file's model reads any length up to its sequence length (text_sampling.h's context).
  const bool text = session::is_text_project(model.project) && want.size() == 1;
  if (text ? raw.dim() != 1 || raw.numel() < 1 || raw.numel() > want[0] : raw.shape() != want)
    throw ShapeError("the model takes one example of shape " + plexus::to_string(want) + (text ? " (or shorter)" : "") +
                     ", got shape " + plexus::to_string(raw.shape()));
  return raw.unsqueeze(0);
}

Tensor standardise(const session::InputNormalization& norm, const Tensor& raw_batch) {
  if (norm.empty()) return raw_batch;
  Shape per_channel(size_t(raw_batch.dim()), 1);  // [1, C, 1, 1]: one mean and std per channel (dim 1)
  if (norm.mean.size() > 1) per_channel[1] = int64_t(norm.mean.size());
  return (raw_batch - from_vector(norm.mean, per_channel)) / from_vector(norm.std, per_channel);
}

ModelScope::ModelScope(const session::TrainedModel& model)
    : graph_(*model.compiled.model),
      observer_(graph_.observer()),
      replacer_(graph_.replacer()),
      training_(graph_.is_training()) {
  graph_.eval();
  graph_.set_observer(nullptr);
  graph_.set_replacer(nullptr);
}

ModelScope::~ModelScope() {
  graph_.set_observer(std::move(observer_));
  graph_.set_replacer(std::move(replacer_));
  graph_.train(training_);
}

nn::Module& node_module(const session::TrainedModel& model, const std::string& node) {
  std::vector<std::string> names;
  for (const auto& [name, module] : model.compiled.model->children()) {
    if (name == node) return *module;
    names.push_back(name);
  }
  throw ValueError("the model has no node '" + node + "' with weights (its nodes with weights: " + join(names, ", ") +
                   ")");
}

void unknown_node(const std::string& node, const std::vector<std::string>& seen) {
  throw ValueError("the model has no node '" + node + "' (its nodes: " + join(seen, ", ") + ")");
}

}  // namespace plexus::explain::detail
