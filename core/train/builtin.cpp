#include "train/builtin.h"

#include <algorithm>
#include <cmath>

#include "nn/layers.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::train {
namespace {

// 784 -> hidden[0] -> ... -> 10 with ReLU between.
std::shared_ptr<nn::Module> mlp(std::initializer_list<int64_t> hidden, Generator* gen) {
  auto m = std::make_shared<nn::Sequential>();
  m->add(std::make_shared<nn::Flatten>());
  int64_t in = 784;
  for (int64_t h : hidden) {
    m->add(std::make_shared<nn::Linear>(in, h, true, gen)).add(std::make_shared<nn::ReLU>());
    in = h;
  }
  m->add(std::make_shared<nn::Linear>(in, 10, true, gen));
  return m;
}

std::shared_ptr<nn::Module> lenet(Generator* gen) {
  auto m = std::make_shared<nn::Sequential>();
  m->add(std::make_shared<nn::Conv2d>(1, 20, 5, Conv2dOptions{}, true, gen))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<nn::MaxPool2d>(2))
      .add(std::make_shared<nn::Conv2d>(20, 50, 5, Conv2dOptions{}, true, gen))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<nn::MaxPool2d>(2))
      .add(std::make_shared<nn::Flatten>())
      .add(std::make_shared<nn::Linear>(800, 500, true, gen))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<nn::Linear>(500, 10, true, gen));
  return m;
}

}  // namespace

const std::vector<std::string>& builtin_model_names() {
  static const std::vector<std::string> names{"mlp", "mlp64", "mlp1024", "lenet"};
  return names;
}

std::shared_ptr<nn::Module> make_builtin_model(const std::string& name, Generator* gen) {
  if (name == "mlp") return mlp({128}, gen);
  if (name == "mlp64") return mlp({64}, gen);
  if (name == "mlp1024") return mlp({1024, 1024}, gen);
  if (name == "lenet") return lenet(gen);
  throw ValueError("unknown model '" + name + "' (built-in models: " + join(builtin_model_names()) + ")");
}

MeanStd image_mean_std(const data::Dataset& dataset) {
  double sum = 0, sum_sq = 0;
  int64_t count = 0;
  const int64_t chunk = 1000;
  for (int64_t start = 0; start < dataset.size(); start += chunk) {
    std::vector<int64_t> idx;
    for (int64_t i = start; i < std::min(dataset.size(), start + chunk); ++i) idx.push_back(i);
    for (float v : dataset.get_batch(idx).input.to_vector()) {
      sum += v;
      sum_sq += double(v) * v;
      ++count;
    }
  }
  if (count == 0) throw ValueError("standardising images: the dataset is empty");
  const double mean = sum / double(count);
  const double std = std::sqrt(std::max(sum_sq / double(count) - mean * mean, 1e-12));
  return {float(mean), float(std)};
}

data::TransformPtr standardize_images(const data::Dataset& dataset) {
  const MeanStd m = image_mean_std(dataset);
  return data::normalize({m.mean}, {m.std});
}

}  // namespace plexus::train
