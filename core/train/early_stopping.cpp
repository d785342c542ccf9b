#include "train/early_stopping.h"

#include "optim_config/config.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::train {

bool Monitor::maximize() const {
  if (mode == "max") return true;
  if (mode == "min") return false;
  if (mode == "auto") return metric.ends_with("accuracy");
  throw ValueError("monitor_mode: unknown mode '" + mode + "' (known: auto, min, max)");
}

double Monitor::value(const EpochEnd& e) const {
  const bool held_out = e.has_eval;
  if (metric == "val_loss") return held_out ? e.eval_loss : e.train_loss;
  if (metric == "val_accuracy") return held_out ? e.eval_accuracy : e.train_accuracy;
  if (metric == "train_loss") return e.train_loss;
  if (metric == "train_accuracy") return e.train_accuracy;
  throw ValueError("monitor: unknown metric '" + metric + "' (known: " + join(optim::monitor_names()) + ")");
}

bool EarlyStopping::epoch_ended(EarlyStoppingState& state, const EpochEnd& e) const {
  const double s = monitor.score(e);
  if (improves(state, s)) {
    state.best = s;
    state.best_epoch = e.epoch;
    state.bad_epochs = 0;
    return false;
  }
  ++state.bad_epochs;
  return on() && state.bad_epochs >= patience;
}

}  // namespace plexus::train
