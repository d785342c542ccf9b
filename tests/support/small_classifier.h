#pragma once
// The trainer suites' small problem: 70 points of 6 features in 3 classes, a 6-8-3 MLP with the
// same initial weights every time, and a loader of shuffled batches of 8 (9 a pass), so runs
// that should match can be compared weight for weight and batch for batch.
#include <memory>
#include <vector>

#include "data/dataloader.h"
#include "nn/layers.h"
#include "optim/factory.h"
#include "plexus.h"

namespace plexus::testing {

inline std::shared_ptr<data::TensorDataset> three_class_points(int64_t n) {
  Generator gen(5);
  const Tensor x = randn({n, 6}, &gen);
  std::vector<float> labels;
  for (int64_t i = 0; i < n; ++i) labels.push_back(float(i % 3));
  return std::make_shared<data::TensorDataset>(x, from_vector(labels, {n}));
}

struct SmallClassifier {
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::Optimizer> opt;
  std::unique_ptr<data::DataLoader> loader;
};

inline SmallClassifier small_classifier(const optim::OptimizerConfig& config, int64_t workers = 1) {
  Generator gen(3);
  SmallClassifier s;
  auto model = std::make_shared<nn::Sequential>();
  model->add(std::make_shared<nn::Linear>(6, 8, true, &gen));
  model->add(std::make_shared<nn::ReLU>());
  model->add(std::make_shared<nn::Linear>(8, 3, true, &gen));
  s.model = model;
  s.opt = optim::make_optimizer(config, s.model->parameters());
  s.loader = std::make_unique<data::DataLoader>(
      three_class_points(70), data::DataLoaderOptions{.batch_size = 8, .shuffle = true, .seed = 11, .workers = workers});
  return s;
}

// Every tensor of the model's state, in order.
inline std::vector<std::vector<float>> weights(const nn::Module& m) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, t] : m.state()) out.push_back(t.to_vector());
  return out;
}

}  // namespace plexus::testing
