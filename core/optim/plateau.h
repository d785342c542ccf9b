#pragma once
// torch.optim.lr_scheduler.ReduceLROnPlateau: once a metric has not improved for more than
// `patience` epochs, every group's lr is multiplied by `factor` (not below min_lr), then
// `cooldown` epochs pass before bad epochs count again. Stepped once per epoch with that epoch's
// metric, after its optimizer steps:
//
//   ReduceLROnPlateau plateau(opt, {.patience = 2});
//   for (...) { train_one_epoch(); plateau.step(validation_loss()); }
//
// Unlike the schedulers of optim/scheduler.h its lrs depend on the metrics seen, so its state
// (PlateauState, with the lrs) is what a resumed run needs back.
#include <cstdint>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace plexus::optim {

struct PlateauOptions {
  bool maximize = false;  // torch's mode: "max" (accuracy) or "min" (loss)
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  bool relative = true;  // threshold_mode "rel", else "abs"
  int64_t cooldown = 0;
  double min_lr = 0;
  double eps = 1e-8;  // reductions smaller than this are skipped
};

struct PlateauState {
  double best = 0;  // ±infinity before the first step
  int64_t bad_epochs = 0, cooldown_left = 0, last_epoch = 0;
  std::vector<double> lrs;  // each group's
  bool operator==(const PlateauState&) const = default;
};

class ReduceLROnPlateau {
 public:
  // ValueError naming the option for factor outside (0, 1), a negative patience, cooldown,
  // threshold or min_lr.
  ReduceLROnPlateau(Optimizer& optimizer, PlateauOptions options);
  void step(double metric);
  // The state to save, and to go on from (its lrs are written into the groups).
  PlateauState state() const;
  void restore(const PlateauState& state);
  const PlateauOptions& options() const { return options_; }
  // Group 0's lr over its lr when this was made: what the reductions have done to it.
  double scale() const;

 private:
  bool better(double metric) const;

  Optimizer& opt_;
  PlateauOptions options_;
  double best_;
  int64_t bad_epochs_ = 0, cooldown_left_ = 0, last_epoch_ = 0;
  double first_lr_ = 0;  // group 0's, for scale()
};

}  // namespace plexus::optim
