#include "explain/features.h"

#include <algorithm>
#include <cstring>
#include <queue>
#include <random>

#include "autograd/grad_mode.h"
#include "explain/attribution.h"
#include "graph/dataset_info.h"
#include "util/error.h"

namespace plexus::explain {

namespace {

const char* feature_split_word(Split s) {
  switch (s) {
    case Split::Validation:
      return "validation";
    case Split::Test:
      return "test";
    case Split::Train:
      return "training";
  }
  return "?";
}

std::shared_ptr<const data::Dataset> open_feature_split(const session::TrainedModel& model, const session::LoadOptions& load,
                                                Split split) {
  const graph::Graph& g = model.project;
  const graph::DatasetBinding dataset = graph::resolve_dataset(g.dataset, load.project_dir);
  graph::DatasetSplits splits =
      graph::open_dataset(dataset, g.training.seed, g.training.validation_fraction, model.preparation);
  std::shared_ptr<const data::Dataset> chosen = split == Split::Train   ? splits.train
                                                : split == Split::Test ? splits.test
                                                                       : splits.validation;
  // A project without a validation split (validation_fraction 0) still has its test examples to show.
  if ((!chosen || chosen->size() == 0) && split == Split::Validation) chosen = splits.test;
  if (!chosen || chosen->size() == 0)
    throw ValueError("the '" + dataset.kind + "' dataset has no " + feature_split_word(split) + " examples");
  return chosen;
}

// Which rows of a split of n to use: all, or a seeded sample of `max` of them in split order
// (in order, so an image folder reads its files front to back).
std::vector<int64_t> sample_feature_rows(int64_t n, int64_t max, uint64_t seed) {
  std::vector<int64_t> rows(size_t(n), 0);
  for (int64_t i = 0; i < n; ++i) rows[size_t(i)] = i;
  if (max <= 0 || max >= n) return rows;
  std::mt19937_64 gen(seed);
  // A partial Fisher-Yates shuffle with our own draw: std::uniform_int_distribution differs between
  // standard libraries, and the same seed must pick the same examples everywhere.
  for (int64_t i = 0; i < max; ++i) std::swap(rows[size_t(i)], rows[size_t(i + int64_t(gen() % uint64_t(n - i)))]);
  rows.resize(size_t(max));
  std::sort(rows.begin(), rows.end());
  return rows;
}

// One batch of the split as the model saw it: `node`'s output [B, ...] and the model's prediction.
struct FeatureBatch {
  const std::vector<int64_t>& rows;
  const Tensor& targets;
  const Tensor& node_output;
  const Tensor& prediction;
};

// Runs the model over `rows` of `split` in batches, handing each batch to `consume`; reports
// progress and stops with Cancelled between batches.
template <class Consume>
void run_feature_batches(const session::TrainedModel& model, const data::Dataset& split, const std::vector<int64_t>& rows,
                 const FeatureOptions& options, Consume&& consume) {
  if (options.node.empty()) throw ValueError("no node given whose outputs to collect");
  if (!model.project.find(options.node))
    throw ValueError("the model has no node '" + options.node + "' whose outputs to collect");
  if (options.batch_size < 1)
    throw ValueError("the batch size must be at least 1, got " + std::to_string(options.batch_size));
  layers::GraphModel& net = *model.compiled.model;
  // The observer is this call's alone while it runs: the model belongs to the thread calling us.
  struct ObserverReset {
    layers::GraphModel& net;
    ~ObserverReset() { net.set_observer(nullptr); }
  } reset{net};
  Tensor seen;
  net.set_observer([&seen, &options](const std::string& node, const Tensor& output) {
    if (node == options.node) seen = output;
  });
  NoGradGuard no_grad;
  const int64_t total = int64_t(rows.size());
  for (int64_t begin = 0; begin < total; begin += options.batch_size) {
    if (options.cancelled && options.cancelled->load()) throw Cancelled("collecting node outputs was cancelled");
    const int64_t end = std::min(total, begin + options.batch_size);
    const std::vector<int64_t> batch_rows(rows.begin() + begin, rows.begin() + end);
    const data::Example ex = split.get_batch(batch_rows);
    seen = Tensor();
    const Tensor prediction = model.forward(ex.input);
    if (!seen.defined())
      throw ValueError("node '" + options.node + "' computes nothing on the way to the model's prediction");
    const Tensor output = seen.contiguous(), scores = prediction.contiguous();
    consume(FeatureBatch{batch_rows, ex.target, output, scores});
    if (options.progress) options.progress(end, total);
  }
}

// Each example's top class: the argmax of its class scores [B, C]; -1 for other predictions.
void append_top_classes(const Tensor& prediction, bool classification, std::vector<int64_t>& out) {
  const int64_t b = prediction.size(0);
  if (!classification || prediction.dim() != 2) {
    out.insert(out.end(), size_t(b), -1);
    return;
  }
  const int64_t c = prediction.size(1);
  const float* p = prediction.data();
  for (int64_t i = 0; i < b; ++i) out.push_back(int64_t(std::max_element(p + i * c, p + (i + 1) * c) - (p + i * c)));
}

// True classes where each example's target is one class; -1 otherwise (regression, a text's targets per position).
void append_true_classes(const Tensor& targets, bool classification, std::vector<int64_t>& out) {
  const int64_t b = targets.size(0);
  if (!classification || targets.numel() != b) {
    out.insert(out.end(), size_t(b), -1);
    return;
  }
  for (float v : targets.to_vector()) out.push_back(int64_t(v));
}

}  // namespace

FeatureSet collect_features(const session::TrainedModel& model, const session::LoadOptions& load,
                            const FeatureOptions& options) {
  FeatureSet out;
  out.node = options.node;
  out.split = open_feature_split(model, load, options.split);
  out.class_names = model.class_names;
  out.indices = sample_feature_rows(out.split->size(), options.max_examples, options.seed);
  std::vector<float> values;
  int64_t dims = -1;
  run_feature_batches(model, *out.split, out.indices, options, [&](const FeatureBatch& b) {
    const int64_t n = b.node_output.size(0);
    const int64_t d = b.node_output.numel() / std::max<int64_t>(n, 1);
    if (dims < 0) values.reserve(size_t(d) * out.indices.size());
    dims = d;
    values.insert(values.end(), b.node_output.data(), b.node_output.data() + b.node_output.numel());
    append_true_classes(b.targets, model.classification(), out.labels);
    append_top_classes(b.prediction, model.classification(), out.predicted);
  });
  out.features = from_vector(values, {int64_t(out.indices.size()), std::max<int64_t>(dims, 0)});
  return out;
}

TopActivations top_activations(const session::TrainedModel& model, const session::LoadOptions& load,
                               const FeatureOptions& options, int64_t channel, int64_t k) {
  if (k < 1) throw ValueError("the number of top examples must be at least 1, got " + std::to_string(k));
  TopActivations out;
  out.split = open_feature_split(model, load, options.split);
  const std::vector<int64_t> rows = sample_feature_rows(out.split->size(), options.max_examples, options.seed);
  // A min-heap of the k best so far: its top is the one to drop next.
  auto worse = [](const ChannelActivation& a, const ChannelActivation& b) {
    return a.activation > b.activation || (a.activation == b.activation && a.index < b.index);
  };
  std::priority_queue<ChannelActivation, std::vector<ChannelActivation>, decltype(worse)> best(worse);
  run_feature_batches(model, *out.split, rows, options, [&](const FeatureBatch& b) {
    const Shape& s = b.node_output.shape();
    // Per example: [K, h, w] averages channel `channel` over its positions; [D] reads element
    // `channel`; [T, F] takes feature `channel` at its largest over the positions.
    const int64_t channels = s.size() == 2 ? s[1] : s.size() == 3 ? s[2] : s.size() == 4 ? s[1] : 0;
    if (channels == 0)
      throw ValueError("node '" + options.node + "' has output " + plexus::to_string(s) +
                       " per batch: no channels to rank examples by");
    if (channel < 0 || channel >= channels)
      throw ValueError("node '" + options.node + "' has " + std::to_string(channels) + " channels, asked for channel " +
                       std::to_string(channel));
    const int64_t per = b.node_output.numel() / s[0];
    for (int64_t i = 0; i < s[0]; ++i) {
      const float* x = b.node_output.data() + i * per;
      float a = 0;
      if (s.size() == 2) {
        a = x[channel];
      } else if (s.size() == 4) {
        const int64_t hw = s[2] * s[3];
        double sum = 0;
        for (int64_t j = 0; j < hw; ++j) sum += x[channel * hw + j];
        a = float(sum / double(hw));
      } else {
        a = x[channel];
        for (int64_t t = 1; t < s[1]; ++t) a = std::max(a, x[t * s[2] + channel]);
      }
      best.push({b.rows[size_t(i)], a});
      if (int64_t(best.size()) > k) best.pop();
    }
  });
  while (!best.empty()) {
    out.top.push_back(best.top());
    best.pop();
  }
  std::reverse(out.top.begin(), out.top.end());
  return out;
}

}  // namespace plexus::explain
