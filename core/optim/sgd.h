#pragma once
// Stochastic gradient descent with momentum, dampening, Nesterov momentum, L2 weight decay
// and maximization: torch.optim.SGD. With g the gradient (negated if maximize):
//   g <- g + weight_decay * p
//   b <- g on a parameter's first update, else momentum * b + (1 - dampening) * g
//   g <- g + momentum * b (nesterov)   or   g <- b (momentum != 0)
//   p <- p - lr * g
#include <limits>

#include "optim/optimizer.h"

namespace plexus::optim {

struct SGDOptions {
  double lr = std::numeric_limits<double>::quiet_NaN();  // required (no default, as in PyTorch)
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;  // needs momentum > 0 and dampening == 0
  bool maximize = false;
};

// Group option keys: "momentum", "dampening", "weight_decay", "nesterov", "maximize".
// State per parameter: "momentum_buffer" (when momentum != 0).
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  std::string kind() const override { return "SGD"; }
  bool replayable() const override { return true; }

 protected:
  void validate_group(const ParamGroup& group) const override;
  void update(const ParamGroup& group, const Tensor& param, const Tensor& grad, ParamState& state) override;
  void update_group(const ParamGroup& group, const std::vector<Item>& items) override;
  StateSpec state_spec() const override { return {{}, {"momentum_buffer"}, false}; }
};

}  // namespace plexus::optim
