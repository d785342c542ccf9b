#include "layers/compiler.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "graph/inputs.h"
#include "layers/lowering.h"
#include "nn/conv.h"
#include "nn/linear_activation.h"
#include "nn/residual.h"
#include "ops/ops.h"
#include "util/error.h"
#include "util/out_of_memory.h"

namespace plexus::layers {

using namespace graph;

Tensor GraphModel::forward(const Tensor& x) {
  std::vector<Tensor> values = run(x);
  if (loss_inputs_) {
    loss_inputs_->predictions.clear();
    loss_inputs_->targets.clear();
    for (size_t slot : term_slots_) loss_inputs_->predictions.push_back(values[slot]);
    for (size_t slot : target_slots_) loss_inputs_->targets.push_back(slot == kNoSlot ? Tensor() : values[slot]);
  }
  return values[prediction_];
}

std::vector<Tensor> GraphModel::predictions(const Tensor& x) {
  const std::vector<Tensor> values = run(x);
  std::vector<Tensor> out;
  for (size_t slot : term_slots_) out.push_back(values[slot]);
  return out;
}

std::vector<Tensor> GraphModel::run(const Tensor& x) {
  std::vector<Tensor> values(slots_);
  values[0] = x;
  std::vector<Tensor> args;
  for (const Step& s : observer_ || replacer_ ? steps_ : fused_) {
    args.clear();
    for (size_t i : s.inputs) args.push_back(values[i]);
    std::vector<Tensor> out;
    try {
      out = s.run(args);
    } catch (OutOfMemoryError& e) {  // says which node's forward pass ran out (a fused chain: its first)
      if (e.node.empty()) e.node = s.node;
      throw;
    }
    for (size_t i = 0; i < s.outputs.size(); ++i) values[s.outputs[i]] = std::move(out.at(i));
    if (replacer_)
      if (Tensor r = replacer_(s.node, values[s.outputs.at(0)]); r.defined()) values[s.outputs.at(0)] = std::move(r);
    if (observer_) observer_(s.node, values[s.outputs.at(0)]);
  }
  return values;
}

namespace {

// A Linear whose only reader is a ReLU or GELU runs as one op (nn/linear_activation.h): the
// activation in the product's epilogue. The fused step, with the pair's node ids added to
// `chains`, or nothing.
template <class Step, class SoleReader>
std::optional<Step> fuse_linear_activation(const std::vector<Step>& steps, size_t k, const SoleReader& sole_reader,
                                           std::vector<bool>& absorbed, std::vector<std::vector<std::string>>& chains) {
  nn::Linear* linear = nn::fusable_linear(steps[k].module);
  const std::optional<size_t> act_step = linear ? sole_reader(k) : std::nullopt;
  const std::optional<Activation> act = act_step ? nn::fused_activation(steps[*act_step].module) : std::nullopt;
  if (!act) return std::nullopt;
  Step fused = steps[k];
  fused.outputs = steps[*act_step].outputs;
  fused.run = [linear, a = *act](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{nn::forward_fused(*linear, in.at(0), a)};
  };
  absorbed[*act_step] = true;
  chains.push_back({steps[k].node, steps[*act_step].node});
  return fused;
}

}  // namespace

GraphModel::SlotUse GraphModel::slot_use() const {
  SlotUse use{std::vector<std::vector<size_t>>(slots_), std::vector<size_t>(slots_, SlotUse::kNone)};
  for (size_t k = 0; k < steps_.size(); ++k) {
    for (size_t i : steps_[k].inputs) use.readers[i].push_back(k);
    for (size_t o : steps_[k].outputs) use.producer[o] = k;
  }
  for (size_t slot : term_slots_) use.readers[slot].push_back(SlotUse::kLoss);
  for (size_t slot : target_slots_)
    if (slot != kNoSlot) use.readers[slot].push_back(SlotUse::kLoss);
  return use;
}

void GraphModel::plan_fusion() {
  const SlotUse use = slot_use();
  // The step that alone reads step k's only output, if one does.
  auto sole_reader = [&](size_t k) -> std::optional<size_t> {
    const std::vector<size_t>& out = steps_[k].outputs;
    if (out.size() != 1 || use.readers[out[0]].size() != 1 || use.readers[out[0]][0] == SlotUse::kLoss)
      return std::nullopt;
    return use.readers[out[0]][0];
  };
  fused_.clear();
  chains_.clear();
  std::vector<bool> absorbed(steps_.size(), false);
  std::map<size_t, Step> residuals = fuse_residuals(use, absorbed);
  for (size_t k = 0; k < steps_.size(); ++k) {
    if (absorbed[k]) continue;
    if (auto r = residuals.find(k); r != residuals.end()) {
      fused_.push_back(std::move(r->second));
      continue;
    }
    if (std::optional<Step> fused = fuse_linear_activation(steps_, k, sole_reader, absorbed, chains_)) {
      fused_.push_back(std::move(*fused));
      continue;
    }
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

std::map<size_t, GraphModel::Step> GraphModel::fuse_residuals(const SlotUse& use, std::vector<bool>& absorbed) {
  if (!nn::fused_residual_enabled()) return {};
  const std::vector<std::vector<size_t>>& readers = use.readers;
  std::map<size_t, Step> fused;
  for (size_t k = 0; k < steps_.size(); ++k) {
    const Step& add = steps_[k];
    if (add.type != "Add" || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) continue;
    for (const size_t branch : {1, 0}) {  // the Dropout on either input, the second first
      const size_t from = use.producer[add.inputs[branch]];
      nn::Dropout* drop = from == SlotUse::kNone || absorbed[from] ? nullptr : nn::fusable_dropout(steps_[from].module);
      if (!drop || readers[add.inputs[branch]].size() != 1) continue;
      nn::LayerNorm* norm = nullptr;
      chains_.push_back({steps_[from].node, add.node});
      Step step = add;
      step.inputs = {add.inputs[1 - branch], steps_[from].inputs.at(0)};
      for (size_t r : readers[add.outputs.at(0)])
        if (r != SlotUse::kLoss && !absorbed[r] && (norm = nn::fusable_layer_norm(steps_[r].module))) {
          step.outputs.push_back(steps_[r].outputs.at(0));
          chains_.back().push_back(steps_[r].node);
          absorbed[r] = true;
          break;
        }
      absorbed[from] = true;
      step.run = [drop, norm](const std::vector<Tensor>& in) {
        return nn::residual_forward(in.at(0), in.at(1), *drop, norm);
      };
      fused.emplace(k, std::move(step));
      break;
    }
  }
  return fused;
}

struct Compiler {
  // An Input reading some of a table's columns: x[:, columns]. Consecutive columns are a view;
  // others are gathered with an index kept on x's device.
  static GraphModel::StepRun select_columns(std::vector<int64_t> columns) {
    const bool consecutive =
        std::adjacent_find(columns.begin(), columns.end(), [](int64_t a, int64_t b) { return b != a + 1; }) ==
        columns.end();
    if (consecutive)
      return [start = columns.front(), k = int64_t(columns.size())](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{contiguous(narrow(in.at(0), 1, start, k))};
      };
    std::vector<float> at(columns.begin(), columns.end());
    auto index = std::make_shared<Tensor>(from_vector(at, {int64_t(at.size())}));
    return [index](const std::vector<Tensor>& in) {
      if (index->device() != in.at(0).device()) *index = index->to(in.at(0).device());
      return std::vector<Tensor>{index_select(in.at(0), 1, *index)};
    };
  }

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
    std::vector<const Node*> losses;
    for (const Node& n : g.nodes)
      if (registry.find(n.type)->is_loss()) losses.push_back(&n);
    const auto classifies = [&](const Node* n) { return registry.find(n->type)->classification; };
    const auto primary = std::find_if(losses.begin(), losses.end(), classifies);
    out.primary = primary == losses.end() ? 0 : size_t(primary - losses.begin());
    out.loss_node = losses[out.primary]->id;
    out.classification = classifies(losses[out.primary]);

    // Each loss's prediction and target, and the nodes the predictions depend on.
    std::vector<const Edge*> predicted, targets;
    std::vector<LossFunction> functions;
    for (const Node* loss : losses) {
      LossTerm term{loss->id, loss_weight(*loss), false, {}};
      targets.push_back(nullptr);
      for (const Edge* e : g.edges_into(loss->id)) {
        if (e->to.port == "input") {
          predicted.push_back(e);
          term.prediction = shapes.edge_shapes.at(size_t(e - g.edges.data())).value_or(Shape{});
        }
        if (e->to.port == "target" && e->from.port == "x") {
          term.reconstructs = true;
          targets.back() = e;
        }
      }
      out.terms.push_back(term);
      functions.push_back(lowering(*registry.find(loss->type)).loss(*loss));
    }
    std::unordered_set<std::string> needed;
    std::vector<std::string> stack;
    for (const std::vector<const Edge*>* ends : {&predicted, &targets})
      for (const Edge* e : *ends)
        if (e && needed.insert(e->from.node).second) stack.push_back(e->from.node);
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
        std::vector<int64_t> columns = input_columns(graph::input_read(node), dataset);
        if (columns.empty()) {
          slot[{id, "x"}] = 0;  // the whole example
          continue;
        }
        slot[{id, "x"}] = model->slots_;
        model->steps_.push_back({id, select_columns(std::move(columns)), {0}, {model->slots_++}, nullptr, node.type});
        continue;
      }
      GraphModel::Step step;
      step.node = id;
      step.type = node.type;
      std::vector<Shape> in_shapes;
      for (const auto& [port, edges] : input_edges(g, node, type))
        for (size_t e : edges) {
          const Edge& edge = g.edges[e];
          step.inputs.push_back(slot.at({edge.from.node, edge.from.port}));
          in_shapes.push_back(*shapes.edge_shapes[e]);
        }
      BuiltNode built = lowering(type).build(BuildContext{node, in_shapes, &gen});
      if (built.module) {
        if (node.frozen) built.module->freeze();
        model->register_module(id, built.module);
      }
      step.module = built.module.get();
      step.run = std::move(built.run);
      for (const PortSpec& p : type.outputs_of(node)) {
        slot[{id, p.name}] = model->slots_;
        step.outputs.push_back(model->slots_++);
      }
      model->steps_.push_back(std::move(step));
    }
    for (const Edge* e : predicted) model->term_slots_.push_back(slot.at({e->from.node, e->from.port}));
    for (const Edge* e : targets)
      model->target_slots_.push_back(e ? slot.at({e->from.node, e->from.port}) : GraphModel::kNoSlot);
    model->prediction_ = model->term_slots_[out.primary];
    model->plan_fusion();
    out.model = std::move(model);
    set_loss(out, std::move(functions));
    return out;
  }

  // One loss against the labels is the node's own function; anything else reads what the
  // model's forward pass kept (GraphModel::LossInputs) and sums the weighted terms.
  static void set_loss(CompiledGraph& out, std::vector<LossFunction> functions) {
    if (functions.size() == 1 && !out.terms[0].reconstructs) {
      out.loss = std::move(functions[0]);
      return;
    }
    auto inputs = std::make_shared<GraphModel::LossInputs>();
    out.model->loss_inputs_ = inputs;
    auto parts = std::make_shared<std::vector<Tensor>>();
    out.loss = [inputs, parts, functions = std::move(functions), terms = out.terms, primary = out.primary](
                   const Tensor& prediction, const Tensor& labels) {
      if (inputs->predictions.size() != terms.size())
        throw ValueError("the graph's loss needs the model's forward pass on the same batch first");
      parts->clear();
      Tensor total;
      for (size_t i = 0; i < terms.size(); ++i) {
        // The primary prediction as given: evaluation hands over a host copy.
        const Tensor& p = i == primary ? prediction : inputs->predictions[i];
        const Tensor& target = terms[i].reconstructs ? inputs->targets.at(i) : labels;
        const Tensor loss = functions[i](p, target.device() == p.device() ? target : target.to(p.device()));
        parts->push_back(loss.detach());
        const Tensor weighted = terms[i].weight == 1 ? loss : loss * float(terms[i].weight);
        total = total.defined() ? total + (weighted.device() == total.device() ? weighted : weighted.to(total.device()))
                                : weighted;
      }
      inputs->targets.clear();  // the batch and its activations are not kept past the step
      inputs->predictions.clear();
      return total;
    };
    if (out.terms.size() > 1) out.loss_parts = [parts] { return *parts; };
  }
};

CompiledGraph compile(const Graph& graph, const DatasetInfo& dataset, uint64_t seed) {
  return Compiler::run(graph, dataset, seed);
}

}  // namespace plexus::layers
