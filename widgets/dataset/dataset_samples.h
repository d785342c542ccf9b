#pragma once
// Which samples of a split the dataset views show: the class label of every example (read fast
// where the dataset class allows it), and the sample lists behind the preview's modes and the
// confusion matrix's cells. Plain functions over plain vectors, so they are cheap to test.
#include <cstdint>
#include <vector>

#include "data/dataset.h"

namespace plexus::widgets {

// A model's verdict on the samples of the shown split, by sample index. Either vector may be
// shorter than the split (a partial evaluation): samples past its end have no prediction.
struct Predictions {
  std::vector<int32_t> predicted;  // class index
  std::vector<float> confidence;   // softmax probability of the predicted class

  bool has(int64_t sample) const { return sample >= 0 && sample < int64_t(predicted.size()); }
  float confidenceOf(int64_t sample) const {
    return sample >= 0 && sample < int64_t(confidence.size()) ? confidence[size_t(sample)] : 0.f;
  }
};

// The class of every example, -1 where the target is not one whole number >= 0. MNIST, CSV and
// in-memory datasets hand over their label tensor; any other dataset is read in batches.
std::vector<int32_t> datasetLabels(const data::Dataset& dataset);

// How many examples each class 0..classes-1 has (labels outside that range are not counted).
std::vector<int64_t> countPerClass(const std::vector<int32_t>& labels, int classes);

// The samples of `samples` whose label is `cls`, in order; every one when cls < 0.
std::vector<int64_t> keepClass(const std::vector<int64_t>& samples, const std::vector<int32_t>& labels, int cls);

// 0, 1, ..., n-1.
std::vector<int64_t> allSamples(int64_t n);

// The samples predicted wrongly, the most confident mistakes first (ties by index).
std::vector<int64_t> misclassified(const std::vector<int32_t>& labels, const Predictions& predictions);

// The samples of class `trueClass` predicted as `predictedClass` (one confusion-matrix cell).
std::vector<int64_t> samplesWith(const std::vector<int32_t>& labels, const Predictions& predictions, int trueClass,
                                 int predictedClass);

}  // namespace plexus::widgets
