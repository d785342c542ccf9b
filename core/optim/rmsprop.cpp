#include "optim/rmsprop.h"

#include <cmath>

#include "ops/ops.h"

namespace plexus::optim {

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& o)
    : Optimizer({{"lr", o.lr},
                 {"alpha", o.alpha},
                 {"eps", o.eps},
                 {"weight_decay", o.weight_decay},
                 {"momentum", o.momentum},
                 {"centered", o.centered ? 1.0 : 0.0},
                 {"maximize", o.maximize ? 1.0 : 0.0}}) {
  add_param_group(std::move(params));
}

void RMSprop::validate_group(const ParamGroup& g) const {
  require_range("learning rate", g.lr, g.lr >= 0 && std::isfinite(g.lr), "a finite lr >= 0");
  const double alpha = g.option("alpha"), eps = g.option("eps"), wd = g.option("weight_decay");
  const double momentum = g.option("momentum"), centered = g.option("centered"), maximize = g.option("maximize");
  require_range("alpha", alpha, alpha >= 0 && alpha <= 1, "0 <= alpha <= 1");
  require_range("eps", eps, eps > 0 && std::isfinite(eps), "a finite eps > 0");
  require_range("weight_decay", wd, wd >= 0 && std::isfinite(wd), "a finite weight_decay >= 0");
  require_range("momentum", momentum, momentum >= 0 && std::isfinite(momentum), "a finite momentum >= 0");
  require_range("centered", centered, centered == 0 || centered == 1, "0 or 1");
  require_range("maximize", maximize, maximize == 0 || maximize == 1, "0 or 1");
}

void RMSprop::update(const ParamGroup& g, const Tensor& param, const Tensor& grad, ParamState& state) {
  const double alpha = g.option("alpha"), eps = g.option("eps"), momentum = g.option("momentum");
  auto zeros = [&] { return zeros_like(param); };
  Tensor sq = state_tensor(state, "square_avg", zeros);
  ++state.step;
  const Tensor d = effective_grad(grad, param, g.option("weight_decay"), g.flag("maximize"));

  sq.mul_(float(alpha));
  sq.add_(mul(d, d), float(1 - alpha));
  Tensor avg;
  if (g.flag("centered")) {
    Tensor ga = state_tensor(state, "grad_avg", zeros);
    ga.mul_(float(alpha));
    ga.add_(d, float(1 - alpha));
    avg = sqrt(sub(sq, mul(ga, ga)));
  } else {
    avg = sqrt(sq);
  }
  add_scalar_(avg, float(eps));
  Tensor p = param;
  if (momentum > 0) {
    Tensor buf = state_tensor(state, "momentum_buffer", zeros);
    buf.mul_(float(momentum));
    buf.add_(div(d, avg));
    p.add_(buf, float(-g.lr));
  } else {
    p.add_(div(d, avg), float(-g.lr));
  }
}

}  // namespace plexus::optim
