#include "graph/compute.h"

#include "graph/memory.h"

namespace plexus::graph {

ComputeEstimate estimate_compute(const GraphIndex& index, const InferenceResult& shapes) {
  const Graph& g = index.graph;
  const Registry& registry = Registry::instance();
  const std::vector<char> counted = trained_nodes(index);
  // Per node index: its output depends on a learned value (its own or one upstream), so
  // backward carries a gradient through it.
  std::vector<char> learned(g.nodes.size(), 0);
  ComputeEstimate c;
  for (const std::string& id : shapes.order) {
    const size_t i = index.node.at(id);
    const Node& node = g.nodes[i];
    const LayerType* type = registry.find(node.type);
    const auto out = shapes.outputs.find(id);
    if (!type || out == shapes.outputs.end()) continue;
    bool learned_input = false;
    for (size_t e : index.into[i])
      if (index.source[e] != GraphIndex::npos && learned[index.source[e]]) learned_input = true;
    learned[i] = learned_input || bool(type->parameter_count);
    if (!counted[i] || !type->macs) continue;
    const double macs = type->macs(node, input_shapes(index, shapes, node, *type), out->second);
    c.forward_macs += macs;
    c.training_flops += 2 * macs * (learned_input ? 3 : 2);
    c.nodes.push_back({id, macs, learned_input});
  }
  return c;
}

}  // namespace plexus::graph
