#include "experiment/trial.h"

namespace plexus::widgets {

int bestTrial(const std::vector<Trial>& trials, TrialMetric metric) {
  int best = -1;
  std::optional<double> best_value;
  for (const Trial& trial : trials) {
    const std::optional<double> value = metricOf(trial, metric);
    if (value && (!best_value || better(metric, *value, *best_value))) {
      best_value = value;
      best = trial.index;
    }
  }
  return best;
}

}  // namespace plexus::widgets
