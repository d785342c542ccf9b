#include "graph/memory.h"

#include <algorithm>

#include "optim_config/config.h"

namespace plexus::graph {
namespace {

double values(const Shape& s) {
  double n = 1;
  for (int64_t d : s) n *= double(d);
  return n;
}

}  // namespace

std::vector<char> trained_nodes(const GraphIndex& index) {
  const Graph& g = index.graph;
  std::vector<size_t> losses;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const LayerType* t = Registry::instance().find(g.nodes[i].type);
    if (t && t->is_loss()) losses.push_back(i);
  }
  return losses.empty() ? std::vector<char>(g.nodes.size(), 1) : index.feeding(std::move(losses));
}

const NodeMemory* MemoryEstimate::largest() const {
  const auto it = std::max_element(nodes.begin(), nodes.end(),
                                   [](const NodeMemory& a, const NodeMemory& b) { return a.bytes() < b.bytes(); });
  return it == nodes.end() ? nullptr : &*it;
}

double MemoryEstimate::activation_bytes() const {
  double sum = 0;
  for (const NodeMemory& n : nodes) sum += n.activation_bytes;
  return sum;
}

MemoryEstimate estimate_memory(const GraphIndex& index, const InferenceResult& shapes, const DatasetInfo* dataset) {
  const Graph& g = index.graph;
  const Registry& registry = Registry::instance();
  MemoryEstimate m;
  m.batch_size = std::max<int64_t>(g.training.batch_size, 1);
  m.optimizer_state = optim::optimizer_state_tensors(g.training);
  const double batch = double(m.batch_size);
  const double per_parameter = kBytesPerValue * (2 + m.optimizer_state);  // value, gradient, optimizer state
  const std::vector<char> counted = trained_nodes(index);

  for (const std::string& id : shapes.order) {
    const size_t i = index.node.at(id);
    const auto out = shapes.outputs.find(id);
    const LayerType* type = registry.find(g.nodes[i].type);
    if (!counted[i] || out == shapes.outputs.end() || !type) continue;
    const Node& node = g.nodes[i];
    NodeMemory n{id};
    double out_values = 0;
    for (const Shape& s : out->second) out_values += values(s);
    if (type->is_input()) {
      // The batch of examples and labels needs no gradient.
      n.activation_bytes = batch * out_values * kBytesPerValue;
      if (dataset) n.dataset_bytes = double(dataset->examples) * out_values * kBytesPerValue;
    } else {
      n.activation_bytes = 2 * batch * out_values * kBytesPerValue;
    }
    if (type->parameter_count) {
      n.parameters = type->parameter_count(node, input_shapes(index, shapes, node, *type));
      n.parameter_bytes = n.parameters * per_parameter;
    }
    m.parameters += n.parameters;
    m.bytes += n.bytes();
    m.nodes.push_back(std::move(n));
  }
  return m;
}

}  // namespace plexus::graph
