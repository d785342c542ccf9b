#pragma once
// A training step recorded once as a CUDA graph and replayed for every later batch of the
// same shape: one launch instead of a few dozen kernels and library calls, so a small model's
// step is no longer bound by the host's launch rate (PyTorch's torch.cuda.graph, done for the
// whole step: forward, loss, backward, update).
//
// What a replay may change is fixed at capture: the same tensors (the static input and target
// buffers the caller copies each batch into), the same memory — allocations during the capture
// come from a private pool of the caching allocator, reserved while the graph lives — and the
// same kernel arguments, except those that change per step: random keys are drawn afresh from
// their generator before every replay, and the optimizer's scalars (learning rate, Adam's
// bias correction) are staged again by running the host side of the update, which launches
// nothing (runtime.h, StepMode). Work that reads back to the host, or that the CUDA runtime
// cannot record, makes the capture fail; capture() then says why and the caller runs the step
// eagerly. No CUDA header here: front ends and the trainer include it in every build.
#include <functional>
#include <optional>
#include <string>

#include "tensor/tensor.h"

namespace plexus::cuda {

class CapturedStep {
 public:
  explicit CapturedStep(int device);
  ~CapturedStep();
  CapturedStep(const CapturedStep&) = delete;
  CapturedStep& operator=(const CapturedStep&) = delete;

  // Records the device work `step` queues (nothing runs yet). On failure returns why; then no
  // graph exists, the device and the allocator are usable, and the host-side effects of the
  // part of `step` that ran remain (the caller runs the step eagerly, from zero_grad on).
  std::optional<std::string> capture(const std::function<void()>& step);
  bool captured() const;

  // Inside `step`: the update that follows skips itself when `loss` (one element, on this
  // device) is not finite, so a NaN leaves the weights of the last good step.
  void skip_update_unless_finite(const Tensor& loss);

  // Runs the step once more. `refresh` runs the host side of the update in refreshing mode
  // (Optimizer::step()); it must stage the same sequence of values as the capture did. The
  // first replay after capture() uses the values staged during the capture itself.
  void replay(const std::function<void()>& refresh);

  struct Impl;  // step_graph.cu, in the CUDA plug-in (cuda/plugin.h), which makes and frees it

 private:
  Impl* impl_;
};

}  // namespace plexus::cuda
