// bench_projector: what the embedding projector costs against a training epoch.
//
//   bench_projector [--examples N] [--mnist DIR] [--threads N] [--save F]
//
// Trains examples/mnist_lenet.plexus for one epoch (its settings: SGD, batch 100, without
// evaluation) and times it; then, on the trained model, collects fc1's outputs over N (default
// 5,000) validation examples (explain::collect_features), maps them with t-SNE (750
// iterations, perplexity 30, Barnes-Hut theta 0.5, after PCA to 50 dimensions) and with PCA, and
// times each. Data: MNIST from DIR (default the source tree's data/mnist) when it is there, else
// generated digits of the same shape (data/synthetic_digits.h). --save F keeps the trained model as
// the weights file F (with its inputs' metadata: usable by plexus-cli and the app).
//
// Output: the times, the projector's total (outputs + t-SNE) and its ratio to the epoch, and PASS
// when the total is under 30 s (the budget: docs/performance.md), else FAIL (exit 1).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "data/synthetic_digits.h"
#include "explain/features.h"
#include "explain/projection.h"
#include "graph/project.h"
#include "session/run.h"
#include "session/trained_model.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "util/threads.h"

using namespace plexus;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
  int64_t examples = 5000;
  std::string mnist = PLEXUS_SOURCE_DIR "/data/mnist";
  int threads = 0;
  std::string save;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--examples" && has_value) examples = std::atoll(argv[++i]);
    else if (a == "--mnist" && has_value) mnist = argv[++i];
    else if (a == "--threads" && has_value) threads = std::atoi(argv[++i]);
    else if (a == "--save" && has_value) save = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_projector [--examples N] [--mnist DIR] [--threads N] [--save F]\n");
      return 2;
    }
  }
  if (threads > 0) set_num_threads(threads);
  graph::Graph project = graph::load_project(PLEXUS_SOURCE_DIR "/examples/mnist_lenet.plexus");
  const fs::path scratch = fs::temp_directory_path() / ("plexus_bench_projector_" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  const bool real = fs::exists(fs::path(mnist) / "train-images-idx3-ubyte");
  if (real) {
    project.dataset.path = mnist;
  } else {
    data::write_synthetic_digits(scratch / "digits", 60000, 10000);
    project.dataset.path = (scratch / "digits").string();
  }
  project.training.epochs = 1;
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("bench_projector: examples/mnist_lenet.plexus on %s, %d threads, OPENBLAS_CORETYPE=%s\n",
              real ? ("MNIST at " + mnist).c_str() : "generated digits", num_threads(), coretype ? coretype : "(unset)");

  session::TrainingRun run = session::make_training_run(project);
  train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, nullptr, run.trainer_options);
  const train::RunResult result = trainer.run();
  if (result.status != train::RunStatus::Completed) {
    std::fprintf(stderr, "bench_projector: training failed: %s\n", result.message.c_str());
    return 1;
  }
  const double epoch = result.history.at(0).train_seconds;
  train::Metadata meta;
  session::write_model_metadata(meta, run.data.info, run.normalization, run.class_names);
  const fs::path weights = save.empty() ? scratch / "lenet.safetensors" : fs::path(save);
  train::save_weights(weights, *run.compiled.model, meta);
  const session::TrainedModel model = session::load_trained_model(project, weights);

  Clock::time_point t0 = Clock::now();
  const explain::FeatureSet f = explain::collect_features(model, {}, {.node = "fc1", .max_examples = examples});
  const double outputs = seconds_since(t0);
  t0 = Clock::now();
  const Tensor map = explain::tsne(f.features);
  const double tsne = seconds_since(t0);
  t0 = Clock::now();
  explain::pca(f.features, 2);
  const double pca = seconds_since(t0);
  fs::remove_all(scratch);

  int64_t wrong = 0;
  for (size_t i = 0; i < f.labels.size(); ++i) wrong += f.labels[i] != f.predicted[i];
  const double total = outputs + tsne;
  std::printf("one training epoch (%lld examples): %.2f s\n", static_cast<long long>(run.data.train->size()), epoch);
  std::printf("fc1 outputs of %lld validation examples [%lld]: %.2f s (%lld misclassified)\n",
              static_cast<long long>(f.features.size(0)), static_cast<long long>(f.features.size(1)), outputs,
              static_cast<long long>(wrong));
  std::printf("t-SNE: %.2f s; PCA: %.3f s\n", tsne, pca);
  std::printf("projector (outputs + t-SNE): %.2f s, %.2f of the epoch's time: %s\n", total, total / epoch,
              total < 30 ? "PASS" : "FAIL (over 30 s)");
  return total < 30 && map.size(0) == f.features.size(0) ? 0 : 1;
}
