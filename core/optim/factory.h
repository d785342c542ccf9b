#pragma once
// The optimizers and learning-rate schedules by name (optim_config/config.h): the one place that
// maps a name to a class, for training runs and plexus-cli.
#include <memory>
#include <string>
#include <vector>

#include "optim_config/config.h"
#include "optim/optimizer.h"
#include "optim/plateau.h"
#include "optim/scheduler.h"

namespace plexus::optim {

// ValueError for an unknown name, or settings the optimizer refuses.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, std::vector<Tensor> params);

// Parameters whose learning rate and weight decay are the config's times a factor (a project's
// per-node lr_mult and weight_decay_mult, graph/node_settings.h).
struct ScaledParams {
  std::vector<Tensor> params;
  double lr_mult = 1, weight_decay_mult = 1;
};
// One parameter group per entry, in order: lr = config.lr × lr_mult, weight_decay =
// config.weight_decay × weight_decay_mult. The optimizer's defaults() are the first group's.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, std::vector<ScaledParams> groups);
// The scheduler of `config` over `epochs` epochs of `steps_per_epoch` optimizer steps (what
// onecycle and warmup_linear count: their schedulers are LRScheduler::per_step); null for "none"
// and "plateau". ValueError for an unknown name.
std::unique_ptr<LRScheduler> make_scheduler(const ScheduleConfig& config, Optimizer& optimizer, int64_t epochs,
                                            int64_t steps_per_epoch);
// The "plateau" schedule's ReduceLROnPlateau, stepped with a metric that is better when higher
// (`maximize`) or lower; null for any other schedule.
std::unique_ptr<ReduceLROnPlateau> make_plateau(const ScheduleConfig& config, Optimizer& optimizer, bool maximize);

}  // namespace plexus::optim
