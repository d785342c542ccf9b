#include "session/optimizer_groups.h"

#include "util/error.h"

namespace plexus::session {
namespace {

// 431080 → "431,080".
std::string digits_grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::vector<optim::ScaledParams> parameter_groups(const graph::Graph& graph, const nn::Module& model) {
  std::vector<optim::ScaledParams> groups;
  const nn::NamedTensors params = model.named_parameters();
  for (const auto& [name, p] : params) {
    const graph::Node* node = graph.find(name.substr(0, name.find('.')));
    if (node && node->frozen) continue;
    const double lr = node ? node->lr_mult : 1, decay = node ? node->weight_decay_mult : 1;
    if (groups.empty() || groups.back().lr_mult != lr || groups.back().weight_decay_mult != decay)
      groups.push_back({{}, lr, decay});
    groups.back().params.push_back(p);
  }
  if (groups.empty() && !params.empty())
    throw ValueError("every node that learns is frozen: nothing would train (unfreeze the nodes that should learn)");
  return groups;
}

std::string trained_parameters_text(const nn::Module& model) {
  const int64_t all = model.num_parameters(), trained = model.num_trainable_parameters();
  if (trained == all) return "all " + digits_grouped(all) + " parameters train";
  return digits_grouped(trained) + " of " + digits_grouped(all) + " parameters train";
}

}  // namespace plexus::session
