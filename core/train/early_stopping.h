#pragma once
// The figure a run watches (its "monitor"): what early stopping stops on, what a plateau
// schedule steps with, and, with early stopping on, what chooses the best checkpoint
// (session/run_folder.h), so that best.safetensors is the epoch early stopping kept.
//
// Early stopping ends a run after `patience` epochs in a row without an improvement of more than
// min_delta over the best epoch so far (Keras's EarlyStopping, baseline none):
//
//   EarlyStopping stopping{.monitor = {"val_loss", "auto"}, .patience = 3};
//   EarlyStoppingState state;
//   for (...) { EpochEnd e = ...; if (stopping.epoch_ended(state, e)) break; }   // state.best_epoch
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "train/events.h"

namespace plexus::train {

struct Monitor {
  std::string metric = "val_loss";  // one of optim::monitor_names()
  std::string mode = "auto";        // auto (max for an accuracy, min for a loss), min or max
  bool maximize() const;
  // The metric's value in `e`. An epoch without evaluation (no validation split) gives the
  // training figure of the same name instead. ValueError for an unknown metric or mode.
  double value(const EpochEnd& e) const;
  // value(e) turned so that larger is better.
  double score(const EpochEnd& e) const { return maximize() ? value(e) : -value(e); }
};

struct EarlyStoppingState {
  double best = -std::numeric_limits<double>::infinity();  // Monitor::score of the best epoch
  int best_epoch = 0;                                      // 0 before the first epoch
  int bad_epochs = 0;                                      // since the best
  bool operator==(const EarlyStoppingState&) const = default;
};

struct EarlyStopping {
  Monitor monitor;
  int64_t patience = 0;  // 0 = off
  double min_delta = 0;  // what counts as an improvement: more than this
  bool on() const { return patience > 0; }
  // Whether an epoch scoring `score` improves on `state`'s best.
  bool improves(const EarlyStoppingState& state, double score) const { return score > state.best + min_delta; }
  // Takes epoch `e` into `state`; true when the run should stop after it.
  bool epoch_ended(EarlyStoppingState& state, const EpochEnd& e) const;
};

}  // namespace plexus::train
