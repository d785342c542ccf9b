#pragma once
// Adam (torch.optim.Adam: L2 weight decay added to the gradient) and AdamW
// (torch.optim.AdamW: decoupled decay p <- p * (1 - lr * weight_decay)), both with AMSGrad
// and maximization. With g the gradient (negated if maximize) and t the parameter's step:
//   g <- g + weight_decay * p                       (Adam only)
//   m <- beta1 * m + (1 - beta1) * g
//   v <- beta2 * v + (1 - beta2) * g * g
//   vmax <- max(vmax, v); use vmax for v          (amsgrad)
//   p <- p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
#include <optional>

#include "optim/optimizer.h"

namespace plexus::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;  // PyTorch's betas[0]
  double beta2 = 0.999;
  double eps = 1e-8;
  // Unset: PyTorch's defaults, 0 for Adam and 1e-2 for AdamW.
  std::optional<double> weight_decay = std::nullopt;
  bool amsgrad = false;
  bool maximize = false;
};

// Group option keys: "beta1", "beta2", "eps", "weight_decay", "amsgrad", "maximize".
// State per parameter: step; "exp_avg", "exp_avg_sq", and "max_exp_avg_sq" with amsgrad.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = {});
  std::string kind() const override { return decoupled_ ? "AdamW" : "Adam"; }
  bool replayable() const override { return true; }

 protected:
  Adam(std::vector<Tensor> params, const AdamOptions& options, bool decoupled);
  void validate_group(const ParamGroup& group) const override;
  void update(const ParamGroup& group, const Tensor& param, const Tensor& grad, ParamState& state) override;
  void update_group(const ParamGroup& group, const std::vector<Item>& items) override;
  StateSpec state_spec() const override { return {{"exp_avg", "exp_avg_sq"}, {"max_exp_avg_sq"}, true}; }

 private:
  bool decoupled_;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamOptions& options = {});
};

}  // namespace plexus::optim
