#include "optim/sgd.h"

#include <cmath>

#include "ops/backend.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "util/text.h"

namespace plexus::optim {

SGD::SGD(std::vector<Tensor> params, const SGDOptions& o)
    : Optimizer({{"lr", o.lr},
                 {"momentum", o.momentum},
                 {"dampening", o.dampening},
                 {"weight_decay", o.weight_decay},
                 {"nesterov", o.nesterov ? 1.0 : 0.0},
                 {"maximize", o.maximize ? 1.0 : 0.0}}) {
  require(!std::isnan(o.lr), "lr is required (SGDOptions{.lr = ...}; SGD has no default learning rate)");
  add_param_group(std::move(params));
}

void SGD::validate_group(const ParamGroup& g) const {
  require_range("learning rate", g.lr, g.lr >= 0 && std::isfinite(g.lr), "a finite lr >= 0");
  const double momentum = g.option("momentum"), dampening = g.option("dampening");
  const double wd = g.option("weight_decay"), nesterov = g.option("nesterov"), maximize = g.option("maximize");
  require_range("momentum", momentum, momentum >= 0 && std::isfinite(momentum), "a finite momentum >= 0");
  require_range("dampening", dampening, std::isfinite(dampening), "a finite dampening");
  require_range("weight_decay", wd, wd >= 0 && std::isfinite(wd), "a finite weight_decay >= 0");
  require_range("nesterov", nesterov, nesterov == 0 || nesterov == 1, "0 or 1");
  require_range("maximize", maximize, maximize == 0 || maximize == 1, "0 or 1");
  require(!nesterov || (momentum > 0 && dampening == 0),
          "Nesterov momentum requires momentum > 0 and dampening == 0 (got momentum " + shortest_text(momentum) +
              ", dampening " + shortest_text(dampening) + ")");
}

void SGD::update(const ParamGroup& g, const Tensor& param, const Tensor& grad, ParamState& state) {
  update_group(g, {{param, grad, &state}});
}

void SGD::update_group(const ParamGroup& g, const std::vector<Item>& items) {
  const double momentum = g.option("momentum");
  const Backend::SgdStep common{float(g.lr), float(momentum), float(g.option("dampening")),
                                float(g.option("weight_decay")), g.flag("nesterov"), g.flag("maximize"), false};
  Batch<Backend::SgdStep> batch;
  for (const Item& it : items) {
    Backend::SgdStep step = common;
    Tensor buf;
    if (momentum != 0) {
      if (const Tensor* b = it.state->find("momentum_buffer")) {
        buf = *b;
      } else {
        // First update: the buffer becomes the gradient itself (no dampening), as in PyTorch.
        buf = empty(it.param.shape(), it.param.device());
        it.state->tensors.emplace_back("momentum_buffer", buf);
        step.first = true;
      }
    }
    float* b = buf.defined() ? buf.data() : nullptr;
    batch.add(it.param, it.grad, {buf}, {b, nullptr, nullptr}, step, [&](float* p, const float* d) {
      backend(it.param.device()).sgd_step(p, d, b, it.param.numel(), step);
    });
  }
  batch.run([](Backend& be, const auto& ts, const auto& steps) { be.sgd_step_many(ts, steps); });
}

}  // namespace plexus::optim
