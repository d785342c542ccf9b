#pragma once
// StatsSampler: how the Trainer measures a training step for the per-node statistics
// (train/node_stats.h). On a sampled step it installs an observer on the model, which turns
// each node's output into a NodeStat as the forward pass makes it (nothing is kept alive);
// as the step's StepProbe it then adds each node's parameter figures: the gradient norm
// after the backward pass (before any clipping), the weights' norm and a copy of them before
// the update (into buffers kept from one sample to the next), and the update's norm after it.
// Steps that are not sampled run with no observer and no probe, at no cost.
//
// Parameters belong to a node by name: "<node id>.<param>", as the graph compiler registers
// them (layers/compiler.h).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nn/module.h"
#include "train/health.h"
#include "train/node_stats.h"
#include "train/step.h"

namespace plexus::train {

// Called with each node's output, in graph order (layers::GraphModel::Observer).
using OutputObserver = std::function<void(const std::string& node, const Tensor& output)>;
// Installs an observer on the model; a null one removes it.
using ObserveOutputs = std::function<void(OutputObserver)>;

class StatsSampler : public StepProbe {
 public:
  // `every`: sample steps 1, 1 + every, 1 + 2·every, ... of the run (0 = none; diagnose()
  // still works).
  StatsSampler(nn::Module& model, ObserveOutputs observe, int64_t every, NodeInfos nodes);
  ~StatsSampler() override;
  StatsSampler(const StatsSampler&) = delete;
  StatsSampler& operator=(const StatsSampler&) = delete;

  bool due(int64_t step) const { return every_ > 0 && (step - 1) % every_ == 0; }

  // Starts measuring the step about to run; pass this sampler to TrainingStep::run as its
  // probe, then take the sample with finish().
  void begin();
  void after_backward() override;
  void after_update() override;
  // The sample of the step since begin(), with the health issues standing after it.
  NodeStats finish(int epoch, int64_t batch, int64_t step);

  // After a non-finite loss: runs the forward pass on `inputs` again, measuring every node's
  // output, and returns that sample (its health names the first node whose output is not
  // finite, if one is). The model does not learn from it.
  NodeStats diagnose(const Tensor& inputs, int epoch, int64_t batch, int64_t step);

 private:
  struct NodeParams {
    std::string node;
    std::vector<Tensor> params;
    std::vector<Tensor> before;  // host copies before the update, reused
    double weight_sq = 0, grad_sq = 0, update_sq = 0;
    bool measured = false;  // in this sample
  };
  void stop_observing();

  nn::Module& model_;
  ObserveOutputs observe_;
  int64_t every_;
  HealthMonitor monitor_;
  std::vector<NodeParams> params_;  // nodes with parameters, in the model's registration order
  std::vector<NodeStat> outputs_;   // this sample's, in graph order
  bool observing_ = false;
};

}  // namespace plexus::train
