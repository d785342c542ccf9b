#pragma once
// What a training run reports (Trainer::set_callback). Events are plain values, so a front
// end may copy them to another thread (the GUI's controller queues them to the UI thread)
// and never touches the model.
#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "train/node_stats.h"

namespace plexus::train {

// One loss node's own loss, unweighted, in a graph with several (TrainerOptions::loss_parts).
struct LossPart {
  std::string node;  // its id
  double value = 0;
  bool operator==(const LossPart&) const = default;
};

struct BatchEnd {
  int epoch = 0, epochs = 0;         // 1-based epoch
  int64_t batch = 0, batches = 0;    // 1-based batch within the epoch
  double loss = 0;                   // this batch
  double running_loss = 0;           // mean over the epoch so far
  std::vector<LossPart> losses;      // several loss nodes: each one's, this batch
  double running_accuracy = 0;       // classification only
  double samples_per_second = 0;     // over the epoch so far, waiting for data included
  // That rate in FLOPs the model's counted products need (graph/compute.h), and the device's
  // measured peak to set it against (train/peak.h); 0 when not counted or not measured.
  double gflops = 0;
  double peak_gflops = 0;
  double eta_seconds = 0;            // whole run
  double lr = 0;
};

// Achieved over peak, 0.43 for 43 %; 0 when either is unknown. At most 1: the trainer raises
// the peak to a faster rate (TrainerOptions::peak_gflops), and a run recorded by an older
// version, or on a machine measured under other settings, is not shown above its peak either.
inline double share_of_peak(double gflops, double peak_gflops) {
  return gflops > 0 && peak_gflops > 0 ? std::min(1.0, gflops / peak_gflops) : 0;
}

// Decimals that show a share of peak in percent: a small model on a GPU reaches 0.3 % of its
// peak, which "0 %" would hide.
inline int percent_decimals(double percent) { return percent < 1 ? 2 : percent < 10 ? 1 : 0; }

// A model scored against its own input (an autoencoder): a few held-out examples beside what
// the model made of each after an epoch, both in raw units (as the dataset reader yields them,
// pixels / 255), so they show as pictures.
struct Reconstructions {
  std::vector<int64_t> example;         // one example's shape, [C, H, W]
  std::vector<float> inputs, outputs;   // example after example, each of the example's size
  bool empty() const { return inputs.empty(); }
  bool operator==(const Reconstructions&) const = default;
};

struct EpochEnd {
  int epoch = 0, epochs = 0;
  double train_loss = 0, train_accuracy = 0;
  bool has_eval = false;
  double eval_loss = 0, eval_accuracy = 0, eval_top5 = 0;
  std::vector<LossPart> train_losses, eval_losses;  // several loss nodes: each one's mean
  std::vector<double> per_class_accuracy;  // eval split
  int64_t classes = 0;
  std::vector<int64_t> confusion;          // eval split, row-major classes×classes
  // Eval split, one per example in loader order, with TrainerOptions::record_predictions:
  // the predicted class (as counted in `confusion`) and its softmax probability.
  std::vector<int32_t> predicted;
  std::vector<float> confidence;
  // With two classes, also class 1's softmax probability (the score a ROC curve ranks by,
  // train/roc.h), kept apart from `confidence`, which would lose it near 1.
  std::vector<float> positive_probability;
  // A regression's (not classification, an [N, k] output) outputs, example-major, with
  // record_predictions: what a predicted-versus-actual plot draws.
  std::vector<float> outputs;
  double lr = 0;
  double seconds = 0;                      // this epoch, training + evaluation
  double train_seconds = 0;                // of those, the training loop's (no evaluation)
  // Of `train_seconds`, the time the training loop spent waiting for the train loader's next
  // batch (inside its begin() and ++). A large share means the data, not the model, limits
  // the speed.
  double data_wait_seconds = 0;
  // The training loop's speed over the whole epoch, as BatchEnd's (0 when not counted).
  double samples_per_second = 0;
  double gflops = 0;
  double peak_gflops = 0;
  // A text project's run: text the model generated after this epoch (session/text_sampling.h).
  std::vector<std::string> samples;
  // A model scored against its input: some validation examples and its output for them
  // (session::epoch_reconstructions).
  Reconstructions reconstructions;
};

// After the last epoch of a run that was not stopped: the final model's figures on the test
// split (the eval_* fields, has_eval true), kept apart from the validation split that chose
// the best epoch. Only when the Trainer has a test loader.
struct TestEnd {
  EpochEnd figures;
};

struct Finished {
  bool cancelled = false;
  int epochs_completed = 0;
  double seconds = 0;
  // Early stopping ended the run (train/early_stopping.h) after epochs_completed; best_epoch
  // is the epoch it kept.
  bool stopped_early = false;
  int best_epoch = 0;
};

struct Failed {
  std::string message;
};

// Something the user should know about how the run executes, said once: the training step
// runs as a CUDA graph or why not, a precision that does not apply to the device.
struct Notice {
  std::string text;
};

// The run's graph was edited while it was paused, and training went on with the edited model
// from where it stopped: after `batch` of the `batches` of `epoch` (the GUI's Pause, edit,
// Resume; session/run_edit.h). Not the Trainer's: the front end that swapped the model says it.
struct GraphEdit {
  int epoch = 0;
  int64_t batch = 0, batches = 0;
  std::vector<std::string> changes;  // what changed, one line each (graph::describe)
  int64_t kept = 0, reset = 0;       // tensors carried over, and left as initialised
  std::string carried;               // the whole account (train::CarryReport::text)
  // Where on the loss plot's step axis ((epoch - 1) * batches + batch): between that batch and the next.
  double step() const { return double(int64_t(epoch - 1) * batches + batch) + 0.5; }
};

using Event = std::variant<BatchEnd, EpochEnd, TestEnd, Finished, Failed, Notice, NodeStats, GraphEdit>;

}  // namespace plexus::train
