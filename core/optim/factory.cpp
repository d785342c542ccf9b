#include "optim/factory.h"

#include "optim/adagrad.h"
#include "optim/adam.h"
#include "optim/rmsprop.h"
#include "optim/sgd.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::optim {
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& c, std::vector<Tensor> params) {
  if (c.optimizer == "sgd")
    return std::make_unique<SGD>(
        std::move(params), SGDOptions{.lr = c.lr, .momentum = c.momentum, .weight_decay = c.weight_decay, .nesterov = c.nesterov});
  if (c.optimizer == "adam") return std::make_unique<Adam>(std::move(params), AdamOptions{.lr = c.lr, .weight_decay = c.weight_decay});
  if (c.optimizer == "adamw")
    return std::make_unique<AdamW>(std::move(params), AdamOptions{.lr = c.lr, .weight_decay = c.weight_decay});
  if (c.optimizer == "rmsprop")
    return std::make_unique<RMSprop>(std::move(params),
                                     RMSpropOptions{.lr = c.lr, .weight_decay = c.weight_decay, .momentum = c.momentum});
  if (c.optimizer == "adagrad")
    return std::make_unique<Adagrad>(std::move(params), AdagradOptions{.lr = c.lr, .weight_decay = c.weight_decay});
  throw ValueError("unknown optimizer '" + c.optimizer + "' (known: " + join(optimizer_names()) + ")");
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& c, std::vector<ScaledParams> groups) {
  if (groups.empty()) return make_optimizer(c, std::vector<Tensor>{});  // its error: no parameters
  const auto scaled = [&](const ScaledParams& g) {
    OptimizerConfig s = c;
    s.lr *= g.lr_mult;
    s.weight_decay *= g.weight_decay_mult;
    return s;
  };
  std::unique_ptr<Optimizer> opt = make_optimizer(scaled(groups[0]), std::move(groups[0].params));
  for (size_t i = 1; i < groups.size(); ++i) {
    const OptimizerConfig s = scaled(groups[i]);
    opt->add_param_group(std::move(groups[i].params), {{"lr", s.lr}, {"weight_decay", s.weight_decay}});
  }
  return opt;
}

std::unique_ptr<LRScheduler> make_scheduler(const ScheduleConfig& c, Optimizer& optimizer, int64_t epochs,
                                            int64_t steps_per_epoch) {
  if (c.schedule == "none" || c.schedule == "plateau") return nullptr;
  if (c.schedule == "step") return std::make_unique<StepLR>(optimizer, c.step_size, c.gamma);
  if (c.schedule == "cosine") return std::make_unique<CosineAnnealingLR>(optimizer, epochs);
  if (c.schedule == "exponential") return std::make_unique<ExponentialLR>(optimizer, c.gamma);
  const int64_t steps = epochs * steps_per_epoch;
  if (c.schedule == "onecycle")
    return std::make_unique<OneCycleLR>(optimizer, steps, c.pct_start, c.div_factor, c.final_div_factor);
  if (c.schedule == "warmup_linear") {
    // torch's SequentialLR([LinearLR(start_factor, 1, W), LinearLR(1, end_factor, steps − W)], [W]).
    const int64_t warm = c.warmup_steps;
    if (warm >= steps)
      throw ValueError("warmup_linear: warmup_steps (" + std::to_string(warm) + ") must be fewer than the run's " +
                       std::to_string(steps) + " optimizer steps");
    std::unique_ptr<LRScheduler> s;
    if (warm == 0) {
      s = std::make_unique<LinearLR>(optimizer, 1.0, c.end_factor, steps);
    } else {
      auto rise = std::make_shared<LinearLR>(optimizer, c.warmup_start_factor, 1.0, warm);
      auto decay = std::make_shared<LinearLR>(optimizer, 1.0, c.end_factor, steps - warm);
      s = std::make_unique<SequentialLR>(optimizer, std::vector<std::shared_ptr<LRScheduler>>{rise, decay},
                                         std::vector<int64_t>{warm});
    }
    s->set_per_step(true);
    return s;
  }
  throw ValueError("unknown schedule '" + c.schedule + "' (known: " + join(schedule_names()) + ")");
}

std::unique_ptr<ReduceLROnPlateau> make_plateau(const ScheduleConfig& c, Optimizer& optimizer, bool maximize) {
  if (c.schedule != "plateau") return nullptr;
  return std::make_unique<ReduceLROnPlateau>(
      optimizer, PlateauOptions{.maximize = maximize,
                                .factor = c.plateau_factor,
                                .patience = c.plateau_patience,
                                .threshold = c.plateau_threshold,
                                .relative = c.plateau_threshold_mode == "rel",
                                .cooldown = c.plateau_cooldown,
                                .min_lr = c.plateau_min_lr});
}

}  // namespace plexus::optim
