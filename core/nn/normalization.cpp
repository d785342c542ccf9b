#include "nn/normalization.h"

#include "autograd/grad_mode.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus::nn {

BatchNorm::BatchNorm(int64_t n, int64_t dims, float eps, float momentum, bool affine)
    : features_(n), dims_(dims), eps_(eps), momentum_(momentum) {
  if (n < 1) throw ValueError("BatchNorm: num_features must be positive");
  if (affine) {
    weight = register_parameter("weight", ones({n}));
    bias = register_parameter("bias", zeros({n}));
  }
  running_mean = register_buffer("running_mean", zeros({n}));
  running_var = register_buffer("running_var", ones({n}));
  num_batches_tracked = register_buffer("num_batches_tracked", zeros({}));
}

Tensor BatchNorm::forward(const Tensor& x) {
  // [N, C] and [N, C, L] for 1d, as in PyTorch.
  const bool ok = dims_ == 2 ? (x.dim() == 2 || x.dim() == 3) : x.dim() == 4;
  if (!ok || x.shape()[1] != features_)
    throw ShapeError(type_name() + ": expected input [N, " + std::to_string(features_) +
                     (dims_ == 2 ? "] or [N, C, L]" : ", H, W]") + ", got " + to_string(x.shape()));
  if (is_training()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(full({}, 1.f, num_batches_tracked.device()));
  }
  return batch_norm(x, running_mean, running_var, weight, bias, is_training(), momentum_, eps_);
}

std::string BatchNorm::extra_repr() const {
  return std::to_string(features_) + ", eps=" + std::to_string(eps_) + ", momentum=" + std::to_string(momentum_) +
         ", affine=" + (weight.defined() ? "true" : "false");
}

LayerNorm::LayerNorm(int64_t n, float eps, bool affine) : features_(n), eps_(eps) {
  if (n < 1) throw ValueError("LayerNorm: normalized_shape must be positive, got " + std::to_string(n));
  if (affine) {
    weight = register_parameter("weight", ones({n}));
    bias = register_parameter("bias", zeros({n}));
  }
}

Tensor LayerNorm::forward(const Tensor& x) {
  if (x.dim() < 1 || x.shape().back() != features_)
    throw ShapeError("LayerNorm: expected input [..., " + std::to_string(features_) + "], got " + to_string(x.shape()));
  return layer_norm(x, weight, bias, eps_);
}

std::string LayerNorm::extra_repr() const {
  return std::to_string(features_) + ", eps=" + std::to_string(eps_) +
         ", elementwise_affine=" + (weight.defined() ? "true" : "false");
}

}  // namespace plexus::nn
