#pragma once
// The activations (PReLU learns its slopes; the others are stateless), Flatten, Dropout. Each
// forwards to its op.
#include <string>

#include "nn/module.h"
#include "ops/ops.h"

namespace plexus::nn {

#define PLEXUS_SIMPLE_MODULE(Name, expr)                              \
  class Name : public Module {                                        \
   public:                                                            \
    Tensor forward(const Tensor& x) override { return expr; }         \
    std::string type_name() const override { return #Name; }          \
  };
PLEXUS_SIMPLE_MODULE(ReLU, relu(x))
PLEXUS_SIMPLE_MODULE(Sigmoid, sigmoid(x))
PLEXUS_SIMPLE_MODULE(Tanh, tanh(x))
PLEXUS_SIMPLE_MODULE(GELU, gelu(x))
PLEXUS_SIMPLE_MODULE(SELU, selu(x))
PLEXUS_SIMPLE_MODULE(SiLU, silu(x))
PLEXUS_SIMPLE_MODULE(Mish, mish(x))
PLEXUS_SIMPLE_MODULE(Hardswish, hardswish(x))
PLEXUS_SIMPLE_MODULE(Hardsigmoid, hardsigmoid(x))
PLEXUS_SIMPLE_MODULE(Identity, x)
#undef PLEXUS_SIMPLE_MODULE

class LeakyReLU : public Module {
 public:
  explicit LeakyReLU(float negative_slope = 0.01f) : slope_(negative_slope) {}
  Tensor forward(const Tensor& x) override { return leaky_relu(x, slope_); }
  std::string type_name() const override { return "LeakyReLU"; }
  std::string extra_repr() const override { return "negative_slope=" + std::to_string(slope_); }

 private:
  float slope_;
};

class ELU : public Module {
 public:
  explicit ELU(float alpha = 1.f) : alpha_(alpha) {}
  Tensor forward(const Tensor& x) override { return elu(x, alpha_); }
  std::string type_name() const override { return "ELU"; }
  std::string extra_repr() const override { return "alpha=" + std::to_string(alpha_); }

 private:
  float alpha_;
};

// Learned slopes for negative inputs, named "weight" as PyTorch's: one for every channel, or
// one per channel (dim 1), each `init` at the start (PyTorch's PReLU(num_parameters, init)).
class PReLU : public Module {
 public:
  explicit PReLU(int64_t num_parameters = 1, float init = 0.25f);
  Tensor forward(const Tensor& x) override { return prelu(x, weight); }
  std::string type_name() const override { return "PReLU"; }
  std::string extra_repr() const override { return "num_parameters=" + std::to_string(weight.numel()); }

  Tensor weight;
};

class Softplus : public Module {
 public:
  explicit Softplus(float beta = 1.f, float threshold = 20.f) : beta_(beta), threshold_(threshold) {}
  Tensor forward(const Tensor& x) override { return softplus(x, beta_, threshold_); }
  std::string type_name() const override { return "Softplus"; }
  std::string extra_repr() const override { return "beta=" + std::to_string(beta_); }

 private:
  float beta_, threshold_;
};

class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim = -1) : dim_(dim) {}
  Tensor forward(const Tensor& x) override { return softmax(x, dim_); }
  std::string type_name() const override { return "Softmax"; }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }

 private:
  int64_t dim_;
};

class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int64_t dim = -1) : dim_(dim) {}
  Tensor forward(const Tensor& x) override { return log_softmax(x, dim_); }
  std::string type_name() const override { return "LogSoftmax"; }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }

 private:
  int64_t dim_;
};

// Flattens dims start..end (default: all but the batch dim).
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start = 1, int64_t end = -1) : start_(start), end_(end) {}
  Tensor forward(const Tensor& x) override { return flatten(x, start_, end_); }
  std::string type_name() const override { return "Flatten"; }

 private:
  int64_t start_, end_;
};

// Zeroes elements with probability p in training (scaling survivors by 1/(1-p)); identity in eval.
class Dropout : public Module {
 public:
  explicit Dropout(float p = 0.5f, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override { return dropout(x, p_, is_training(), gen_); }
  std::string type_name() const override { return "Dropout"; }
  std::string extra_repr() const override { return "p=" + std::to_string(p_); }
  float p() const { return p_; }
  Generator* generator() const { return gen_; }  // null: the default generator

 private:
  float p_;
  Generator* gen_;
};

// Zeroes whole channels of [N, C, H, W] with probability p in training (scaling the kept ones
// by 1/(1-p)); identity in eval.
class Dropout2d : public Module {
 public:
  explicit Dropout2d(float p = 0.5f, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override { return dropout2d(x, p_, is_training(), gen_); }
  std::string type_name() const override { return "Dropout2d"; }
  std::string extra_repr() const override { return "p=" + std::to_string(p_); }

 private:
  float p_;
  Generator* gen_;
};

}  // namespace plexus::nn
