#include <map>

#include "autograd/grad_mode.h"
#include "data/text_classes.h"
#include "explain/model_pass.h"
#include "explain/probe.h"
#include "graph/registry.h"
#include "nn/attention.h"
#include "session/data_pipeline.h"
#include "session/text_sampling.h"
#include "util/error.h"

namespace plexus::explain {

namespace {

// The axis labels of ids x [1, T]: a text model's characters (input_symbol), else "#k" for position k.
std::vector<std::string> attention_tokens(const session::TrainedModel& model, const Tensor& x) {
  const std::vector<float> ids = x.to_vector();
  const bool text = session::is_text_project(model.project) || !model.vocabulary.empty();
  std::vector<std::string> out;
  for (size_t k = 0; k < ids.size(); ++k)
    out.push_back(text ? input_symbol(model, int64_t(ids[k])) : "#" + std::to_string(k));
  return out;
}

// The tensor a node's input port reads, as an observer sees the plan: a node's first output, or
// the model's (standardised) input for an Input node without columns, which the plan does not run.
struct PortSource {
  std::string node;
  bool model_input = false;
};
PortSource port_source(const session::TrainedModel& model, const std::string& node, const std::string& port) {
  for (const graph::Edge* e : model.project.edges_into(node)) {
    if (e->to.port != port) continue;
    const graph::Node* from = model.project.find(e->from.node);
    const graph::LayerType* type = from ? graph::Registry::instance().find(from->type) : nullptr;
    if (!type) break;
    if (type->output_index(*from, e->from.port) != size_t(0))
      throw ValueError("node '" + node + "' reads output '" + e->from.port + "' of node '" + from->id +
                       "', not its first: its attention weights cannot be shown");
    return {from->id, type->is_input()};
  }
  return {};
}

// The weights of MultiheadAttention `node` for ids or features x [1, ...] already checked.
AttentionMap attention_of(const session::TrainedModel& model, const Tensor& x, const std::string& node) {
  nn::Module& module = detail::node_module(model, node);
  const auto* attention = dynamic_cast<const nn::MultiheadAttention*>(&module);
  if (!attention) throw ValueError("node '" + node + "' (" + module.type_name() + ") is not a MultiheadAttention");
  const PortSource query = port_source(model, node, "input");
  if (query.node.empty())
    throw ValueError("node '" + node + "' has no input wired in the project: its attention weights cannot be shown");
  PortSource key = port_source(model, node, "key");
  if (key.node.empty()) key = query;
  const PortSource lengths = port_source(model, node, "lengths");

  detail::ModelScope scope(model);
  NoGradGuard no_grad;
  const Tensor input = detail::standardise(model.normalization, x);
  std::map<std::string, Tensor> seen;
  scope.graph().set_observer([&seen](const std::string& id, const Tensor& output) { seen[id] = output; });
  scope.graph()(input);
  auto value = [&](const PortSource& s) {
    if (s.model_input && !seen.count(s.node)) return input;
    return seen.at(s.node);
  };
  const Tensor q = value(query);
  // Self-attention is told by one tensor for query and key, as forward tells it.
  const Tensor k = key.node == query.node ? q : value(key);
  AttentionMap out;
  out.weights = attention->attention_weights(q, k, lengths.node.empty() ? Tensor() : value(lengths)).squeeze(0);
  out.query = q.squeeze(0);
  out.key = k.squeeze(0);
  const bool ids = session::is_text_project(model.project) || model.project.dataset.kind == "text_classes";
  if (ids)
    out.tokens = attention_tokens(model, x);
  else
    for (int64_t t = 0; t < out.weights.shape()[1]; ++t) out.tokens.push_back("#" + std::to_string(t));
  return out;
}

}  // namespace

AttentionMap attention_map(const session::TrainedModel& model, const Tensor& raw, const std::string& node) {
  return attention_of(model, detail::one_example(model, raw), node);
}

AttentionMap attention_map(const session::TrainedModel& model, const std::string& text, const std::string& node) {
  return attention_map(model, text_input(model, text), node);
}

std::string input_symbol(const session::TrainedModel& model, int64_t id) {
  if (session::is_text_project(model.project)) {
    if (id >= 0 && id < int64_t(model.class_names.size())) return model.class_names[size_t(id)];
  } else if (!model.vocabulary.empty()) {
    if (id == 0) return "·";
    if (id >= 1 && id <= int64_t(model.vocabulary.size())) return model.vocabulary[size_t(id - 1)];
  }
  return "#" + std::to_string(id);
}

Tensor text_input(const session::TrainedModel& model, const std::string& text) {
  if (const std::optional<data::TextEncoding> encoding = session::text_encoding(model))
    return data::encode_typed_text(*encoding, text);
  if (!session::is_text_project(model.project))
    throw ValueError("typed text is for a model of a text: this model's dataset is '" + model.project.dataset.kind +
                     "'");
  const data::Vocabulary vocabulary = session::text_vocabulary(model, "the model");
  std::vector<int64_t> ids = vocabulary.encode(std::string_view(text));
  if (ids.empty()) throw ValueError("no text given: type at least one character");
  const int64_t context = model.info.input_shape.at(0);
  if (int64_t(ids.size()) > context) ids.erase(ids.begin(), ids.end() - context);
  return from_vector(std::vector<float>(ids.begin(), ids.end()), {int64_t(ids.size())});
}

}  // namespace plexus::explain
