#include "train/builtin.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "data/mnist.h"
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

// The MNIST-style images behind `dataset` (itself, or a subset of one, at any depth), with the
// rows of them it holds in `rows`; null for any other dataset.
const data::MnistDataset* mnist_rows(const data::Dataset& dataset, std::vector<int64_t>& rows) {
  rows.resize(size_t(dataset.size()));
  for (int64_t i = 0; i < dataset.size(); ++i) rows[size_t(i)] = i;
  const data::Dataset* d = &dataset;
  while (const auto* subset = dynamic_cast<const data::Subset*>(d)) {
    for (int64_t& r : rows) r = subset->indices()[size_t(r)];
    d = &subset->parent();
  }
  return dynamic_cast<const data::MnistDataset*>(d);
}

MeanStd mean_std(double sum, double sum_sq, int64_t count) {
  if (count == 0) throw ValueError("standardising images: the dataset is empty");
  const double mean = sum / double(count);
  const double std = std::sqrt(std::max(sum_sq / double(count) - mean * mean, 1e-12));
  return {float(mean), float(std)};
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
  std::vector<int64_t> rows;
  if (const data::MnistDataset* mnist = mnist_rows(dataset, rows)) {
    // From how often each byte value occurs, not from a float copy of every image: the same
    // pixel values summed in another order (the float results agree; checked in test_data).
    const std::array<int64_t, 256> counts = mnist->pixel_counts(rows);
    double sum = 0, sum_sq = 0;
    int64_t count = 0;
    for (size_t v = 0; v < counts.size(); ++v) {
      const double x = float(v) * data::MnistDataset::kPixelScale;
      sum += double(counts[v]) * x;
      sum_sq += double(counts[v]) * (x * x);
      count += counts[v];
    }
    return mean_std(sum, sum_sq, count);
  }
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
  return mean_std(sum, sum_sq, count);
}

data::TransformPtr standardize_images(const data::Dataset& dataset) {
  const MeanStd m = image_mean_std(dataset);
  return data::normalize({m.mean}, {m.std});
}

}  // namespace plexus::train
