#pragma once
#include "nn/module.h"

namespace plexus::nn {

// y = x·Wᵀ + b. W [out, in] and b [out] start as PyTorch's: U(-1/sqrt(in), 1/sqrt(in)).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Linear"; }
  std::string extra_repr() const override;
  Tensor weight, bias;

 private:
  int64_t in_, out_;
};

// Rows of a [num, dim] table picked by whole-number indices; weight starts N(0, 1).
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, Generator* gen = nullptr);
  Tensor forward(const Tensor& indices) override;
  std::string type_name() const override { return "Embedding"; }
  std::string extra_repr() const override;
  Tensor weight;
};

}  // namespace plexus::nn
