#pragma once
#include "nn/module.h"

namespace plexus::nn {

// What the normalisation layers share: PyTorch's affine parameters (weight ones, bias zeros)
// and running-statistics buffers, each [n], registered under PyTorch's names.
class Normalization : public Module {
 protected:
  void register_affine(int64_t n, Tensor& weight, Tensor& bias);
  void register_running_stats(int64_t n, Tensor& mean, Tensor& var, Tensor& batches);
};

// Batch normalisation over the channel dim 1 of [N, C] (1d) or [N, C, H, W] (2d). Training
// normalises with batch statistics and updates running_mean / running_var (buffers); eval
// uses the running ones. Without track_running_stats there are no buffers and the batch
// statistics normalise in eval too; without affine, no weight and bias (as PyTorch).
class BatchNorm : public Normalization {
 public:
  BatchNorm(int64_t num_features, int64_t expected_dims, float eps = 1e-5f, float momentum = 0.1f,
            bool affine = true, bool track_running_stats = true);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return dims_ == 2 ? "BatchNorm1d" : "BatchNorm2d"; }
  std::string extra_repr() const override;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int64_t features_, dims_;
  float eps_, momentum_;
};

class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t n, float eps = 1e-5f, float momentum = 0.1f, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm(n, 2, eps, momentum, affine, track_running_stats) {}
};

class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t n, float eps = 1e-5f, float momentum = 0.1f, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm(n, 4, eps, momentum, affine, track_running_stats) {}
};

// Layer normalisation over the last dim (normalized_shape = [D], as PyTorch's LayerNorm(D)):
// each row to mean 0 and variance 1, then * weight + bias ([D], ones and zeros at the start).
class LayerNorm : public Normalization {
 public:
  explicit LayerNorm(int64_t normalized_shape, float eps = 1e-5f, bool elementwise_affine = true);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "LayerNorm"; }
  std::string extra_repr() const override;
  float eps() const { return eps_; }

  Tensor weight, bias;

 private:
  int64_t features_;
  float eps_;
};

// Group normalisation of [N, C, *] (PyTorch's GroupNorm(num_groups, num_channels)): each
// example's channels in num_groups groups, each group to mean 0 and variance 1 over its values,
// then * weight + bias ([C], ones and zeros at the start) when affine.
class GroupNorm : public Normalization {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, float eps = 1e-5f, bool affine = true);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "GroupNorm"; }
  std::string extra_repr() const override;

  Tensor weight, bias;

 private:
  int64_t groups_, channels_;
  float eps_;
};

// Instance normalisation of [N, C, H, W] (PyTorch's InstanceNorm2d, affine and
// track_running_stats off by default): each (example, channel) over its positions. With
// track_running_stats, training also updates running_mean / running_var and eval uses them.
class InstanceNorm2d : public Normalization {
 public:
  explicit InstanceNorm2d(int64_t num_features, float eps = 1e-5f, float momentum = 0.1f, bool affine = false,
                          bool track_running_stats = false);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "InstanceNorm2d"; }
  std::string extra_repr() const override;

  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int64_t features_;
  float eps_, momentum_;
};

// Root-mean-square normalisation over the last dim (PyTorch 2.4's RMSNorm(D)): x divided by
// sqrt(mean(x²) + eps), then * weight ([D], ones at the start) when elementwise_affine. PyTorch's
// eps=None is float32's machine epsilon, the default here.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t normalized_shape, float eps = 1.1920929e-07f, bool elementwise_affine = true);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "RMSNorm"; }
  std::string extra_repr() const override;

  Tensor weight;

 private:
  int64_t features_;
  float eps_;
};

}  // namespace plexus::nn
