#pragma once
// The compiler: a valid graph becomes a model that trains, each node by its type's lowering
// (layers/lowering.h). The model runs a topologically
// ordered plan over core modules (branches, merges and residual connections included); each
// layer is registered under its node id, so parameters are named "<node id>.<param>" in
// checkpoints and in `plexus-cli grad` output.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/registry.h"
#include "graph/validate.h"
#include "nn/module.h"

namespace plexus::layers {

class GraphModel : public nn::Module {
 public:
  // x: the dataset's examples, batched (Inputs reading a table's columns take theirs). Returns the prediction fed to the loss node (with
  // several, the primary one's: CompiledGraph::primary).
  Tensor forward(const Tensor& x) override;
  // Every loss node's prediction, in CompiledGraph::terms order.
  std::vector<Tensor> predictions(const Tensor& x);
  std::string type_name() const override { return "GraphModel"; }

  // Called with each node's first output as the plan runs, in graph order: how a training
  // step is measured (train/stats_sampler.h). A node with several output ports (Split, a
  // recurrent layer's final state) is measured by its first, its main one. Null, the default,
  // costs nothing.
  using Observer = std::function<void(const std::string& node, const Tensor& output)>;
  void set_observer(Observer observer) { observer_ = std::move(observer); }
  const Observer& observer() const { return observer_; }
  // Called with each node's first output as the plan runs, like the observer, and may return a
  // tensor of the same shape that the rest of the plan uses instead (undefined: keep it): how an
  // explanation differentiates at, or interpolates, an intermediate output (explain/, a text
  // model's Embedding output). Like an observer it turns the fused chains off.
  using Replacer = std::function<Tensor(const std::string& node, const Tensor& output)>;
  void set_replacer(Replacer replacer) { replacer_ = std::move(replacer); }
  const Replacer& replacer() const { return replacer_; }

  // The node ids of each chain of steps that runs as one op when nothing observes the nodes'
  // outputs (the chain's inner outputs feed nothing else): residual Dropout → Add (→ LayerNorm)
  // (fuse_residuals), Linear → ReLU or GELU, Conv2d → ReLU → MaxPool2d(2) or a shorter one.
  const std::vector<std::vector<std::string>>& fused_chains() const { return chains_; }

 private:
  friend struct Compiler;
  using StepRun = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  struct Step {
    std::string node;
    StepRun run;  // one tensor per output port
    std::vector<size_t> inputs;  // value slots, in port order
    std::vector<size_t> outputs; // value slots written (one per output port)
    nn::Module* module = nullptr;  // the node's, if it has one
    std::string type;              // the node's layer type ("Add")
  };
  // Conv2d → ReLU → MaxPool2d(2) chains whose inner outputs feed nothing else become one step
  // (nn::Conv2d::forward_fused), as nn::Sequential runs them: fused_ is the plan without an
  // observer or replacer, which must see every node's output and so run steps_.
  void plan_fusion();
  // Who reads and who writes each value slot, as the fusion rules ask: the steps reading it
  // (kLoss for a loss reading it as a prediction or target: no step may then absorb its
  // producer's output) and the step writing it (kNone for the model's input).
  struct SlotUse {
    static constexpr size_t kLoss = size_t(-1), kNone = size_t(-1);
    std::vector<std::vector<size_t>> readers;
    std::vector<size_t> producer;
  };
  SlotUse slot_use() const;
  // Dropout → Add (→ LayerNorm) as one step (nn::residual_forward) where the Add has two inputs
  // and the Dropout's output feeds it alone: the step runs where the Add did and writes its sum
  // and, when a LayerNorm reads the sum, that norm's output (a pre-norm block's next Add still
  // reads the sum). Marks the Dropout and LayerNorm steps absorbed, lists them in chains_;
  // returns the steps by the Add's index.
  std::map<size_t, Step> fuse_residuals(const SlotUse& use, std::vector<bool>& absorbed);
  std::vector<Tensor> run(const Tensor& x);  // every value slot
 public:
  // What the losses read besides the prediction forward() returns, kept only when a loss needs
  // them (several loss nodes, or one against the input): every loss's prediction and, for a loss
  // against an Input's x, that x, as the last forward pass left them. CompiledGraph::loss takes
  // them and lets go.
  struct LossInputs {
    std::vector<Tensor> predictions;
    std::vector<Tensor> targets;  // per loss: the x it reconstructs; undefined for the labels
  };

 private:
  std::vector<Step> steps_, fused_;
  std::vector<std::vector<std::string>> chains_;
  size_t slots_ = 1;               // slot 0 holds x
  size_t prediction_ = 0;          // slot of the primary loss node's input
  std::vector<size_t> term_slots_; // slot of each loss node's input
  std::vector<size_t> target_slots_;  // slot of each loss node's x target; kNoSlot for labels
  static constexpr size_t kNoSlot = size_t(-1);
  std::shared_ptr<LossInputs> loss_inputs_;
  Observer observer_;
  Replacer replacer_;
};

// One loss node of a compiled graph.
struct LossTerm {
  std::string node;           // its id
  double weight = 1;          // its loss_weight
  bool reconstructs = false;  // its target is an Input's examples x, not the labels y
  Shape prediction;           // the shape of one example's prediction
};

struct CompiledGraph {
  std::shared_ptr<GraphModel> model;
  // The loss training minimises, of the prediction the model returned last and the labels:
  // the one loss node's, or the sum of several, each times its weight.
  std::function<Tensor(const Tensor& prediction, const Tensor& target)> loss;
  // With several loss nodes, null otherwise: after `loss`, each node's own loss (unweighted,
  // a scalar without history), in `terms` order, for the figures.
  std::function<std::vector<Tensor>()> loss_parts;
  std::vector<LossTerm> terms;  // every loss node, in graph order
  // The primary loss, whose prediction the model returns (and an exported model's first
  // output): the first classification loss, else the first loss. Its type decides
  // `classification`, and accuracy is counted on its prediction.
  size_t primary = 0;
  bool classification = false;  // the primary loss compares class scores with class labels
  std::string loss_node;        // the primary loss's id
  graph::Validation validation;        // its warnings, and the shapes
};

// Validates first; a graph with errors throws ValueError listing every one of them.
// `seed` makes the initial weights reproducible.
CompiledGraph compile(const graph::Graph& graph, const graph::DatasetInfo& dataset, uint64_t seed);

}  // namespace plexus::layers
