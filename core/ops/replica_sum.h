#pragma once
// Sums across the processes of a data-parallel run, for ops whose training-mode result depends
// on the whole global batch: synchronised BatchNorm (batch_norm's statistics and their
// gradients over every process's rows). The training step installs it on its thread around
// forward and backward (train/step.h, with dist/); without it, ops see this process's rows alone.
#include <functional>

#include "tensor/tensor.h"

namespace plexus {

// Sums `t` (contiguous float32) over the processes, in place; every process calls it at the
// same point of the same ops.
using ReplicaSum = std::function<void(Tensor& t)>;

// The sum installed on this thread, or null.
const ReplicaSum* replica_sum();

class ReplicaSumGuard {
 public:
  explicit ReplicaSumGuard(ReplicaSum sum);
  ~ReplicaSumGuard();
  ReplicaSumGuard(const ReplicaSumGuard&) = delete;
  ReplicaSumGuard& operator=(const ReplicaSumGuard&) = delete;

 private:
  ReplicaSum previous_;
};

}  // namespace plexus
