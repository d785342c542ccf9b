#include "optim/adam.h"

#include <cmath>

#include "ops/backend.h"
#include "ops/kernels.h"
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
  update_group(g, {{param, grad, &state}});
}

void Adam::update_group(const ParamGroup& g, const std::vector<Item>& items) {
  const bool amsgrad = g.flag("amsgrad");
  Batch<Backend::AdamStep> batch;
  for (const Item& it : items) {
    auto zeros = [&] { return zeros_like(it.param); };
    const Tensor m = state_tensor(*it.state, "exp_avg", zeros);
    const Tensor v = state_tensor(*it.state, "exp_avg_sq", zeros);
    const Tensor vmax = amsgrad ? state_tensor(*it.state, "max_exp_avg_sq", zeros) : Tensor();
    const Backend::AdamStep step{g.lr,        g.option("beta1"), g.option("beta2"), g.option("eps"),
                                 g.option("weight_decay"), decoupled_, amsgrad, g.flag("maximize"),
                                 ++it.state->step};
    float* vm = vmax.defined() ? vmax.data() : nullptr;
    batch.add(it.param, it.grad, {m, v, vmax}, {m.data(), v.data(), vm}, step, [&](float* p, const float* d) {
      backend(it.param.device()).adam_step(p, d, m.data(), v.data(), vm, it.param.numel(), step);
    });
  }
  batch.run([](Backend& be, const auto& ts, const auto& steps) { be.adam_step_many(ts, steps); });
}

}  // namespace plexus::optim
