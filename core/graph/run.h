#pragma once
// A training run built from a graph and its own settings: the dataset (found on disk), the
// loaders (image inputs standardised with the training images' mean and std), the compiled
// model and loss, the optimizer and the learning-rate schedule, and the Trainer's options.
// `plexus-cli train FILE` uses it; the GUI's run button uses the same function, so a project
// trains the same way from either.
//
// Dataset paths. An absolute path is used as is. A relative path is looked up first in the
// folder of the project file, then in the current directory; the first that exists wins.
// So `"path": "data/mnist"` in examples/mnist_mlp.plexus finds the repository's data/mnist
// when run from the repository root, and `"path": "data/housing.csv"` finds
// examples/data/housing.csv wherever it is run from.
#include <filesystem>
#include <memory>
#include <string>

#include "data/dataloader.h"
#include "graph/compiler.h"
#include "graph/dataset_info.h"
#include "graph/graph.h"
#include "optim/optimizer.h"
#include "optim/scheduler.h"
#include "train/trainer.h"

namespace plexus::graph {

struct DatasetLocation {
  std::filesystem::path path;  // the first candidate that exists; else the project-relative one
  bool found = false;
  std::string looked;          // where it looked, for messages: "examples/data/mnist or ./data/mnist"
};
// `project_dir`: the folder of the project file ("" = the current directory only).
DatasetLocation locate_dataset(const std::string& path, const std::filesystem::path& project_dir);

// The binding with its path resolved (see locate_dataset). Throws IoError "dataset 'data/mnist'
// not found (looked in ...)" when no candidate exists and `must_exist`.
DatasetBinding resolve_dataset(const DatasetBinding& binding, const std::filesystem::path& project_dir,
                               bool must_exist = true);

// Settings a front end can override without changing the graph (command-line flags).
struct RunOptions {
  std::filesystem::path project_dir;  // for relative dataset paths
  int64_t train_subset = 0;           // train on the first N training examples only (0 = all)
  int64_t eval_batch_size = 1000;
};

// Everything a run needs, ready to hand to a train::Trainer:
//   train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(),
//                    run.trainer_options);
//   t.set_scheduler(run.scheduler.get());
// The members own what the Trainer refers to; keep the TrainingRun alive (moving it is fine:
// everything sits behind pointers).
struct TrainingRun {
  TrainingSettings settings;                   // the graph's, as used
  DatasetBinding dataset;                      // path resolved
  DatasetSplits data;                          // train: after train_subset
  CompiledGraph compiled;                      // initialised with settings.seed, on settings.device
  std::unique_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<optim::LRScheduler> scheduler;  // null for schedule "none"
  std::unique_ptr<data::DataLoader> train_loader, eval_loader;
  train::TrainerOptions trainer_options;       // epochs, loss, classification, seed
};

// Checks the settings (ValueError naming the bad one), opens the dataset (IoError/DataError),
// compiles the graph (ValueError listing every graph error) and builds the rest. The seed
// initialises the weights, shuffles the batches, seeds dropout (the Trainer seeds the
// default generator) and, for a CSV file, chooses the 80/20 train/test split.
TrainingRun make_training_run(const Graph& graph, const RunOptions& options = {});

// Checks the training settings alone: every number within its range in training_param_specs()
// where it applies (batch size 1 to 2^20, epochs at least 1, a positive learning rate, ...), a
// known optimizer, schedule and device (cpu, cuda or cuda:N, a GPU only where one exists).
// Throws ValueError ("training: batch_size must be between 1 and 1048576, got 0"), or
// DeviceError for the device.
void check_training_settings(const TrainingSettings& settings);

}  // namespace plexus::graph
