#include "session/class_balance.h"

#include <cstdio>
#include <variant>

#include "graph/registry.h"
#include "session/evaluation_report.h"
#include "train/class_report.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::session {

std::vector<int64_t> training_class_counts(const data::Dataset& train, int64_t classes) {
  return train::class_counts(split_targets(train), classes);
}

std::vector<double> balanced_class_weights(const std::vector<int64_t>& counts) {
  int64_t n = 0, present = 0;
  for (int64_t c : counts) {
    n += c;
    present += c > 0;
  }
  if (present == 0) throw ValueError("class_balance: the training split has no examples of any class");
  std::vector<double> weights(counts.size(), 0.0);
  for (size_t c = 0; c < counts.size(); ++c)
    if (counts[c] > 0) weights[c] = double(n) / (double(present) * double(counts[c]));
  return weights;
}

std::vector<double> balanced_sample_weights(const std::vector<float>& targets, const std::vector<int64_t>& counts) {
  std::vector<double> weights;
  weights.reserve(targets.size());
  for (float t : targets) {
    const auto c = size_t(t);  // class_counts checked them: every one counted
    if (t < 0 || c >= counts.size() || counts[c] == 0)
      throw IndexError("class_balance: target " + std::to_string(t) + " is no class of the counts");
    weights.push_back(1.0 / double(counts[c]));
  }
  return weights;
}

void check_class_balance(const std::string& class_balance, const graph::DatasetBinding& dataset, int64_t classes) {
  if (class_balance == "none") return;
  const std::string what = "training: class_balance '" + class_balance + "' ";
  if (dataset.kind == "text")
    throw ValueError(what + "needs one class label per example; a text dataset's targets are the next characters "
                            "of a stream (use none)");
  if (classes == 0)
    throw ValueError(what + "needs a classification dataset; this project's target" +
                     (dataset.target.empty() ? std::string() : " '" + dataset.target + "'") +
                     " is a regression (use none)");
}

graph::Graph with_class_weights(graph::Graph graph, const std::vector<double>& weights) {
  const graph::Registry& registry = graph::Registry::instance();
  bool any = false;
  for (graph::Node& node : graph.nodes) {
    const graph::LayerType* type = registry.find(node.type);
    if (!type || !type->is_loss() || !type->classification || !type->param("weight")) continue;
    any = true;
    const auto own = node.params.find("weight");
    const bool empty = own == node.params.end() || std::visit(
                                                       [](const auto& v) {
                                                         if constexpr (requires { v.size(); }) return v.empty();
                                                         return false;
                                                       },
                                                       own->second);
    if (empty) node.params["weight"] = weights;
  }
  if (!any)
    throw ValueError("training: class_balance 'weights' weighs the classes of CrossEntropy and NLL losses; this "
                     "graph has neither (use sampler, or none)");
  return graph;
}

graph::Graph balanced_graph(const graph::Graph& graph, const graph::TrainingSettings& settings,
                            const std::vector<int64_t>& counts) {
  if (settings.class_balance != "weights") return graph;
  return with_class_weights(graph, balanced_class_weights(counts));
}

std::string class_balance_text(const std::string& class_balance, const std::vector<int64_t>& counts,
                               const std::vector<std::string>& names) {
  const auto name = [&](size_t c) { return c < names.size() && !names[c].empty() ? names[c] : std::to_string(c); };
  std::vector<std::string> parts;
  if (class_balance == "weights") {
    const std::vector<double> weights = balanced_class_weights(counts);
    for (size_t c = 0; c < counts.size(); ++c) {
      char weight[32];
      std::snprintf(weight, sizeof weight, "%.3g", weights[c]);
      parts.push_back(name(c) + " " + weight + " (" + std::to_string(counts[c]) + (c ? ")" : " examples)"));
    }
    return "weights: " + join(parts);
  }
  int64_t n = 0;
  for (size_t c = 0; c < counts.size(); ++c) {
    n += counts[c];
    parts.push_back(name(c) + " " + std::to_string(counts[c]));
  }
  return class_balance + ": " + std::to_string(n) + " examples drawn per epoch, each class about equally often (" +
         join(parts) + ")";
}

}  // namespace plexus::session
