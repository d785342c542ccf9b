#pragma once
// TrainingStep: one optimisation step — forward, loss, backward, update — as the Trainer and
// the benchmarks run it. On the CPU, and on a CUDA device until the batch shape has settled,
// it runs eagerly: the loss is read back before the update (a non-finite loss skips it). On a
// CUDA device, once `warmup_steps` batches of one shape have run, the whole step is captured
// as a CUDA graph (cuda/step_graph.h) and later batches of that shape replay it: the batch is
// copied into the graph's static buffers, the per-step values staged, one launch, one read
// of the loss. A non-finite loss then skips the update on the device. Batches of another
// shape (a short last batch) run eagerly beside the graph. When the step cannot be captured
// (an optimizer whose update is not replayable, gradient clipping, which reads the norm on the
// host, or anything else the capture reports) it stays eager and graph_note() says why.
//
// An optimizer step may span several batches (gradient accumulation, StepPart) and several
// processes (data-parallel, StepOptions::comm): the gradients of its parts add up, scaled so
// that their sum is the gradient of the whole step's mean loss; such steps run eagerly.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dist/communicator.h"
#include "nn/module.h"
#include "optim/optimizer.h"
#include "tensor/tensor.h"

namespace plexus::cuda {
class CapturedStep;
}
namespace plexus::dist {
class GradientReducer;
}

namespace plexus::train {

using LossFunction = std::function<Tensor(const Tensor& output, const Tensor& target)>;
// A loss made of several (a graph with several loss nodes, layers::CompiledGraph): their names
// (the loss nodes' ids) and, called after the LossFunction, each one's own value as a scalar
// without history, in that order.
struct LossParts {
  std::vector<std::string> names;
  std::function<std::vector<Tensor>()> values;
  size_t count() const { return names.size(); }
  explicit operator bool() const { return !names.empty(); }
};

struct StepOptions {
  LossFunction loss;            // required
  LossParts loss_parts = {};    // none: the loss is one; else reported in StepResult::parts
  bool classification = true;   // count hits when the output is [N, ..., C] and the target [N, ...]
  float clip_grad_norm = 0.f;   // 0 = no clipping
  float clip_grad_value = 0.f;  // 0 = none; else each gradient element clamped to ±this, after the norm's clipping
  bool cuda_graphs = true;      // capture the steady step on a CUDA device
  // Recurrent layers carry their state from one step into the next (Module::set_carry_state):
  // each step starts from tensors the previous one made, which a captured graph cannot follow.
  bool carry_state = false;
  int warmup_steps = 2;         // eager steps of one shape before the capture
  // Gradient accumulation: optimizer steps span this many batches (StepPart says which).
  int accumulate_steps = 1;
  // Data-parallel: the ranks of the run (dist/communicator.h), null for this process alone.
  // Each step then all-reduces the gradients (dist/reducer.h) and sums its figures over the
  // ranks, so every rank's StepResult is the global batch's.
  dist::CommunicatorPtr comm = nullptr;
  // With comm: BatchNorm's batch statistics over the global batch (ops/replica_sum.h) instead
  // of each rank's share. Every rank must then have rows in every batch.
  bool sync_batchnorm = false;
};

// Where a batch stands in its optimizer step.
struct StepPart {
  // This process's rows over the global rows of the whole optimizer step (all its accumulated
  // batches, all ranks): the loss is scaled by it, so the summed gradient is that of the
  // whole step's mean loss.
  double weight = 1;
  bool first = true;   // zero the gradients before its backward
  bool last = true;    // all-reduce (data-parallel) and update after its backward
  // This process wants to stop. Data-parallel ranks OR it in the step's figures, so they all
  // stop after the same step (StepResult::stop).
  bool stop = false;
};

// Looks inside one step (train/stats_sampler.h): TrainingStep::run calls it after the
// backward pass (before clipping and the update) and after the update. Neither runs when the
// loss is not finite.
class StepProbe {
 public:
  virtual ~StepProbe() = default;
  virtual void after_backward() = 0;
  virtual void after_update() = 0;
};

struct StepResult {
  float loss = 0;               // the mean over the (global) batch
  std::vector<float> parts;     // with StepOptions::loss_parts: each part's, as `loss`
  int64_t hits = 0;             // correct predictions, when counted
  bool hits_counted = false;
  int64_t examples = 0;         // rows of the (global) batch
  int64_t positions = 0;        // positions the hits were counted over
  bool updated = false;         // false when the loss was not finite (the run cannot go on)
  bool stop = false;            // some rank asked to stop (StepPart::stop)
};

class TrainingStep {
 public:
  TrainingStep(nn::Module& model, optim::Optimizer& optimizer, StepOptions options);
  ~TrainingStep();
  TrainingStep(const TrainingStep&) = delete;
  TrainingStep& operator=(const TrainingStep&) = delete;

  // One step on a batch (on any device; it goes to the model's). With a probe the step runs
  // eagerly, also on a device that replays a CUDA graph: the graph, and the count of steps
  // towards capturing it, stay as they were, as for a batch of another shape.
  // Data-parallel, every rank calls it for every batch, also with an empty part (undefined
  // inputs: a short last batch). With a probe (a stats sample) only on a part that is `last`.
  StepResult run(const Tensor& inputs, const Tensor& targets, StepProbe* probe = nullptr, StepPart part = {});

  // Empty until the step has been captured or found unfit for a CUDA graph, then one line for
  // the user ("the training step runs as a CUDA graph ..." / "CUDA graphs not used: ..."); it
  // may change once more (shapes that kept changing settle and the step is captured).
  const std::string& graph_note() const { return note_; }
  bool replaying() const;

 private:
  StepResult eager(const Tensor& x, const Tensor& y, StepProbe* probe, const StepPart& part);
  // The step's figures as summed over the ranks, and what their sums say.
  std::vector<double> figures(const StepResult& r, bool stop) const;
  static void take_sums(StepResult& r, const std::vector<double>& sums);
  static void count(StepResult& r, const Tensor& x, const Tensor& y);  // examples and positions
  static StepResult stopping(StepResult r, const StepPart& part) {
    r.stop = part.stop;
    return r;
  }
  StepResult replay(const Tensor& inputs, const Tensor& targets);
  bool try_capture(const Tensor& inputs, const Tensor& targets);
  void stop_graphs(const std::string& why);
  // The loss and the hits as one device tensor, so a step reads the device once.
  Tensor statistics(const Tensor& out, const Tensor& target, const Tensor& loss);
  StepResult read(const Tensor& stats, bool update_ran) const;

  nn::Module& model_;
  optim::Optimizer& opt_;
  StepOptions options_;
  Device device_;
  bool graphs_possible_ = false;
  Shape last_x_, last_y_;
  int same_shape_steps_ = 0;
  int uncaptured_steps_ = 0;
  static constexpr int kShapeNoteAfter = 20;  // steps without a capture before saying why
  std::unique_ptr<cuda::CapturedStep> graph_;
  std::unique_ptr<dist::GradientReducer> reducer_;
  Tensor static_x_, static_y_, static_stats_;
  std::string note_;
};

}  // namespace plexus::train
