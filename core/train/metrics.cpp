#include "train/metrics.h"

#include <cmath>
#include <limits>

#include "ops/ops.h"
#include "util/error.h"

namespace plexus::train {

ConfusionMatrix::ConfusionMatrix(int64_t classes) : k_(classes), counts_(size_t(classes * classes), 0) {
  if (classes < 0) throw ValueError("ConfusionMatrix: negative class count");
}

ConfusionMatrix::ConfusionMatrix(int64_t classes, std::vector<int64_t> counts) : k_(classes), counts_(std::move(counts)) {
  if (classes < 0 || counts_.size() != size_t(classes * classes))
    throw ValueError("ConfusionMatrix: " + std::to_string(counts_.size()) + " counts for " + std::to_string(classes) +
                     " classes");
}

void ConfusionMatrix::add(int64_t truth, int64_t predicted) {
  if (truth < 0 || truth >= k_ || predicted < 0 || predicted >= k_)
    throw IndexError("ConfusionMatrix: class " + std::to_string(truth) + " / prediction " + std::to_string(predicted) +
                     " outside [0, " + std::to_string(k_) + ")");
  ++counts_[size_t(truth * k_ + predicted)];
}

bool class_targets_match(const Tensor& logits, const Tensor& targets) {
  return logits.dim() >= 2 && targets.shape() == Shape(logits.shape().begin(), logits.shape().end() - 1);
}

void ConfusionMatrix::add(const Tensor& logits, const Tensor& targets) {
  if (!class_targets_match(logits, targets) || logits.shape().back() != k_)
    throw ShapeError("ConfusionMatrix: expected logits [N, ..., " + std::to_string(k_) +
                     "] and targets of their leading shape [N, ...], got " + to_string(logits.shape()) + " and " +
                     to_string(targets.shape()));
  const std::vector<float> pred = argmax(logits, -1).to_vector(), truth = targets.to_vector();
  for (size_t i = 0; i < pred.size(); ++i) add(int64_t(truth[i]), int64_t(pred[i]));
}

int64_t ConfusionMatrix::total() const {
  int64_t t = 0;
  for (int64_t c : counts_) t += c;
  return t;
}

double ConfusionMatrix::accuracy() const {
  int64_t right = 0;
  for (int64_t i = 0; i < k_; ++i) right += count(i, i);
  const int64_t t = total();
  return t ? double(right) / double(t) : 0.0;
}

std::vector<double> ConfusionMatrix::per_class_accuracy() const {
  std::vector<double> out(static_cast<size_t>(k_));
  for (int64_t i = 0; i < k_; ++i) {
    int64_t row = 0;
    for (int64_t j = 0; j < k_; ++j) row += count(i, j);
    out[size_t(i)] = row ? double(count(i, i)) / double(row) : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

int64_t top_k_correct(const Tensor& logits, const Tensor& targets, int64_t k) {
  if (!class_targets_match(logits, targets))
    throw ShapeError("top_k_correct: expected logits [N, ..., C] and targets of their leading shape [N, ...], got " +
                     to_string(logits.shape()) + " and " + to_string(targets.shape()));
  const int64_t n = targets.numel(), c = logits.shape().back();
  const Tensor l = logits.contiguous();
  const std::vector<float> t = targets.to_vector();
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = l.data() + i * c;
    const int64_t target = int64_t(t[size_t(i)]);
    if (target < 0 || target >= c) throw IndexError("top_k_correct: target " + std::to_string(target) + " out of range");
    // The target is in the top k when fewer than k classes score strictly higher.
    int64_t higher = 0;
    for (int64_t j = 0; j < c; ++j) higher += row[j] > row[target];
    correct += higher < k;
  }
  return correct;
}

}  // namespace plexus::train
