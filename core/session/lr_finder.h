#pragma once
// The learning-rate finder (Smith, "Cyclical learning rates", 2017; fastai's lr_find): a short
// training run whose learning rate grows exponentially from `start_lr` to `end_lr`, one step per
// batch, recording the loss. The loss first barely moves (the rate is too small), then falls,
// then blows up; a good rate lies where it falls fastest.
//
// What it trains: a fresh model from the project (make_training_run: the project's seed, its
// optimizer with its groups' lr multipliers, its batches and augmentation), never a model a
// caller holds; with LrFinderOptions::init_from, that model starts from a checkpoint's or weights
// file's matching tensors as a run started from it would (train::init_from), so a model being
// fine-tuned is ramped from its weights. The project's schedule and warm-up are replaced by the ramp. Step i of n
// (0-based) trains at start_lr · (end_lr / start_lr)^(i / (n - 1)); that is the project's lr,
// each parameter group scaled by its own multiplier as in training. The steps are one pass of
// the training split at most (a split of fewer than kMinSteps batches is an error).
//
// Smoothing: an exponential moving average with bias correction, as fastai's:
//   avg_i = β·avg_{i-1} + (1-β)·loss_i,  smoothed_i = avg_i / (1 - β^(i+1)),  β = `smoothing`.
// The ramp stops early (diverged) at the first step whose loss is not finite or whose smoothed
// loss exceeds `divergence` × the lowest smoothed loss so far; that step is recorded too.
//
// The suggestion (suggest_learning_rate) is the steepest descent of the smoothed loss against
// log(lr): over the points before divergence, leaving out the first tenth of the ramp's steps
// (the average is still settling) and the last kTailSkip points (the loss is turning up), the
// finite difference (smoothed_{i+1} - smoothed_i) / (ln lr_{i+1} - ln lr_i) is lowest at some i,
// and the suggestion is lr_i, fastai's "steep" rule. When no difference is negative (the loss
// never fell) there is no suggestion and `note` says why.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "session/run.h"

namespace plexus::session {

inline constexpr int64_t kMinSteps = 8;  // fewer batches than this give no curve worth reading
inline constexpr int64_t kTailSkip = 5;  // points before divergence the suggestion leaves out

struct LrFinderOptions {
  double start_lr = 1e-7;
  double end_lr = 10;
  int64_t steps = 100;      // at most one pass of the training split
  double smoothing = 0.98;  // β of the moving average, in [0, 1)
  double divergence = 4;    // stop once the smoothed loss passes this × its lowest (> 1)
  // Set by another thread to stop after the current step; the result then has cancelled set.
  const std::atomic<bool>* cancel = nullptr;
  // A checkpoint or weights file whose matching tensors the model starts from ("" = the project's
  // fresh weights), as `plexus-cli train --init-from` starts a run.
  std::string init_from = {};
};

struct LrPoint {
  double lr = 0;
  double loss = 0;      // the batch's loss (may be inf or nan at the diverging step)
  double smoothed = 0;  // the moving average, bias-corrected
};

struct LrSuggestion {
  std::optional<double> lr;  // none when the loss never fell
  int64_t index = -1;        // the point it is, when there is one
  std::string note;          // why there is none; empty otherwise
};

struct LrFinderResult {
  std::vector<LrPoint> points;  // in step order
  int64_t planned_steps = 0;    // the ramp's steps (options.steps capped by the training split)
  bool diverged = false;        // the last point is the diverging one
  bool cancelled = false;
  LrSuggestion suggestion;
  std::string initialised;  // with init_from: what was kept (train::init_from's account)
};

// Reported after every step, on the finder's thread: the point, its number (1-based) and the
// planned steps.
using LrProgress = std::function<void(const LrPoint&, int64_t step, int64_t steps)>;

// Runs the finder on `graph` (its dataset found as make_training_run finds it). ValueError for
// options out of range, a project that does not check, or a training split of fewer than
// kMinSteps batches; what make_training_run throws otherwise. Deterministic for a given seed (on
// the CPU). The points are read on the calling thread only.
LrFinderResult find_learning_rate(const graph::Graph& graph, const LrFinderOptions& options,
                                  const RunOptions& run_options = {}, const LrProgress& progress = {});

// The suggestion for recorded points (see above); `planned_steps` sets the skipped start.
LrSuggestion suggest_learning_rate(const std::vector<LrPoint>& points, bool diverged, int64_t planned_steps);

}  // namespace plexus::session
