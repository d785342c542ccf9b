#include "nn/normalization.h"

#include "autograd/grad_mode.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus::nn {

void Normalization::register_affine(int64_t n, Tensor& weight, Tensor& bias) {
  weight = register_parameter("weight", ones({n}));
  bias = register_parameter("bias", zeros({n}));
}

void Normalization::register_running_stats(int64_t n, Tensor& mean, Tensor& var, Tensor& batches) {
  mean = register_buffer("running_mean", zeros({n}));
  var = register_buffer("running_var", ones({n}));
  batches = register_buffer("num_batches_tracked", zeros({}));
}

BatchNorm::BatchNorm(int64_t n, int64_t dims, float eps, float momentum, bool affine, bool track_running_stats)
    : features_(n), dims_(dims), eps_(eps), momentum_(momentum) {
  if (n < 1) throw ValueError("BatchNorm: num_features must be positive");
  if (affine) register_affine(n, weight, bias);
  if (track_running_stats) register_running_stats(n, running_mean, running_var, num_batches_tracked);
}

Tensor BatchNorm::forward(const Tensor& x) {
  // [N, C] and [N, C, L] for 1d, as in PyTorch.
  const bool ok = dims_ == 2 ? (x.dim() == 2 || x.dim() == 3) : x.dim() == 4;
  if (!ok || x.shape()[1] != features_)
    throw ShapeError(type_name() + ": expected input [N, " + std::to_string(features_) +
                     (dims_ == 2 ? "] or [N, C, L]" : ", H, W]") + ", got " + to_string(x.shape()));
  if (is_training() && num_batches_tracked.defined()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(full({}, 1.f, num_batches_tracked.device()));
  }
  return batch_norm(x, running_mean, running_var, weight, bias, is_training(), momentum_, eps_);
}

std::string BatchNorm::extra_repr() const {
  return std::to_string(features_) + ", eps=" + std::to_string(eps_) + ", momentum=" + std::to_string(momentum_) +
         ", affine=" + (weight.defined() ? "true" : "false") +
         ", track_running_stats=" + (running_mean.defined() ? "true" : "false");
}

LayerNorm::LayerNorm(int64_t n, float eps, bool affine) : features_(n), eps_(eps) {
  if (n < 1) throw ValueError("LayerNorm: normalized_shape must be positive, got " + std::to_string(n));
  if (affine) register_affine(n, weight, bias);
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

GroupNorm::GroupNorm(int64_t groups, int64_t channels, float eps, bool affine)
    : groups_(groups), channels_(channels), eps_(eps) {
  if (groups < 1 || channels < 1 || channels % groups != 0)
    throw ValueError("GroupNorm: num_groups " + std::to_string(groups) + " must divide num_channels " +
                     std::to_string(channels) + " (both positive)");
  if (affine) register_affine(channels, weight, bias);
}

Tensor GroupNorm::forward(const Tensor& x) {
  if (x.dim() < 2 || x.shape()[1] != channels_)
    throw ShapeError("GroupNorm: expected input [N, " + std::to_string(channels_) + ", *], got " +
                     to_string(x.shape()));
  return group_norm(x, groups_, weight, bias, eps_);
}

std::string GroupNorm::extra_repr() const {
  return std::to_string(groups_) + ", " + std::to_string(channels_) + ", eps=" + std::to_string(eps_) +
         ", affine=" + (weight.defined() ? "true" : "false");
}

InstanceNorm2d::InstanceNorm2d(int64_t n, float eps, float momentum, bool affine, bool track_running_stats)
    : features_(n), eps_(eps), momentum_(momentum) {
  if (n < 1) throw ValueError("InstanceNorm2d: num_features must be positive, got " + std::to_string(n));
  if (affine) register_affine(n, weight, bias);
  if (track_running_stats) register_running_stats(n, running_mean, running_var, num_batches_tracked);
}

Tensor InstanceNorm2d::forward(const Tensor& x) {
  if (x.dim() != 4 || x.shape()[1] != features_)
    throw ShapeError("InstanceNorm2d: expected input [N, " + std::to_string(features_) + ", H, W], got " +
                     to_string(x.shape()));
  // PyTorch's rule: the input's statistics unless evaluating with running ones (which
  // num_batches_tracked does not count for instance norm).
  return instance_norm(x, running_mean, running_var, weight, bias, is_training() || !running_mean.defined(), momentum_,
                       eps_);
}

std::string InstanceNorm2d::extra_repr() const {
  return std::to_string(features_) + ", eps=" + std::to_string(eps_) + ", momentum=" + std::to_string(momentum_) +
         ", affine=" + (weight.defined() ? "true" : "false") +
         ", track_running_stats=" + (running_mean.defined() ? "true" : "false");
}

RMSNorm::RMSNorm(int64_t n, float eps, bool affine) : features_(n), eps_(eps) {
  if (n < 1) throw ValueError("RMSNorm: normalized_shape must be positive, got " + std::to_string(n));
  if (affine) weight = register_parameter("weight", ones({n}));
}

Tensor RMSNorm::forward(const Tensor& x) {
  if (x.dim() < 1 || x.shape().back() != features_)
    throw ShapeError("RMSNorm: expected input [..., " + std::to_string(features_) + "], got " + to_string(x.shape()));
  return rms_norm(x, weight, eps_);
}

std::string RMSNorm::extra_repr() const {
  return std::to_string(features_) + ", eps=" + std::to_string(eps_) +
         ", elementwise_affine=" + (weight.defined() ? "true" : "false");
}

}  // namespace plexus::nn
