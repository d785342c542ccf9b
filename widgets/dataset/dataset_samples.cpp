#include "dataset/dataset_samples.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "data/csv.h"
#include "data/mnist.h"

namespace plexus::widgets {
namespace {

int32_t classOf(float target) {
  return target >= 0.f && std::floor(target) == target && target < 2147483647.f ? int32_t(target) : -1;
}

// Scalar targets [N] as classes.
std::vector<int32_t> fromTargetTensor(const Tensor& targets) {
  const std::vector<float> values = targets.to_vector();
  std::vector<int32_t> labels(values.size());
  std::transform(values.begin(), values.end(), labels.begin(), classOf);
  return labels;
}

// The label tensor of the dataset classes that keep one, undefined otherwise.
Tensor labelTensor(const data::Dataset& dataset) {
  if (const auto* mnist = dynamic_cast<const data::MnistDataset*>(&dataset)) return mnist->labels();
  if (const auto* csv = dynamic_cast<const data::CsvDataset*>(&dataset)) return csv->targets();
  if (const auto* memory = dynamic_cast<const data::TensorDataset*>(&dataset)) return memory->targets();
  return {};
}

// Any dataset, in batches: target_batch reads no inputs where the dataset can avoid it (a
// subset of an image folder need not decode its pictures to count its classes).
std::vector<int32_t> readLabels(const data::Dataset& dataset) {
  constexpr int64_t kBatch = 1024;
  std::vector<int32_t> labels;
  labels.reserve(size_t(dataset.size()));
  for (int64_t start = 0; start < dataset.size(); start += kBatch) {
    std::vector<int64_t> indices(size_t(std::min(kBatch, dataset.size() - start)));
    std::iota(indices.begin(), indices.end(), start);
    const Tensor targets = dataset.target_batch(indices);
    const std::vector<float> values = targets.to_vector();
    const bool scalar = targets.numel() == int64_t(indices.size());
    for (size_t i = 0; i < indices.size(); ++i) labels.push_back(scalar ? classOf(values[i]) : -1);
  }
  return labels;
}

}  // namespace

std::vector<int32_t> datasetLabels(const data::Dataset& dataset) {
  if (const Tensor targets = labelTensor(dataset); targets.defined() && targets.dim() == 1) return fromTargetTensor(targets);
  return readLabels(dataset);
}

std::vector<int64_t> countPerClass(const std::vector<int32_t>& labels, int classes) {
  std::vector<int64_t> counts(size_t(std::max(classes, 0)), 0);
  for (const int32_t label : labels)
    if (label >= 0 && label < classes) ++counts[size_t(label)];
  return counts;
}

std::vector<int64_t> keepClass(const std::vector<int64_t>& samples, const std::vector<int32_t>& labels, int cls) {
  if (cls < 0) return samples;
  std::vector<int64_t> kept;
  std::copy_if(samples.begin(), samples.end(), std::back_inserter(kept),
               [&](int64_t s) { return s < int64_t(labels.size()) && labels[size_t(s)] == cls; });
  return kept;
}

std::vector<int64_t> allSamples(int64_t n) {
  std::vector<int64_t> samples(size_t(std::max<int64_t>(n, 0)));
  std::iota(samples.begin(), samples.end(), 0);
  return samples;
}

std::vector<int64_t> misclassified(const std::vector<int32_t>& labels, const Predictions& predictions) {
  std::vector<int64_t> wrong;
  for (int64_t s = 0; s < int64_t(labels.size()); ++s)
    if (predictions.has(s) && predictions.predicted[size_t(s)] != labels[size_t(s)]) wrong.push_back(s);
  std::stable_sort(wrong.begin(), wrong.end(), [&](int64_t a, int64_t b) {
    return predictions.confidenceOf(a) > predictions.confidenceOf(b);
  });
  return wrong;
}

std::vector<int64_t> samplesWith(const std::vector<int32_t>& labels, const Predictions& predictions, int trueClass,
                                 int predictedClass) {
  std::vector<int64_t> cell;
  for (int64_t s = 0; s < int64_t(labels.size()); ++s)
    if (labels[size_t(s)] == trueClass && predictions.has(s) && predictions.predicted[size_t(s)] == predictedClass)
      cell.push_back(s);
  return cell;
}

}  // namespace plexus::widgets
