#pragma once
// Learning-rate schedulers over an Optimizer, as torch.optim.lr_scheduler. step() is called
// once per epoch, after the epoch's optimizer steps:
//
//   StepLR sched(opt, /*step_size=*/30, /*gamma=*/0.1);
//   for (int epoch = 0; epoch < 90; ++epoch) { train_one_epoch(); sched.step(); }
//
// Every scheduler computes each group's lr in closed form from the group's initial lr and
// the epoch count (PyTorch's _get_closed_form_lr), and writes it into the group. A scheduler
// sets the epoch-0 lr when it is constructed. The first scheduler attached to an optimizer
// records each group's current lr as ParamGroup::initial_lr; later ones count from that too.
#include <cstdint>
#include <memory>
#include <vector>

#include "optim/optimizer.h"

namespace plexus::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  void step();                                    // next epoch: last_epoch() + 1
  void set_epoch(int64_t epoch);                  // jump (e.g. when resuming); writes that epoch's lrs
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& get_last_lr() const { return last_lr_; }  // one per group
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Optimizer& optimizer() const { return *opt_; }
  // What the scheduler's epochs count: epochs (the default), or optimizer steps (a one-cycle
  // schedule); a training loop steps it accordingly.
  bool per_step() const { return per_step_; }
  void set_per_step(bool per_step) { per_step_ = per_step; }

  // The lr of a group whose initial lr is base_lr, `epoch` epochs in (epoch >= 0).
  virtual double lr_at(int64_t epoch, double base_lr) const = 0;

 protected:
  explicit LRScheduler(Optimizer& opt);
  // Derived constructors call this last, once their arguments are checked: it records the
  // base lrs (setting ParamGroup::initial_lr where unset) and applies epoch 0.
  void start();

 private:
  Optimizer* opt_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
  int64_t last_epoch_ = -1;
  bool per_step_ = false;
};

// lr = base * gamma ^ floor(epoch / step_size)
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t epoch, double base_lr) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = base * gamma ^ (number of milestones <= epoch); a repeated milestone counts twice.
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma = 0.1);
  double lr_at(int64_t epoch, double base_lr) const override;

 private:
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

// lr = base * gamma ^ epoch
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& opt, double gamma);
  double lr_at(int64_t epoch, double base_lr) const override;

 private:
  double gamma_;
};

// lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2. Past T_max the cosine
// carries on (back up to base at 2 * T_max), as in PyTorch.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t T_max, double eta_min = 0);
  double lr_at(int64_t epoch, double base_lr) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// Linear warm-up: lr = base * (start_factor + (1 - start_factor) * min(epoch, warmup_steps) / warmup_steps),
// i.e. torch's LinearLR(start_factor, end_factor=1, total_iters=warmup_steps). From
// warmup_steps on the lr stays at base; to continue with another schedule, chain it:
//   auto warm = std::make_shared<LinearWarmup>(opt, 5, 0.1);
//   auto cos = std::make_shared<CosineAnnealingLR>(opt, 95);
//   SequentialLR sched(opt, {warm, cos}, {5});   // or: LinearWarmup::then(opt, 5, 0.1, cos)
class LinearWarmup : public LRScheduler {
 public:
  LinearWarmup(Optimizer& opt, int64_t warmup_steps, double start_factor = 1.0 / 3);
  double lr_at(int64_t epoch, double base_lr) const override;

  // Warm-up for warmup_steps epochs, then `after` (its epoch 0 is the end of the warm-up).
  static std::unique_ptr<LRScheduler> then(Optimizer& opt, int64_t warmup_steps, double start_factor,
                                           std::shared_ptr<LRScheduler> after);

 private:
  int64_t warmup_steps_;
  double start_factor_;
};

// torch's LinearLR: lr = base * (start + (end - start) * min(epoch, total_iters) / total_iters).
// start_factor and end_factor in [0, 1].
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& opt, double start_factor, double end_factor, int64_t total_iters);
  double lr_at(int64_t epoch, double base_lr) const override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

// torch's OneCycleLR (two phases, cosine annealing, no momentum cycling), counted in optimizer
// steps: from base / div_factor the lr rises to base (the group's own lr is max_lr) over the
// first pct_start × total_steps steps, then falls to base / div_factor / final_div_factor at step
// total_steps − 1; later steps keep that lr (torch refuses them).
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& opt, int64_t total_steps, double pct_start = 0.3, double div_factor = 25,
             double final_div_factor = 1e4);
  double lr_at(int64_t step, double base_lr) const override;

 private:
  int64_t total_steps_;
  double pct_start_, div_factor_, final_div_factor_;
};

// torch's SequentialLR: schedulers[k] is in charge from milestones[k-1] on, counting its own
// epochs from 0 there. milestones: one fewer than schedulers, strictly increasing, > 0. The
// schedulers must belong to the same optimizer; this one drives them (do not step them).
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& opt, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);
  double lr_at(int64_t epoch, double base_lr) const override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace plexus::optim
