#include "ops/backend.h"

#include <cmath>

#include "util/error.h"

namespace plexus {

Backend::AdamScalars Backend::adam_scalars(const AdamStep& s) {
  // PyTorch: p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps). Multiplying through by sqrt(bc2)
  // gives the same value with the bias correction folded into two scalars.
  const double bc1 = 1 - std::pow(double(s.beta1), double(s.step));
  const double bc2_sqrt = std::sqrt(1 - std::pow(double(s.beta2), double(s.step)));
  AdamScalars k;
  k.beta1 = float(s.beta1);
  k.one_minus_beta1 = float(1 - s.beta1);
  k.beta2 = float(s.beta2);
  k.one_minus_beta2 = float(1 - s.beta2);
  k.weight_decay = s.decoupled ? 0.f : float(s.weight_decay);
  k.step = float(s.lr / bc1 * bc2_sqrt);
  k.eps = float(s.eps * bc2_sqrt);
  k.decay = s.decoupled ? float(1 - s.lr * s.weight_decay) : 1.f;
  return k;
}

void Backend::sgd_step_many(const std::vector<UpdateTensor>& ts, const std::vector<SgdStep>& steps) {
  for (size_t i = 0; i < ts.size(); ++i) sgd_step(ts[i].param, ts[i].grad, ts[i].s0, ts[i].n, steps[i]);
}

void Backend::adam_step_many(const std::vector<UpdateTensor>& ts, const std::vector<AdamStep>& steps) {
  for (size_t i = 0; i < ts.size(); ++i)
    adam_step(ts[i].param, ts[i].grad, ts[i].s0, ts[i].s1, ts[i].s2, ts[i].n, steps[i]);
}

void Backend::conv2d_forward_fused(float*, float*, const float*, const float*, const float*, const ConvEpilogue&,
                                   const ConvProblem&) {
  throw Error("conv2d_forward_fused: this backend has no fused convolution (has_fused_conv2d() is false)");
}

void Backend::conv2d_backward_fused(float*, float*, float*, const float*, const float*, const float*, const float*,
                                    const float*, const ConvEpilogue&, const ConvProblem&) {
  throw Error("conv2d_backward_fused: this backend has no fused convolution (has_fused_conv2d() is false)");
}

}  // namespace plexus
