#pragma once
// Optimizers and learning-rate schedules chosen by name, as plain data: what a project file's
// training settings hold (graph::TrainingSettings extends both) and what plexus-cli's flags
// fill, with the names there are and what each optimizer keeps. optim/factory.h builds the
// optimizer and the scheduler they describe; graph/ checks and estimates with this alone.
#include <cstdint>
#include <string>
#include <vector>

namespace plexus::optim {

struct OptimizerConfig {
  std::string optimizer = "sgd";  // one of optimizer_names(): sgd, adam, adamw, rmsprop, adagrad
  double lr = 0.1;
  double momentum = 0;            // sgd, rmsprop
  bool nesterov = false;          // sgd
  double weight_decay = 0;        // adamw: decoupled from the gradient
  bool operator==(const OptimizerConfig&) const = default;
};

struct ScheduleConfig {
  std::string schedule = "none";  // one of schedule_names()
  int64_t step_size = 1;          // step: epochs between decays
  double gamma = 0.1;             // step: the factor of each decay; exponential: of every epoch
  // Per optimizer step, on top of the schedule (optim/step_warmup.h): over the first
  // warmup_steps updates the lr rises linearly from warmup_start_factor × lr to lr; 0 = none.
  // The "warmup_linear" schedule makes the same ramp its first part instead.
  int64_t warmup_steps = 0;
  double warmup_start_factor = 0.1;
  // warmup_linear: after the warm-up the lr falls linearly to end_factor × lr at the last step.
  double end_factor = 0;
  // onecycle (torch's OneCycleLR, per optimizer step, max_lr = lr): the share of the steps
  // rising from lr / div_factor to lr, then falling (cosine) to lr / div_factor / final_div_factor.
  double pct_start = 0.3;
  double div_factor = 25;
  double final_div_factor = 1e4;
  // plateau (torch's ReduceLROnPlateau, stepped with the monitored metric each epoch).
  double plateau_factor = 0.1;
  int64_t plateau_patience = 10;
  double plateau_threshold = 1e-4;
  std::string plateau_threshold_mode = "rel";  // rel or abs
  int64_t plateau_cooldown = 0;
  double plateau_min_lr = 0;
  bool operator==(const ScheduleConfig&) const = default;
};

const std::vector<std::string>& optimizer_names();  // sgd, adam, adamw, rmsprop, adagrad
// none, step, cosine, exponential, onecycle, warmup_linear, plateau
const std::vector<std::string>& schedule_names();
// The figures a run can watch for early stopping and the plateau schedule (train::Monitor):
// val_loss, val_accuracy, train_loss, train_accuracy.
const std::vector<std::string>& monitor_names();

// The weight decay an optimizer uses when none is given: 0.01 for adamw (PyTorch's), else 0.
double default_weight_decay(const std::string& optimizer);
// How many tensors the size of each parameter the optimizer make_optimizer builds keeps
// (momentum buffers, Adam's two moments, ...), for memory estimates; 0 for an unknown name.
int optimizer_state_tensors(const OptimizerConfig& config);

}  // namespace plexus::optim
