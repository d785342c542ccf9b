#include "explain/probe.h"

#include "autograd/grad_mode.h"
#include "explain/model_pass.h"
#include "nn/conv.h"
#include "util/error.h"

namespace plexus::explain {

namespace {

// The batch dimension of one example's output dropped (an output without one kept as it is).
Tensor first_example(const Tensor& output) { return output.dim() == 0 ? output : output.narrow(0, 0, 1).squeeze(0); }

}  // namespace

std::vector<NodeOutput> probe(const session::TrainedModel& model, const Tensor& raw) {
  const Tensor x = detail::one_example(model, raw);
  detail::ModelScope scope(model);
  NoGradGuard no_grad;
  std::vector<NodeOutput> out;
  scope.graph().set_observer([&out](const std::string& node, const Tensor& output) {
    out.push_back({node, first_example(output)});
  });
  scope.graph()(detail::standardise(model.normalization, x));
  return out;
}

Tensor node_output(const session::TrainedModel& model, const Tensor& raw_batch, const std::string& node) {
  detail::check_batch(model, raw_batch);
  detail::ModelScope scope(model);
  NoGradGuard no_grad;
  Tensor found;
  std::vector<std::string> seen;
  scope.graph().set_observer([&](const std::string& id, const Tensor& output) {
    if (id == node) found = output;
    seen.push_back(id);
  });
  scope.graph()(detail::standardise(model.normalization, raw_batch));
  if (!found.defined()) detail::unknown_node(node, seen);
  return found;
}

Tensor conv_filters(const session::TrainedModel& model, const std::string& node) {
  nn::Module& module = detail::node_module(model, node);
  const auto* conv = dynamic_cast<const nn::Conv2d*>(&module);
  if (!conv) throw ValueError("node '" + node + "' (" + module.type_name() + ") is not a Conv2d: it has no filters");
  NoGradGuard no_grad;
  return conv->weight.detach().clone();
}

std::vector<std::string> picture_nodes(const session::TrainedModel& model) {
  std::vector<std::string> out;
  for (const NodeOutput& n : probe(model, zeros(model.info.input_shape)))
    if (n.value.dim() == 3) out.push_back(n.node);
  return out;
}

std::vector<std::string> attention_nodes(const session::TrainedModel& model) {
  std::vector<std::string> out;
  // Registered in the order the plan runs them (layers::compile).
  for (const auto& [name, module] : model.compiled.model->children())
    if (module->type_name() == "MultiheadAttention") out.push_back(name);
  return out;
}

}  // namespace plexus::explain
