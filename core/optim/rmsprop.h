#pragma once
// RMSprop: torch.optim.RMSprop, with momentum, the centered variant, L2 weight decay and
// maximization. With g the gradient (negated if maximize):
//   g <- g + weight_decay * p
//   s <- alpha * s + (1 - alpha) * g * g
//   avg <- sqrt(s - a * a) + eps, a <- alpha * a + (1 - alpha) * g first   (centered)
//   avg <- sqrt(s) + eps                                                   (otherwise)
//   b <- momentum * b + g / avg;  p <- p - lr * b    (momentum > 0; b starts at 0)
//   p <- p - lr * g / avg                            (otherwise)
#include "optim/optimizer.h"

namespace plexus::optim {

struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0;
  double momentum = 0;
  bool centered = false;
  bool maximize = false;
};

// Group option keys: "alpha", "eps", "weight_decay", "momentum", "centered", "maximize".
// State per parameter: step; "square_avg", "momentum_buffer" (momentum > 0), "grad_avg" (centered).
class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& options = {});
  std::string kind() const override { return "RMSprop"; }

 protected:
  void validate_group(const ParamGroup& group) const override;
  void update(const ParamGroup& group, const Tensor& param, const Tensor& grad, ParamState& state) override;
  StateSpec state_spec() const override { return {{"square_avg"}, {"momentum_buffer", "grad_avg"}, true}; }
};

}  // namespace plexus::optim
