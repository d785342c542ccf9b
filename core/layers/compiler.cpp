#include "layers/compiler.h"

#include <map>
#include <optional>
#include <unordered_set>

#include "layers/lowering.h"
#include "nn/conv.h"
#include "util/error.h"

namespace plexus::layers {

using namespace graph;

Tensor GraphModel::forward(const Tensor& x) {
  std::vector<Tensor> values(slots_);
  values[0] = x;
  std::vector<Tensor> args;
  for (const Step& s : observer_ ? steps_ : fused_) {
    args.clear();
    for (size_t i : s.inputs) args.push_back(values[i]);
    std::vector<Tensor> out = s.run(args);
    for (size_t i = 0; i < s.outputs.size(); ++i) values[s.outputs[i]] = std::move(out.at(i));
    if (observer_) observer_(s.node, values[s.outputs.at(0)]);
  }
  return values[prediction_];
}

void GraphModel::plan_fusion() {
  std::vector<int> readers(slots_, 0);
  std::vector<size_t> reader(slots_, 0);  // the step reading a slot, when one does
  for (size_t k = 0; k < steps_.size(); ++k)
    for (size_t i : steps_[k].inputs) {
      ++readers[i];
      reader[i] = k;
    }
  ++readers[prediction_];  // the loss reads it
  // The step that alone reads step k's only output, if one does.
  auto sole_reader = [&](size_t k) -> std::optional<size_t> {
    const std::vector<size_t>& out = steps_[k].outputs;
    if (out.size() != 1 || readers[out[0]] != 1 || out[0] == prediction_) return std::nullopt;
    return reader[out[0]];
  };
  fused_.clear();
  chains_.clear();
  std::vector<bool> absorbed(steps_.size(), false);
  for (size_t k = 0; k < steps_.size(); ++k) {
    if (absorbed[k]) continue;
    nn::Conv2d* conv = nn::fusable_conv(steps_[k].module);
    std::optional<size_t> relu = conv ? sole_reader(k) : std::nullopt;
    if (relu && !nn::fuses_as_relu(steps_[*relu].module)) relu.reset();
    std::optional<size_t> pool = conv ? sole_reader(relu ? *relu : k) : std::nullopt;
    if (pool && !nn::fuses_as_max_pool(steps_[*pool].module)) pool.reset();
    if (!relu && !pool) {
      fused_.push_back(steps_[k]);
      continue;
    }
    // Later steps read only the chain's last output, so the chain can run where the conv was.
    Step chain = steps_[k];
    chain.outputs = steps_[pool ? *pool : *relu].outputs;
    chain.run = [conv, r = relu.has_value(), p = pool.has_value()](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{conv->forward_fused(in.at(0), r, p)};
    };
    chains_.push_back({steps_[k].node});
    for (const std::optional<size_t>& i : {relu, pool})
      if (i) {
        absorbed[*i] = true;
        chains_.back().push_back(steps_[*i].node);
      }
    fused_.push_back(std::move(chain));
  }
}

struct Compiler {
  static CompiledGraph run(const Graph& g, const DatasetInfo& dataset, uint64_t seed) {
    CompiledGraph out;
    out.validation = validate(g, &dataset);
    if (!out.validation.ok()) {
      std::string msg = "the graph has problems:";
      for (const Problem& p : out.validation.problems)
        if (p.severity == Severity::Error) msg += "\n  " + to_string(p);
      throw ValueError(msg);
    }
    const Registry& registry = Registry::instance();
    const InferenceResult& shapes = out.validation.shapes;
    const Node* loss = nullptr;
    for (const Node& n : g.nodes)
      if (registry.find(n.type)->is_loss()) loss = &n;
    const LayerType& loss_type = *registry.find(loss->type);
    out.loss_node = loss->id;
    out.classification = loss_type.classification;
    out.loss = lowering(loss_type).loss(*loss);

    // The nodes the prediction depends on.
    const Edge* prediction = nullptr;
    for (const Edge* e : g.edges_into(loss->id))
      if (e->to.port == "input") prediction = e;
    std::unordered_set<std::string> needed{prediction->from.node};
    std::vector<std::string> stack{prediction->from.node};
    while (!stack.empty()) {
      const std::string n = stack.back();
      stack.pop_back();
      for (const Edge* e : g.edges_into(n))
        if (needed.insert(e->from.node).second) stack.push_back(e->from.node);
    }

    auto model = std::make_shared<GraphModel>();
    std::map<std::pair<std::string, std::string>, size_t> slot;  // (node, output port) -> value slot
    Generator gen(seed);
    for (const std::string& id : shapes.order) {
      if (!needed.count(id)) continue;
      const Node& node = *g.find(id);
      const LayerType& type = *registry.find(node.type);
      if (type.is_input()) {
        slot[{id, "x"}] = 0;
        continue;
      }
      GraphModel::Step step;
      step.node = id;
      std::vector<Shape> in_shapes;
      for (const auto& [port, edges] : input_edges(g, node, type))
        for (size_t e : edges) {
          const Edge& edge = g.edges[e];
          step.inputs.push_back(slot.at({edge.from.node, edge.from.port}));
          in_shapes.push_back(*shapes.edge_shapes[e]);
        }
      BuiltNode built = lowering(type).build(BuildContext{node, in_shapes, &gen});
      if (built.module) model->register_module(id, built.module);
      step.module = built.module.get();
      step.run = std::move(built.run);
      for (const PortSpec& p : type.outputs_of(node)) {
        slot[{id, p.name}] = model->slots_;
        step.outputs.push_back(model->slots_++);
      }
      model->steps_.push_back(std::move(step));
    }
    model->prediction_ = slot.at({prediction->from.node, prediction->from.port});
    model->plan_fusion();
    out.model = std::move(model);
    return out;
  }
};

CompiledGraph compile(const Graph& graph, const DatasetInfo& dataset, uint64_t seed) {
  return Compiler::run(graph, dataset, seed);
}

}  // namespace plexus::layers
