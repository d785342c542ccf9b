// A node's outputs over a split (explain/features.h): the rows the model computes for the sampled
// examples, their labels and predictions, and the examples a channel responds to most.
#include "support/check.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <numeric>

#include "data/synthetic_digits.h"
#include "explain/attribution.h"
#include "explain/features.h"
#include "graph/project.h"
#include "session/run.h"
#include "session/trained_model.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "train/checkpoint.h"
#include "util/error.h"

using namespace plexus;
using plexus::testing::contains;
using plexus::testing::message_of;
namespace fs = std::filesystem;

namespace {

// LeNet (examples/mnist_lenet.plexus) with its initial weights on 500 generated digits, 100 of them
// validating and 100 more testing; made once.
struct Fixture {
  testing::TempDir tmp;
  graph::Graph project;
  session::TrainedModel model;
  Fixture() {
    data::write_synthetic_digits(tmp.file("digits"), 500, 100);
    project = graph::load_project(fs::path(PLEXUS_SOURCE_DIR) / "examples" / "mnist_lenet.plexus");
    project.dataset.path = tmp.file("digits").string();
    project.training.validation_fraction = 0.2;
    session::TrainingRun run = session::make_training_run(project);
    train::Metadata meta;
    session::write_model_metadata(meta, run.data.info, run.normalization, run.class_names);
    train::save_weights(tmp.file("w.safetensors"), *run.compiled.model, meta);
    model = session::load_trained_model(project, tmp.file("w.safetensors"));
  }
};
Fixture& fixture() {
  static Fixture f;
  return f;
}

}  // namespace

TEST(featuresAreTheNodesOutputsForASeededSample) {
  Fixture& f = fixture();
  explain::FeatureOptions o{.node = "fc2", .max_examples = 60, .seed = 4, .batch_size = 25};
  int64_t last_done = 0, reports = 0;
  o.progress = [&](int64_t done, int64_t total) {
    COMPARE(total, int64_t(60));
    VERIFY(done > last_done);
    last_done = done;
    ++reports;
  };
  const explain::FeatureSet s = explain::collect_features(f.model, {}, o);
  COMPARE(s.split->size(), int64_t(100));  // the validation split
  COMPARE(s.features.shape(), Shape({60, 10}));
  COMPARE(s.indices.size(), size_t(60));
  VERIFY(std::is_sorted(s.indices.begin(), s.indices.end()));
  VERIFY(std::adjacent_find(s.indices.begin(), s.indices.end()) == s.indices.end());
  COMPARE(reports, int64_t(3));  // batches of 25, 25 and 10
  COMPARE(last_done, int64_t(60));
  COMPARE(s.class_names.size(), size_t(10));

  // fc2 is what the model predicts from: its rows are forward()'s, its argmax the predictions.
  const data::Example ex = s.split->get_batch(s.indices);
  const std::vector<float> scores = f.model.forward(ex.input).to_vector();
  const std::vector<float> rows = s.features.to_vector();
  for (size_t i = 0; i < rows.size(); ++i) VERIFY(std::abs(rows[i] - scores[i]) < 1e-5f);
  const std::vector<float> targets = ex.target.to_vector();
  for (size_t i = 0; i < 60; ++i) {
    COMPARE(s.labels[i], int64_t(targets[i]));
    const auto row = scores.begin() + int64_t(i) * 10;
    COMPARE(s.predicted[i], int64_t(std::max_element(row, row + 10) - row));
  }

  // The same seed samples the same examples, another seed others; 0 takes them all.
  o.progress = nullptr;
  COMPARE(explain::collect_features(f.model, {}, o).indices, s.indices);
  o.seed = 5;
  VERIFY(explain::collect_features(f.model, {}, o).indices != s.indices);
  o.max_examples = 0;
  COMPARE(explain::collect_features(f.model, {}, o).features.shape(), Shape({100, 10}));
}

TEST(featuresOfAPictureNodeAreFlattenedAndOtherSplitsOpen) {
  Fixture& f = fixture();
  const explain::FeatureSet s = explain::collect_features(
      f.model, {}, {.node = "pool1", .split = explain::Split::Test, .max_examples = 7, .batch_size = 3});
  COMPARE(s.features.shape(), Shape({7, 20 * 12 * 12}));
  COMPARE(s.split->size(), int64_t(100));
  // After the call the model runs unobserved again (its fused Conv2d-ReLU-MaxPool2d chains).
  const data::Example ex = s.split->get_batch({0});
  VERIFY(f.model.forward(ex.input).defined());
}

TEST(topActivationsRankTheSplitByTheChannel) {
  Fixture& f = fixture();
  const explain::FeatureOptions o{.node = "pool2", .max_examples = 0, .batch_size = 40};
  const explain::FeatureSet s = explain::collect_features(f.model, {}, o);
  const int64_t n = s.features.size(0), hw = 4 * 4, channel = 3;
  const std::vector<float> x = s.features.to_vector();
  std::vector<float> mean(size_t(n), 0.f);
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < hw; ++j) sum += x[size_t(i * 50 * hw + channel * hw + j)];
    mean[size_t(i)] = float(sum / hw);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return mean[size_t(a)] > mean[size_t(b)]; });

  const explain::TopActivations top = explain::top_activations(f.model, {}, o, channel, 5);
  COMPARE(top.top.size(), size_t(5));
  for (size_t i = 0; i < 5; ++i) {
    COMPARE(top.top[i].index, s.indices[size_t(order[i])]);
    VERIFY(std::abs(top.top[i].activation - mean[size_t(order[i])]) < 1e-5f);
  }
  // A vector node's channel is its element.
  const explain::TopActivations fc = explain::top_activations(f.model, {}, {.node = "fc1", .max_examples = 0}, 0, 3);
  COMPARE(fc.top.size(), size_t(3));
  VERIFY(fc.top[0].activation >= fc.top[1].activation && fc.top[1].activation >= fc.top[2].activation);
}

TEST(badRequestsAreRefusedNamingWhatIsWrong) {
  Fixture& f = fixture();
  const std::string unknown =
      message_of<ValueError>([&] { explain::collect_features(f.model, {}, {.node = "fc9"}); });
  VERIFY2(contains(unknown, "no node 'fc9'"), unknown.c_str());
  const std::string channel =
      message_of<ValueError>([&] { explain::top_activations(f.model, {}, {.node = "conv1"}, 20, 3); });
  VERIFY2(contains(channel, "20 channels") && contains(channel, "channel 20"), channel.c_str());
  std::atomic<bool> cancelled{true};
  const std::string stopped = message_of<explain::Cancelled>(
      [&] { explain::collect_features(f.model, {}, {.node = "fc1", .cancelled = &cancelled}); });
  VERIFY2(contains(stopped, "cancelled"), stopped.c_str());
}

TEST(aClonedModelHasItsOwnWeightsAndComputesTheSame) {
  Fixture& f = fixture();
  const session::TrainedModel copy = session::clone_trained_model(f.model);
  VERIFY(copy.compiled.model.get() != f.model.compiled.model.get());
  const data::Example ex = explain::collect_features(f.model, {}, {.node = "fc2", .max_examples = 4}).split->get_batch(
      {0, 1, 2, 3});
  COMPARE(copy.forward(ex.input).to_vector(), f.model.forward(ex.input).to_vector());
  COMPARE(copy.class_names, f.model.class_names);
}
