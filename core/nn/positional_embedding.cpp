#include "nn/positional_embedding.h"

#include "nn/init.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus::nn {

PositionalEmbedding::PositionalEmbedding(int64_t max_len, int64_t embed_dim, Generator* gen) {
  if (max_len < 1 || embed_dim < 1)
    throw ValueError("PositionalEmbedding: max_len and embed_dim must be positive, got " + std::to_string(max_len) +
                     " and " + std::to_string(embed_dim));
  weight = register_parameter("weight", empty({max_len, embed_dim}));
  init::normal_(weight, 0.f, 1.f, gen);
}

Tensor PositionalEmbedding::forward(const Tensor& x) {
  const int64_t max_len = weight.shape()[0], e = weight.shape()[1];
  if (x.dim() != 3 || x.shape()[2] != e)
    throw ShapeError("PositionalEmbedding: expected input [N, T, " + std::to_string(e) + "], got " + to_string(x.shape()));
  const int64_t t = x.shape()[1];
  if (t > max_len)
    throw ShapeError("PositionalEmbedding: the sequence has T = " + std::to_string(t) + " positions but max_len is " +
                     std::to_string(max_len));
  return x + narrow(weight, 0, 0, t);
}

std::string PositionalEmbedding::extra_repr() const {
  return "max_len=" + std::to_string(weight.shape()[0]) + ", embed_dim=" + std::to_string(weight.shape()[1]);
}

}  // namespace plexus::nn
