#pragma once
// TrainingStep: one optimisation step — forward, loss, backward, update — as the Trainer and
// the benchmarks run it. On the CPU, and on a CUDA device until the batch shape has settled,
// it runs eagerly: the loss is read back before the update (a non-finite loss skips it). On a
// CUDA device, once `warmup_steps` batches of one shape have run, the whole step is captured
// as a CUDA graph (cuda/graph.h) and later batches of that shape replay it: the batch is
// copied into the graph's static buffers, the per-step values staged, one launch, one read
// of the loss. A non-finite loss then skips the update on the device. Batches of another
// shape (a short last batch) run eagerly beside the graph. When the step cannot be captured
// (an optimizer whose update is not replayable, gradient clipping, which reads the norm on the
// host, or anything else the capture reports) it stays eager and graph_note() says why.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "nn/module.h"
#include "optim/optimizer.h"
#include "tensor/tensor.h"

namespace plexus::cuda {
class CapturedStep;
}

namespace plexus::train {

using LossFunction = std::function<Tensor(const Tensor& output, const Tensor& target)>;

struct StepOptions {
  LossFunction loss;            // required
  bool classification = true;   // count hits when the output is [N, ..., C] and the target [N, ...]
  float clip_grad_norm = 0.f;   // 0 = no clipping
  bool cuda_graphs = true;      // capture the steady step on a CUDA device
  // Recurrent layers carry their state from one step into the next (Module::set_carry_state):
  // each step starts from tensors the previous one made, which a captured graph cannot follow.
  bool carry_state = false;
  int warmup_steps = 2;         // eager steps of one shape before the capture
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
  float loss = 0;
  int64_t hits = 0;             // correct predictions, when counted
  bool hits_counted = false;
  bool updated = false;         // false when the loss was not finite
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
  StepResult run(const Tensor& inputs, const Tensor& targets, StepProbe* probe = nullptr);

  // Empty until the step has been captured or found unfit for a CUDA graph, then one line for
  // the user ("the training step runs as a CUDA graph ..." / "CUDA graphs not used: ..."); it
  // may change once more (shapes that kept changing settle and the step is captured).
  const std::string& graph_note() const { return note_; }
  bool replaying() const;

 private:
  StepResult eager(const Tensor& x, const Tensor& y, StepProbe* probe);
  StepResult replay(const Tensor& inputs, const Tensor& targets);
  bool try_capture(const Tensor& inputs, const Tensor& targets);
  void stop_graphs(const std::string& why);
  // The loss and the hits as one device tensor, so a step reads the device once.
  Tensor statistics(const Tensor& out, const Tensor& target, const Tensor& loss) const;
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
  Tensor static_x_, static_y_, static_stats_;
  std::string note_;
};

}  // namespace plexus::train
