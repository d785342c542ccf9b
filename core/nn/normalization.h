#pragma once
#include "nn/module.h"

namespace plexus::nn {

// Batch normalisation over the channel dim 1 of [N, C] (1d) or [N, C, H, W] (2d). Training
// normalises with batch statistics and updates running_mean / running_var (buffers); eval
// uses the running ones.
class BatchNorm : public Module {
 public:
  BatchNorm(int64_t num_features, int64_t expected_dims, float eps = 1e-5f, float momentum = 0.1f,
            bool affine = true);
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
  explicit BatchNorm1d(int64_t n, float eps = 1e-5f, float momentum = 0.1f, bool affine = true)
      : BatchNorm(n, 2, eps, momentum, affine) {}
};

class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t n, float eps = 1e-5f, float momentum = 0.1f, bool affine = true)
      : BatchNorm(n, 4, eps, momentum, affine) {}
};

// Layer normalisation over the last dim (normalized_shape = [D], as PyTorch's LayerNorm(D)):
// each row to mean 0 and variance 1, then * weight + bias ([D], ones and zeros at the start).
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t normalized_shape, float eps = 1e-5f, bool elementwise_affine = true);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "LayerNorm"; }
  std::string extra_repr() const override;

  Tensor weight, bias;

 private:
  int64_t features_;
  float eps_;
};

}  // namespace plexus::nn
