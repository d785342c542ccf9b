#pragma once
// A node's outputs over a split of the project's dataset, opened as a run opens it (same seed,
// same split; session::LoadOptions): the embedding projector's points and the top-k gallery of a
// channel. Runs the model in eval mode without gradients, in batches, reporting progress.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "session/trained_model.h"
#include "tensor/tensor.h"

namespace plexus::explain {

enum class Split { Validation, Test, Train };

struct FeatureOptions {
  std::string node{};               // whose output; flattened per example
  Split split = Split::Validation;  // falls back to the test split where there is no validation split
  int64_t max_examples = 5000;      // a seeded sample of the split when it holds more (0: all)
  uint64_t seed = 0;
  int64_t batch_size = 500;
  std::function<void(int64_t done, int64_t total)> progress{};  // examples, from the calling thread
  const std::atomic<bool>* cancelled = nullptr;               // explain::Cancelled
};

struct FeatureSet {
  std::string node;
  Tensor features;                             // [N, D]
  std::vector<int64_t> indices;                // row i's example index in `split`
  std::vector<int64_t> labels;                 // true class per row; -1 where the dataset has none (regression)
  std::vector<int64_t> predicted;              // the model's top class per row; -1 for regression
  std::shared_ptr<const data::Dataset> split;  // to show an example: split->get(indices[i])
  std::vector<std::string> class_names;
};

FeatureSet collect_features(const session::TrainedModel& model, const session::LoadOptions& load,
                            const FeatureOptions& options);

// The k examples of the split whose channel `channel` of `node` responds most: a picture-shaped
// output's channel averaged over its positions, a vector's element, a sequence [T, F]'s feature at
// its largest over the positions. Highest first.
struct ChannelActivation {
  int64_t index = 0;  // in `split`
  float activation = 0;
};
struct TopActivations {
  std::vector<ChannelActivation> top;
  std::shared_ptr<const data::Dataset> split;
};
TopActivations top_activations(const session::TrainedModel& model, const session::LoadOptions& load,
                               const FeatureOptions& options, int64_t channel, int64_t k);

}  // namespace plexus::explain
