#include "optim/step_warmup.h"

#include <cmath>
#include <string>

#include "util/error.h"
#include "util/text.h"

namespace plexus::optim {

void StepWarmup::check() const {
  if (steps < 0) throw ValueError("warm-up: steps must be 0 or more, got " + std::to_string(steps));
  if (!(start_factor >= 0 && start_factor <= 1))
    throw ValueError("warm-up: start_factor must be between 0 and 1, got " + shortest_text(start_factor));
}

double StepWarmup::factor(int64_t done) const {
  if (done >= steps) return 1;
  return start_factor + (1 - start_factor) * double(done) / double(steps);
}

ScaledLr::ScaledLr(Optimizer& optimizer, double factor) : optimizer_(optimizer) {
  if (factor == 1) return;
  for (ParamGroup& g : optimizer_.param_groups()) {
    saved_.push_back(g.lr);
    g.lr *= factor;
  }
}

ScaledLr::~ScaledLr() {
  std::vector<ParamGroup>& groups = optimizer_.param_groups();
  for (size_t i = 0; i < saved_.size() && i < groups.size(); ++i) groups[i].lr = saved_[i];
}

}  // namespace plexus::optim
