#pragma once
// Classification metrics accumulated over batches: loss, accuracy, top-k, per-class
// accuracy and the confusion matrix (rows = true class, columns = predicted class). Sequence
// outputs count every position: logits [N, ..., C] (classes last) against targets [N, ...].
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace plexus::train {

class ConfusionMatrix {
 public:
  explicit ConfusionMatrix(int64_t classes = 0);
  ConfusionMatrix(int64_t classes, std::vector<int64_t> counts);  // row-major classes×classes
  // logits [N, C] or [N, ..., C] (argmax over the last dim is the prediction) and targets
  // [N] or [N, ...] of class indices: one count per position.
  void add(const Tensor& logits, const Tensor& targets);
  void add(int64_t truth, int64_t predicted);
  int64_t classes() const { return k_; }
  int64_t count(int64_t truth, int64_t predicted) const { return counts_[size_t(truth * k_ + predicted)]; }
  int64_t total() const;
  double accuracy() const;
  std::vector<double> per_class_accuracy() const;  // recall of each class; NaN for absent classes
  const std::vector<int64_t>& counts() const { return counts_; }  // row-major k×k

 private:
  int64_t k_;
  std::vector<int64_t> counts_;
};

// How many positions have their target among the k largest logits (shapes as add's).
int64_t top_k_correct(const Tensor& logits, const Tensor& targets, int64_t k);

// True when logits [N, ..., C] pair with targets [N, ...] of its leading shape: one class
// index per position, as cross_entropy takes them.
bool class_targets_match(const Tensor& logits, const Tensor& targets);

// Running mean of per-batch values weighted by batch size.
class Average {
 public:
  void add(double value, int64_t n) {
    sum_ += value * double(n);
    n_ += n;
  }
  double value() const { return n_ ? sum_ / double(n_) : 0.0; }
  int64_t count() const { return n_; }
  // The sum and the count, and an average from them: a checkpoint keeps one exactly.
  double sum() const { return sum_; }
  static Average from(double sum, int64_t count) {
    Average a;
    a.sum_ = sum;
    a.n_ = count;
    return a;
  }

 private:
  double sum_ = 0;
  int64_t n_ = 0;
};

}  // namespace plexus::train
