#pragma once
// What the experiment view shows of a sweep: its swept parameters and one Trial per trial, as
// the app reads them from the sweep's folder. Plain data, so the widgets need no sweep folder
// to be tested and the app converts the core's sweep state once.
#include <QString>
#include <QVariant>
#include <optional>
#include <vector>

namespace plexus::widgets {

struct SweptParameter {
  QString name;      // "lr", "augment.shift", "fc1.out_features"
  bool log = false;  // drawn on a log axis: a log range or values spread over decades
};

struct Trial {
  int index = 0;                                 // the trial's number in the sweep (1: its folder is trial-001)
  std::vector<QVariant> values;                  // one per swept parameter: a number, or text for a choice
  QString status;                                // "pending", "running", "completed", "stopped early", "failed", ...
  std::optional<double> bestLoss, bestAccuracy;  // the best epoch's validation figures (accuracy a fraction)
  int bestEpoch = 0;                             // 0: none yet
  int epochs = 0;                                // epochs trained
  double seconds = 0;                            // training time
  QString folder;                                // its run folder ("" before it starts)
};

// Which validation figure ranks the trials.
enum class TrialMetric { Loss, Accuracy };

// The trial's figure of `metric`, none before a validated epoch.
inline std::optional<double> metricOf(const Trial& trial, TrialMetric metric) {
  return metric == TrialMetric::Loss ? trial.bestLoss : trial.bestAccuracy;
}

// Whether `a` is better than `b` (lower loss, higher accuracy).
inline bool better(TrialMetric metric, double a, double b) { return metric == TrialMetric::Loss ? a < b : a > b; }

// The index (Trial::index) of the best trial by `metric`, -1 when none has the figure.
int bestTrial(const std::vector<Trial>& trials, TrialMetric metric);

}  // namespace plexus::widgets
