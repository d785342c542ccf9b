#include "optim_config/config.h"

namespace plexus::optim {

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names{"sgd", "adam", "adamw", "rmsprop", "adagrad"};
  return names;
}

const std::vector<std::string>& schedule_names() {
  static const std::vector<std::string> names{"none",     "step",          "cosine", "exponential",
                                              "onecycle", "warmup_linear", "plateau"};
  return names;
}

const std::vector<std::string>& monitor_names() {
  static const std::vector<std::string> names{"val_loss", "val_accuracy", "train_loss", "train_accuracy"};
  return names;
}

double default_weight_decay(const std::string& optimizer) { return optimizer == "adamw" ? 0.01 : 0; }

int optimizer_state_tensors(const OptimizerConfig& c) {
  if (c.optimizer == "sgd") return c.momentum > 0 ? 1 : 0;             // momentum_buffer
  if (c.optimizer == "adam" || c.optimizer == "adamw") return 2;       // exp_avg, exp_avg_sq
  if (c.optimizer == "rmsprop") return c.momentum > 0 ? 2 : 1;         // square_avg (+ momentum_buffer)
  if (c.optimizer == "adagrad") return 1;                              // sum
  return 0;
}

}  // namespace plexus::optim
