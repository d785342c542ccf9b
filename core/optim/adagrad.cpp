#include "optim/adagrad.h"

#include <cmath>

#include "ops/ops.h"

namespace plexus::optim {

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& o)
    : Optimizer({{"lr", o.lr},
                 {"lr_decay", o.lr_decay},
                 {"weight_decay", o.weight_decay},
                 {"initial_accumulator_value", o.initial_accumulator_value},
                 {"eps", o.eps},
                 {"maximize", o.maximize ? 1.0 : 0.0}}) {
  add_param_group(std::move(params));
}

void Adagrad::validate_group(const ParamGroup& g) const {
  require_range("learning rate", g.lr, g.lr >= 0 && std::isfinite(g.lr), "a finite lr >= 0");
  const double lr_decay = g.option("lr_decay"), wd = g.option("weight_decay");
  const double init = g.option("initial_accumulator_value"), eps = g.option("eps");
  const double maximize = g.option("maximize");
  require_range("lr_decay", lr_decay, lr_decay >= 0 && std::isfinite(lr_decay), "a finite lr_decay >= 0");
  require_range("weight_decay", wd, wd >= 0 && std::isfinite(wd), "a finite weight_decay >= 0");
  require_range("initial_accumulator_value", init, init >= 0 && std::isfinite(init),
                "a finite initial_accumulator_value >= 0");
  require_range("eps", eps, eps > 0 && std::isfinite(eps), "a finite eps > 0");
  require_range("maximize", maximize, maximize == 0 || maximize == 1, "0 or 1");
}

void Adagrad::update(const ParamGroup& g, const Tensor& param, const Tensor& grad, ParamState& state) {
  Tensor sum = state_tensor(state, "sum", [&] {
    return full(param.shape(), float(g.option("initial_accumulator_value")), param.device());
  });
  const int64_t step = ++state.step;
  const Tensor d = effective_grad(grad, param, g.option("weight_decay"), g.flag("maximize"));
  const double clr = g.lr / (1 + double(step - 1) * g.option("lr_decay"));

  sum.add_(mul(d, d));
  Tensor denom = sqrt(sum);
  add_scalar_(denom, float(g.option("eps")));
  Tensor p = param;
  p.add_(div(d, denom), float(-clr));
}

}  // namespace plexus::optim
