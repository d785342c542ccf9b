#include "optim/plateau.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.h"
#include "util/text.h"

namespace plexus::optim {

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, PlateauOptions options)
    : opt_(optimizer),
      options_(options),
      best_(options.maximize ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity()) {
  const auto refuse = [](const std::string& what) { throw ValueError("ReduceLROnPlateau: " + what); };
  if (!(options.factor > 0 && options.factor < 1))
    refuse("factor must be in (0, 1), got " + shortest_text(options.factor));
  if (options.patience < 0) refuse("patience must be >= 0, got " + std::to_string(options.patience));
  if (options.cooldown < 0) refuse("cooldown must be >= 0, got " + std::to_string(options.cooldown));
  if (!(options.threshold >= 0)) refuse("threshold must be >= 0, got " + shortest_text(options.threshold));
  if (!(options.min_lr >= 0)) refuse("min_lr must be >= 0, got " + shortest_text(options.min_lr));
  if (!opt_.param_groups().empty()) first_lr_ = opt_.param_groups()[0].lr;
}

double ReduceLROnPlateau::scale() const {
  return first_lr_ > 0 && !opt_.param_groups().empty() ? opt_.param_groups()[0].lr / first_lr_ : 1.0;
}

bool ReduceLROnPlateau::better(double a) const {
  // torch's _is_better, operation for operation.
  const double t = options_.threshold;
  if (options_.maximize) return options_.relative ? a > best_ * (t + 1) : a > best_ + t;
  return options_.relative ? a < best_ * (1 - t) : a < best_ - t;
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (better(metric)) {
    best_ = metric;
    bad_epochs_ = 0;
  } else {
    ++bad_epochs_;
  }
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    bad_epochs_ = 0;
  }
  if (bad_epochs_ > options_.patience) {
    for (ParamGroup& g : opt_.param_groups()) {
      const double lowered = std::max(g.lr * options_.factor, options_.min_lr);
      if (g.lr - lowered > options_.eps) g.lr = lowered;
    }
    cooldown_left_ = options_.cooldown;
    bad_epochs_ = 0;
  }
}

PlateauState ReduceLROnPlateau::state() const {
  PlateauState s{best_, bad_epochs_, cooldown_left_, last_epoch_, {}};
  for (const ParamGroup& g : opt_.param_groups()) s.lrs.push_back(g.lr);
  return s;
}

void ReduceLROnPlateau::restore(const PlateauState& s) {
  std::vector<ParamGroup>& groups = opt_.param_groups();
  if (s.lrs.size() != groups.size())
    throw ValueError("ReduceLROnPlateau: the saved state has " + std::to_string(s.lrs.size()) +
                     " learning rates for an optimizer with " + std::to_string(groups.size()) + " parameter groups");
  // An infinite best is none yet (a saved state cannot tell +inf from -inf): the mode's start.
  best_ = std::isinf(s.best) ? (options_.maximize ? -1 : 1) * std::numeric_limits<double>::infinity() : s.best;
  bad_epochs_ = s.bad_epochs;
  cooldown_left_ = s.cooldown_left;
  last_epoch_ = s.last_epoch;
  for (size_t i = 0; i < groups.size(); ++i) groups[i].lr = s.lrs[i];
}

}  // namespace plexus::optim
