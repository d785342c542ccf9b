#pragma once
// A training run assembled from a project: its dataset (found on disk, see
// graph::locate_dataset) in three splits, the input normalisation (computed on the training
// split), the loaders, the compiled model and loss, the optimizer and the learning-rate
// schedule, and the Trainer's options. `plexus-cli train FILE` and the GUI's Train button both
// start here, so a project trains the same way from either. session/ sits above graph/ (plain
// data) and train/ (the loop): it is where the two meet.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/dataloader.h"
#include "graph/dataset_info.h"
#include "graph/graph.h"
#include "layers/compiler.h"
#include "ops/precision.h"
#include "optim/optimizer.h"
#include "optim/scheduler.h"
#include "session/trained_model.h"
#include "train/trainer.h"

namespace plexus::session {

// Settings a front end can override without changing the graph (command-line flags).
struct RunOptions {
  std::filesystem::path project_dir;  // for relative dataset paths
  int64_t train_subset = 0;           // train on the first N training examples only (0 = all)
  int64_t eval_batch_size = 1000;
  // Data-parallel: this process reads shard `shard` of `shards` of every batch, the held-out
  // ones too (data::DataLoaderOptions::shard); batch_size stays the global batch.
  int64_t shard = 0;
  int64_t shards = 1;
};

// Everything a run needs, ready to hand to a train::Trainer:
//   train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(),
//                    run.trainer_options);
//   t.set_scheduler(run.scheduler.get());
//   t.set_test_loader(run.test_loader.get());
// The members own what the Trainer refers to; keep the TrainingRun alive (moving it is fine:
// everything sits behind pointers).
struct TrainingRun {
  graph::TrainingSettings settings;               // the graph's, as used
  graph::DatasetBinding dataset;                  // path resolved
  graph::DatasetSplits data;                      // train: after train_subset
  InputNormalization normalization;               // of the whole training split (before train_subset)
  std::vector<std::string> class_names;           // classification, or a text's vocabulary: one per class
  std::vector<std::string> feature_names;         // a CSV file's model inputs; else empty
  std::shared_ptr<const data::TablePreparation> preparation;  // a CSV file's, fitted on the training split
  std::vector<std::string> vocabulary;            // labelled texts' input characters (input_vocabulary); else empty
  // The training split's examples per class (after train_subset) when settings.class_balance is
  // on; else empty. Its balanced weights are in the compiled loss (session/class_balance.h).
  std::vector<int64_t> class_counts;
  layers::CompiledGraph compiled;                  // initialised with settings.seed, on settings.device
  std::unique_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<optim::LRScheduler> scheduler;  // null for schedules "none" and "plateau"
  std::unique_ptr<optim::ReduceLROnPlateau> plateau;  // schedule "plateau" (trainer_options.plateau)
  std::unique_ptr<data::DataLoader> train_loader;
  std::unique_ptr<data::DataLoader> eval_loader;  // the validation split; null without one
  std::unique_ptr<data::DataLoader> test_loader;  // null without a test split (text)
  train::TrainerOptions trainer_options;          // epochs, loss, classification, seed
};

// Checks the settings (ValueError naming the bad one), opens the dataset (IoError/DataError),
// compiles the graph (ValueError listing every graph error) and builds the rest. The seed
// initialises the weights, shuffles the batches, seeds dropout (the Trainer seeds the
// default generator) and chooses the validation split (and a CSV file's train/test split).
TrainingRun make_training_run(const graph::Graph& graph, const RunOptions& options = {});

// The run's optimizer over run.compiled.model, its parameters grouped by `graph`'s node settings
// (session/optimizer_groups.h), and run.settings' learning-rate schedule at epoch 0 for epochs
// of `batches` training batches (trainer_options.plateau set for a plateau schedule);
// make_training_run calls it, and so must anything that gives a run another model.
void build_optimizer(TrainingRun& run, const graph::Graph& graph, int64_t batches);

// The settings' early stopping (its monitor also the plateau schedule's).
train::EarlyStopping early_stopping(const graph::TrainingSettings& settings);

// The trainer's loss from a compiled graph: its (weighted, summed) loss, the parts of a graph
// with several loss nodes, and whether it classifies. Whatever trains or evaluates a compiled
// model sets its options this way.
void set_loss(train::TrainerOptions& options, const layers::CompiledGraph& compiled);

// The per-node statistics' hooks into run.compiled.model (TrainerOptions::observe_outputs) and
// the nodes' types and labels for the health issues, from `graph`; make_training_run calls it,
// and so must anything that gives a run another model (an edit while paused).
void observe_nodes(TrainingRun& run, const graph::Graph& graph);

// What a kind of run adds to each epoch (TrainerOptions::on_epoch_end): a text project's samples
// (epoch_samples), a model scored against its input's reconstructions (session/reconstructions.h);
// nothing for others. make_training_run sets it, and so must anything that gives a run another model.
void set_epoch_end(TrainingRun& run, const graph::Graph& graph);

// A text project's samples after every epoch (TrainerOptions::on_epoch_end, which
// make_training_run sets for one): kEpochSamples of them from the live model at temperature
// 0.8, seeded by the run's seed and the epoch, so a rerun writes the same ones. A model that
// cannot generate (its output is not next-character scores for every position of any length)
// gets a notice saying why after the first epoch, and no samples.
inline constexpr int64_t kEpochSamples = 8;
std::function<std::string(train::EpochEnd&)> epoch_samples(const TrainingRun& run);

// The class names of a classification dataset with `classes` classes ("0", "1", ... where the
// dataset has none).
std::vector<std::string> class_names(const data::Dataset& dataset, int64_t classes);

// Checks the training settings: graph::check_training_values (every number within its range
// where it applies, a known optimizer and schedule), then the device (cpu, cuda or cuda:N, a
// GPU only where one exists). Throws ValueError ("training: batch_size must be between 1 and
// 1048576, got 0"), or DeviceError for a GPU this machine lacks.
void check_training_settings(const graph::TrainingSettings& settings);

// Where a run computes, for people: "cpu, 2 threads" or "cuda:0 (NVIDIA H100 80GB HBM3)".
std::string device_text(Device device);
// device_text and the precision its products compute in (precision_on): "cpu, 2 threads, bf16
// products" or "cpu, 2 threads, fp32".
std::string device_text(Device device, Precision precision);

}  // namespace plexus::session
