#pragma once
// Named building blocks for the C++ API's examples, tests and benchmarks: small MNIST models
// built in code, and the usual standardisation of images. (plexus-cli's built-in models are
// project files: app/cli/builtin_projects.h.)
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/transforms.h"
#include "nn/module.h"

namespace plexus::train {

// "mlp" (784-128-10), "mlp64" (784-64-10) and "lenet" (conv 5x5x20, pool, conv 5x5x50,
// pool, 500 hidden, 10), all for [N, 1, 28, 28] images.
std::shared_ptr<nn::Module> make_builtin_model(const std::string& name, Generator* gen = nullptr);
const std::vector<std::string>& builtin_model_names();

// The mean and std of every input value of `dataset` (one pair for all channels), computed in
// double over the whole set.
struct MeanStd {
  float mean = 0, std = 1;
};
MeanStd image_mean_std(const data::Dataset& dataset);
// A Normalize transform with image_mean_std(dataset).
data::TransformPtr standardize_images(const data::Dataset& dataset);

}  // namespace plexus::train
