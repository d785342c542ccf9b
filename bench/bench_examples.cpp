// bench_examples: CPU training speed of an example project, the Plexus half of the comparison
// with PyTorch that scripts/bench-examples drives (its twin is bench/reference/torch_examples.py,
// which trains the very same graph from Plexus's initial weights).
//
//   bench_examples --project FILE [--runs R] [--examples N]
//
// The project trains exactly as `plexus-cli train FILE` trains it (session::make_training_run,
// then a train::Trainer on this thread: its loader, shuffling, normalisation, per-node statistics
// every stats_every steps, optimizer and batch size), except that
//   - with --examples N only the first N examples of the training split are trained on
//     (plexus-cli train --train-subset N), so that an epoch is short; N = 0 (default) is all;
//   - there is no validation or test pass, and the epochs are 1 + R: the first warms up
//     (allocator cache, OpenBLAS buffers, the loader's thread) and is not reported.
// Threads: as plexus-cli's default, PLEXUS_NUM_THREADS or every hardware thread.
// Each reported epoch's time is the Trainer's own EpochEnd::train_seconds: the training loop
// alone, batches fetched (and normalised, augmented) included; the dataset was read and decoded
// and the graph compiled before it starts.
//
// Output:
//   device: cpu (N threads, OPENBLAS_CORETYPE=..., OpenBLAS kernel ..., matrix product: ...)
//   samples <N>                  examples per timed epoch: the training split's, or --examples
//   batch <B>
//   flops_per_example <FLOP>     a training step's products per example (graph::estimate_compute)
//   run plexus <i> <seconds> <mean training loss> <data wait seconds>
#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include "ops/cpu/sgemm.h"
#include "plexus.h"
#include "train/trainer.h"

using namespace plexus;

namespace {

int usage() {
  std::fprintf(stderr, "usage: bench_examples --project FILE [--runs R] [--examples N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string project;
  int runs = 5;
  int64_t examples = 0;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    const char* v = argv[i + 1];
    if (a == "--project") project = v;
    else if (a == "--runs") runs = std::atoi(v);
    else if (a == "--examples") examples = std::atoll(v);
    else return usage();
  }
  if (project.empty() || runs < 1 || examples < 0) return usage();
  try {
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    std::printf("device: cpu (%d threads, OPENBLAS_CORETYPE=%s, OpenBLAS kernel %s, matrix product: %s)\n",
                num_threads(), coretype ? coretype : "(unset)", openblas_get_corename(),
                cpu::product_kernel());
    graph::Graph g = graph::load_project(project);
    if (g.training.device != "cpu")
      throw ValueError(project + ": training.device is '" + g.training.device + "'; this benchmark is for the CPU");
    g.training.epochs = 1 + runs;
    session::RunOptions ro;
    ro.project_dir = std::filesystem::path(project).parent_path();
    ro.train_subset = examples;
    session::TrainingRun run = session::make_training_run(g, ro);
    std::printf("samples %lld\n", (long long)run.data.train->size());
    std::printf("batch %lld\n", (long long)g.training.batch_size);
    std::printf("flops_per_example %.6g\n", run.trainer_options.flops_per_example);
    std::fflush(stdout);

    train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, nullptr, run.trainer_options);
    trainer.set_scheduler(run.scheduler.get());
    trainer.set_callback([&](const train::Event& e) {
      const auto* end = std::get_if<train::EpochEnd>(&e);
      if (!end || end->epoch == 1) return;  // the warm-up epoch
      std::printf("run plexus %d %.6f %.6f %.6f\n", end->epoch - 2, end->train_seconds, end->train_loss,
                  end->data_wait_seconds);
      std::fflush(stdout);
    });
    const train::RunResult result = trainer.run();
    if (result.status != train::RunStatus::Completed)
      throw Error(project + ": training failed: " + result.message);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_examples: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
