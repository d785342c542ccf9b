// bench_node_stats: what the per-node statistics (train/stats_sampler.h) cost a training step.
//
//   bench_node_stats [--steps S] [--repeat R] [--every K] [--mnist DIR] [--threads N]
//
// Trains examples/mnist_lenet.plexus (its settings: SGD, batch 100) for S steps (default 200)
// with stats_every 0 and with K (default: the setting's default), R times each (default 5),
// alternating which goes first, each run a fresh model from the same seed, without evaluation.
// Data: MNIST from DIR (default the source tree's data/mnist) when it is there, else generated
// digits of the same shape (data/synthetic_digits.h). A step's time is the epoch's training time
// over S (EpochEnd::train_seconds: the loop, waiting for data included).
//
// Output: each run's ms per step, then the medians, their ratio, and PASS when the ratio is at
// most 1.05 (the budget: docs/performance.md), else FAIL (exit 1). Also, from the runs with
// statistics alone, every step timed from one BatchEnd to the next: the medians of the sampled
// steps and of the others, and what that difference, spread over stats_every steps, makes of a
// step: the same ratio measured step beside step, which a busy machine disturbs less.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "session/run.h"
#include "train/trainer.h"
#include "util/threads.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

struct Options {
  int64_t steps = 200;
  int repeat = 5;
  int64_t every = graph::TrainingSettings{}.stats_every;
  std::string mnist = PLEXUS_SOURCE_DIR "/data/mnist";
  int threads = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--steps" && has_value) o.steps = std::atoll(argv[++i]);
    else if (a == "--repeat" && has_value) o.repeat = std::atoi(argv[++i]);
    else if (a == "--every" && has_value) o.every = std::atoll(argv[++i]);
    else if (a == "--mnist" && has_value) o.mnist = argv[++i];
    else if (a == "--threads" && has_value) o.threads = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_node_stats [--steps S] [--repeat R] [--every K] [--mnist DIR] [--threads N]\n");
      std::exit(2);
    }
  }
  if (o.steps < 1 || o.repeat < 1 || o.every < 1) {
    std::fprintf(stderr, "bench_node_stats: --steps, --repeat and --every must be at least 1\n");
    std::exit(2);
  }
  return o;
}

using Clock = std::chrono::steady_clock;

struct Timing {
  double ms_per_step = 0;
  // Each step alone, from one BatchEnd to the next (the first step has none before it).
  std::vector<double> sampled_ms, plain_ms;
  int samples = 0;
};

Timing train_once(const graph::Graph& project, int64_t steps, int64_t every) {
  graph::Graph g = project;
  g.training.stats_every = every;
  g.training.epochs = 1;
  session::TrainingRun run = session::make_training_run(g, {.project_dir = {}, .train_subset = steps * g.training.batch_size});
  train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, nullptr, run.trainer_options);
  Timing t;
  Clock::time_point last;
  trainer.set_callback([&](const train::Event& e) {
    if (const auto* b = std::get_if<train::BatchEnd>(&e)) {
      const Clock::time_point now = Clock::now();
      if (b->batch > 1) t.plain_ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
      last = now;
    } else if (std::holds_alternative<train::NodeStats>(e)) {
      ++t.samples;  // right after its step's BatchEnd: that step was sampled
      if (!t.plain_ms.empty() && t.samples > 1) {
        t.sampled_ms.push_back(t.plain_ms.back());
        t.plain_ms.pop_back();
      }
    }
  });
  const train::RunResult result = trainer.run();
  if (result.status != train::RunStatus::Completed) {
    std::fprintf(stderr, "bench_node_stats: training failed: %s\n", result.message.c_str());
    std::exit(1);
  }
  t.ms_per_step = 1000 * result.history.at(0).train_seconds / double(steps);
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.threads > 0) set_num_threads(o.threads);
  graph::Graph project = graph::load_project(PLEXUS_SOURCE_DIR "/examples/mnist_lenet.plexus");
  fs::path generated;
  if (fs::exists(fs::path(o.mnist) / "train-images-idx3-ubyte")) {
    project.dataset.path = o.mnist;
  } else {
    generated = fs::temp_directory_path() / ("plexus_bench_node_stats_" + std::to_string(::getpid()));
    data::write_synthetic_digits(generated, 30000, 1000);
    project.dataset.path = generated.string();
  }
  std::printf("bench_node_stats: examples/mnist_lenet.plexus, %lld steps of batch %lld, %s, %d threads; "
              "stats_every 0 vs %lld, %d runs each\n",
              (long long)o.steps, (long long)project.training.batch_size,
              generated.empty() ? ("MNIST at " + o.mnist).c_str() : "generated digits", num_threads(),
              (long long)o.every, o.repeat);

  train_once(project, std::min<int64_t>(o.steps, 20), 0);  // warm-up: allocator caches, OpenBLAS buffers
  std::vector<double> off, on, sampled, plain;
  int samples = 0;
  for (int r = 0; r < o.repeat; ++r)
    for (const bool measure : r % 2 ? std::vector<bool>{true, false} : std::vector<bool>{false, true}) {
      const Timing t = train_once(project, o.steps, measure ? o.every : 0);
      (measure ? on : off).push_back(t.ms_per_step);
      if (measure) {
        sampled.insert(sampled.end(), t.sampled_ms.begin(), t.sampled_ms.end());
        plain.insert(plain.end(), t.plain_ms.begin(), t.plain_ms.end());
        samples = t.samples;
      }
      std::printf("run %d  stats_every %-4lld %8.3f ms/step\n", r + 1, (long long)(measure ? o.every : 0),
                  t.ms_per_step);
      std::fflush(stdout);
    }
  if (!generated.empty()) fs::remove_all(generated);

  const double base = median(off), with = median(on), ratio = with / base;
  std::printf("median ms/step: stats_every 0 %.3f, stats_every %lld %.3f (%d samples a run)\n", base,
              (long long)o.every, with, samples);
  // The same from within the runs with statistics, step beside step, so that the machine's other
  // load falls on both alike: the extra time of a sampled step, spread over stats_every steps.
  if (!sampled.empty()) {
    const double extra = median(sampled) - median(plain);
    std::printf("a sampled step alone: median %.3f ms, the others %.3f ms: %+.3f ms, or %.4f a step at stats_every %lld\n",
                median(sampled), median(plain), extra, 1 + extra / double(o.every) / median(plain), (long long)o.every);
  }
  std::printf("ratio %.4f: %s (budget 1.05)\n", ratio, ratio <= 1.05 ? "PASS" : "FAIL");
  return ratio <= 1.05 ? 0 : 1;
}
