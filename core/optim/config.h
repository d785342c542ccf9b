#pragma once
// Optimizers and learning-rate schedules chosen by name, as plain data: what a project file's
// training settings hold (graph::TrainingSettings extends both) and what plexus-cli's flags
// fill. optim/factory.h builds the optimizer and the scheduler they describe.
#include <cstdint>
#include <string>

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
  std::string schedule = "none";  // one of schedule_names(): none, step, cosine
  int64_t step_size = 1;          // step: epochs between decays
  double gamma = 0.1;             // step: the factor of each decay
  // Per optimizer step, on top of the schedule (optim/step_warmup.h): over the first
  // warmup_steps updates the lr rises linearly from warmup_start_factor × lr to lr; 0 = none.
  int64_t warmup_steps = 0;
  double warmup_start_factor = 0.1;
  bool operator==(const ScheduleConfig&) const = default;
};

}  // namespace plexus::optim
