#pragma once
// Learning-rate warm-up per optimizer step, as large-batch training uses it (Goyal et al.,
// "Accurate, Large Minibatch SGD", 2017): over the first `steps` updates every group's lr rises
// linearly from start_factor × its lr to its lr. It multiplies what the epoch schedule set, so
// the two compose: lr = base × schedule(epoch) × warm-up(step). The groups keep the schedule's
// lrs between steps; ScaledLr applies the factor around one update:
//
//   const StepWarmup warmup{.steps = 500, .start_factor = 0.1};
//   { ScaledLr scaled(opt, warmup.factor(steps_done)); opt.step(); }  // the schedule's lrs again after
//
// (scheduler.h's LinearWarmup is the same ramp counted in epochs, as a scheduler.)
#include <cstdint>
#include <vector>

#include "optim/optimizer.h"

namespace plexus::optim {

struct StepWarmup {
  int64_t steps = 0;  // 0 = none
  double start_factor = 0.1;

  // ValueError unless steps >= 0 and 0 <= start_factor <= 1.
  void check() const;
  // The factor of the update that follows `done` updates: start_factor + (1 − start_factor) ·
  // done / steps while done < steps, then 1.
  double factor(int64_t done) const;
};

// Multiplies every group's lr by `factor` while it lives and then puts the exact lrs back. A
// factor of 1 changes nothing.
class ScaledLr {
 public:
  ScaledLr(Optimizer& optimizer, double factor);
  ~ScaledLr();
  ScaledLr(const ScaledLr&) = delete;
  ScaledLr& operator=(const ScaledLr&) = delete;

 private:
  Optimizer& optimizer_;
  std::vector<double> saved_;  // empty when the factor is 1
};

}  // namespace plexus::optim
