#include "optim/clip.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "autograd/grad_mode.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus::optim {
namespace {

std::vector<Tensor> defined_grads(const std::vector<Tensor>& params) {
  std::vector<Tensor> grads;
  for (const Tensor& p : params) {
    if (!p.defined()) continue;
    Tensor g = p.grad();
    if (g.defined() && g.numel() > 0) grads.push_back(std::move(g));
  }
  return grads;
}

}  // namespace

float clip_grad_norm_(const std::vector<Tensor>& params, float max_norm, float norm_type) {
  if (!(max_norm >= 0))
    throw ValueError("clip_grad_norm_: max_norm must be >= 0, got " + std::to_string(max_norm));
  const bool inf_norm = std::isinf(norm_type) && norm_type > 0;
  if (!inf_norm && !(norm_type > 0 && std::isfinite(norm_type)))
    throw ValueError("clip_grad_norm_: norm_type must be > 0 or infinity, got " + std::to_string(norm_type));
  NoGradGuard no_grad;
  const std::vector<Tensor> grads = defined_grads(params);
  if (grads.empty()) return 0.f;

  // Per-tensor norms in float (as PyTorch computes them), combined in double.
  float total = 0;
  if (inf_norm) {
    for (const Tensor& g : grads) {
      const float m = max(abs(g)).item();
      if (std::isnan(m)) return m;  // non-finite: leave the gradients as they are
      total = std::max(total, m);
    }
  } else if (norm_type == 2) {
    double acc = 0;
    for (const Tensor& g : grads) {
      const float n = std::sqrt(sum(mul(g, g)).item());
      acc += double(n) * n;
    }
    total = float(std::sqrt(acc));
  } else if (norm_type == 1) {
    double acc = 0;
    for (const Tensor& g : grads) acc += sum(abs(g)).item();
    total = float(acc);
  } else {
    double acc = 0;
    for (const Tensor& g : grads) {
      const double n = std::pow(double(sum(pow(abs(g), norm_type)).item()), 1.0 / norm_type);
      acc += std::pow(float(n), double(norm_type));
    }
    total = float(std::pow(acc, 1.0 / norm_type));
  }
  if (!std::isfinite(total)) return total;  // leave the gradients as they are

  const float coef = max_norm / (total + 1e-6f);
  if (coef < 1.f)
    for (Tensor g : grads) g.mul_(coef);
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, float clip) {
  if (!(clip >= 0)) throw ValueError("clip_grad_value_: clip must be >= 0, got " + std::to_string(clip));
  NoGradGuard no_grad;
  for (Tensor g : defined_grads(params)) g.copy_(clamp(g, -clip, clip));
}

}  // namespace plexus::optim
