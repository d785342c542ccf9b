#include "session/optimizer_groups.h"

namespace plexus::session {

std::vector<optim::ScaledParams> parameter_groups(const graph::Graph& graph, const nn::Module& model) {
  std::vector<optim::ScaledParams> groups;
  for (const auto& [name, p] : model.named_parameters()) {
    const graph::Node* node = graph.find(name.substr(0, name.find('.')));
    const double lr = node ? node->lr_mult : 1, decay = node ? node->weight_decay_mult : 1;
    if (groups.empty() || groups.back().lr_mult != lr || groups.back().weight_decay_mult != decay)
      groups.push_back({{}, lr, decay});
    groups.back().params.push_back(p);
  }
  return groups;
}

}  // namespace plexus::session
