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

// Fixed positions (Vaswani et al. 2017): forward(x [N, T, E]) = x + pe[:T], pe [max_len, E] with
// pe[p, 2i] = sin(p / 10000^(2i/E)) and pe[p, 2i+1] = cos(p / 10000^(2i/E)), as PyTorch's
// transformer tutorial builds it; a buffer "pe" (saved, as the tutorial's is), nothing learned.
class SinusoidalPositions : public Module {
 public:
  SinusoidalPositions(int64_t max_len, int64_t embed_dim);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "SinusoidalPositions"; }
  std::string extra_repr() const override;

  Tensor pe;
};

}  // namespace plexus::nn
