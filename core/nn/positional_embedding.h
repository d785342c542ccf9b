#pragma once
#include "nn/module.h"

namespace plexus::nn {

// Learned positions: forward(x [N, T, E]) = x + weight[:T], weight [max_len, E] starting
// N(0, 1) as nn::Embedding's does (what GPT-style models learn their positions from).
class PositionalEmbedding : public Module {
 public:
  PositionalEmbedding(int64_t max_len, int64_t embed_dim, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "PositionalEmbedding"; }
  std::string extra_repr() const override;

  Tensor weight;
};

}  // namespace plexus::nn
