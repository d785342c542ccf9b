#pragma once
// The optimizers and learning-rate schedules by name (optim/config.h): the one place that maps
// a name to a class, for project files, the settings form, plexus-cli and the memory estimate.
#include <memory>
#include <string>
#include <vector>

#include "optim/config.h"
#include "optim/optimizer.h"
#include "optim/scheduler.h"

namespace plexus::optim {

const std::vector<std::string>& optimizer_names();  // sgd, adam, adamw, rmsprop, adagrad
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
// The weight decay an optimizer uses when none is given: 0.01 for adamw (PyTorch's), else 0.
double default_weight_decay(const std::string& optimizer);
// How many tensors the size of each parameter the optimizer make_optimizer builds keeps
// (momentum buffers, Adam's two moments, ...), for memory estimates; 0 for an unknown name.
int optimizer_state_tensors(const OptimizerConfig& config);

const std::vector<std::string>& schedule_names();  // none, step, cosine
// The scheduler of `config` over `epochs` epochs; null for "none". ValueError for an unknown name.
std::unique_ptr<LRScheduler> make_scheduler(const ScheduleConfig& config, Optimizer& optimizer, int64_t epochs);

}  // namespace plexus::optim
