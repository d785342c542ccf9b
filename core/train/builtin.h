#pragma once
// Named building blocks for front ends (plexus-cli today, the GUI's run settings later):
// the built-in example models, optimizers by name, and datasets by kind.
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/transforms.h"
#include "nn/module.h"
#include "optim/optimizer.h"

namespace plexus::train {

// "mlp" (784-128-10), "mlp64" (784-64-10) and "lenet" (conv 5x5x20, pool, conv 5x5x50,
// pool, 500 hidden, 10), all for [N, 1, 28, 28] images.
std::shared_ptr<nn::Module> make_builtin_model(const std::string& name, Generator* gen = nullptr);
const std::vector<std::string>& builtin_model_names();

struct OptimizerConfig {
  std::string kind = "sgd";  // sgd, adam, adamw, rmsprop, adagrad
  double lr = 0.1;
  double momentum = 0;       // sgd, rmsprop
  bool nesterov = false;     // sgd
  double weight_decay = 0;   // adamw uses 0.01 unless set
  bool weight_decay_set = false;
};
std::unique_ptr<optim::Optimizer> make_optimizer(const OptimizerConfig& config, std::vector<Tensor> params);
// How many tensors the size of each parameter the optimizer `make_optimizer` builds keeps
// (momentum buffers, Adam's two moments, ...), for memory estimates; 0 for an unknown kind.
int optimizer_state_tensors(const OptimizerConfig& config);
const std::vector<std::string>& optimizer_names();

// "mnist" and "fashion-mnist" read the split's IDX files from `folder`.
std::shared_ptr<const data::Dataset> open_image_dataset(const std::string& kind, const std::string& folder, bool train);

// A Normalize transform with the mean and std of every input value of `dataset` (one pair for
// all channels), computed in double over the whole set.
data::TransformPtr standardize_images(const data::Dataset& dataset);

}  // namespace plexus::train
