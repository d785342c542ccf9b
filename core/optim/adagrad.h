#pragma once
// Adagrad: torch.optim.Adagrad, with learning-rate decay, an initial accumulator value, L2
// weight decay and maximization. With g the gradient (negated if maximize) and t the
// parameter's step (from 1):
//   g <- g + weight_decay * p
//   s <- s + g * g            (s starts at initial_accumulator_value)
//   p <- p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)
#include "optim/optimizer.h"

namespace plexus::optim {

struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0;
  double weight_decay = 0;
  double initial_accumulator_value = 0;
  double eps = 1e-10;
  bool maximize = false;
};

// Group option keys: "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "maximize".
// State per parameter: step; "sum".
class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, const AdagradOptions& options = {});
  std::string kind() const override { return "Adagrad"; }

 protected:
  void validate_group(const ParamGroup& group) const override;
  void update(const ParamGroup& group, const Tensor& param, const Tensor& grad, ParamState& state) override;
  StateSpec state_spec() const override { return {{"sum"}, {}, true}; }
};

}  // namespace plexus::optim
