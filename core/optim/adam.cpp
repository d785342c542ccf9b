#include "optim/adam.h"

#include <cmath>

#include "ops/ops.h"

namespace plexus::optim {

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options) : Adam(std::move(params), options, false) {}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& o, bool decoupled)
    : Optimizer({{"lr", o.lr},
                 {"beta1", o.beta1},
                 {"beta2", o.beta2},
                 {"eps", o.eps},
                 {"weight_decay", o.weight_decay.value_or(decoupled ? 1e-2 : 0.0)},
                 {"amsgrad", o.amsgrad ? 1.0 : 0.0},
                 {"maximize", o.maximize ? 1.0 : 0.0}}),
      decoupled_(decoupled) {
  add_param_group(std::move(params));
}

AdamW::AdamW(std::vector<Tensor> params, const AdamOptions& options) : Adam(std::move(params), options, true) {}

void Adam::validate_group(const ParamGroup& g) const {
  require_range("learning rate", g.lr, g.lr >= 0 && std::isfinite(g.lr), "a finite lr >= 0");
  const double b1 = g.option("beta1"), b2 = g.option("beta2"), eps = g.option("eps");
  const double wd = g.option("weight_decay"), amsgrad = g.option("amsgrad"), maximize = g.option("maximize");
  require_range("beta1", b1, b1 >= 0 && b1 < 1, "0 <= beta1 < 1");
  require_range("beta2", b2, b2 >= 0 && b2 < 1, "0 <= beta2 < 1");
  require_range("eps", eps, eps > 0 && std::isfinite(eps), "a finite eps > 0");
  require_range("weight_decay", wd, wd >= 0 && std::isfinite(wd), "a finite weight_decay >= 0");
  require_range("amsgrad", amsgrad, amsgrad == 0 || amsgrad == 1, "0 or 1");
  require_range("maximize", maximize, maximize == 0 || maximize == 1, "0 or 1");
}

void Adam::update(const ParamGroup& g, const Tensor& param, const Tensor& grad, ParamState& state) {
  const double lr = g.lr, b1 = g.option("beta1"), b2 = g.option("beta2"), eps = g.option("eps");
  const double wd = g.option("weight_decay");
  const bool amsgrad = g.flag("amsgrad"), maximize = g.flag("maximize");
  Tensor p = param;
  auto zeros = [&] { return zeros_like(param); };
  Tensor m = state_tensor(state, "exp_avg", zeros);
  Tensor v = state_tensor(state, "exp_avg_sq", zeros);
  const int64_t step = ++state.step;

  Tensor d;
  if (decoupled_) {
    if (lr * wd != 0) p.mul_(float(1 - lr * wd));  // AdamW: decay the weights, not the gradient
    d = effective_grad(grad, param, 0, maximize);
  } else {
    d = effective_grad(grad, param, wd, maximize);
  }
  m.mul_(float(b1));
  m.add_(d, float(1 - b1));
  v.mul_(float(b2));
  v.add_(mul(d, d), float(1 - b2));

  const double bc1 = 1 - std::pow(b1, double(step));
  const double bc2_sqrt = std::sqrt(1 - std::pow(b2, double(step)));
  const double step_size = lr / bc1;
  Tensor src = v;
  if (amsgrad) {
    Tensor vmax = state_tensor(state, "max_exp_avg_sq", zeros);
    vmax.copy_(maximum(vmax, v));
    src = vmax;
  }
  // PyTorch: denom = sqrt(v) / bc2_sqrt + eps; p -= step_size * m / denom. The same value is
  // computed with the bias correction folded into the scalars, which saves two passes:
  //   m / (sqrt(v) / bc2_sqrt + eps) = bc2_sqrt * m / (sqrt(v) + eps * bc2_sqrt)
  Tensor denom = sqrt(src);
  add_scalar_(denom, float(eps * bc2_sqrt));
  p.add_(div(m, denom), float(-step_size * bc2_sqrt));
}

}  // namespace plexus::optim
