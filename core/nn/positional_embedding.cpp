#include "nn/positional_embedding.h"

#include <cmath>

#include "nn/init.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus::nn {

namespace {
// x + table[:T] for x [N, T, E] and table [max_len, E], naming `who` in its messages.
Tensor add_positions(const Tensor& x, const Tensor& table, const char* who) {
  const int64_t max_len = table.shape()[0], e = table.shape()[1];
  if (x.dim() != 3 || x.shape()[2] != e)
    throw ShapeError(std::string(who) + ": expected input [N, T, " + std::to_string(e) + "], got " +
                     to_string(x.shape()));
  const int64_t t = x.shape()[1];
  if (t > max_len)
    throw ShapeError(std::string(who) + ": the sequence has T = " + std::to_string(t) + " positions but max_len is " +
                     std::to_string(max_len));
  return x + narrow(table, 0, 0, t);
}

std::string sizes(const Tensor& table) {
  return "max_len=" + std::to_string(table.shape()[0]) + ", embed_dim=" + std::to_string(table.shape()[1]);
}

void check_sizes(int64_t max_len, int64_t embed_dim, const char* who) {
  if (max_len < 1 || embed_dim < 1)
    throw ValueError(std::string(who) + ": max_len and embed_dim must be positive, got " + std::to_string(max_len) +
                     " and " + std::to_string(embed_dim));
}
}  // namespace

PositionalEmbedding::PositionalEmbedding(int64_t max_len, int64_t embed_dim, Generator* gen) {
  check_sizes(max_len, embed_dim, "PositionalEmbedding");
  weight = register_parameter("weight", empty({max_len, embed_dim}));
  init::normal_(weight, 0.f, 1.f, gen);
}

Tensor PositionalEmbedding::forward(const Tensor& x) { return add_positions(x, weight, "PositionalEmbedding"); }

std::string PositionalEmbedding::extra_repr() const { return sizes(weight); }

SinusoidalPositions::SinusoidalPositions(int64_t max_len, int64_t embed_dim) {
  check_sizes(max_len, embed_dim, "SinusoidalPositions");
  Tensor table = empty({max_len, embed_dim});
  float* out = table.data();
  for (int64_t p = 0; p < max_len; ++p)
    for (int64_t j = 0; j < embed_dim; ++j) {
      // The frequency of the pair (2i, 2i+1) that column j belongs to, in double: positions run
      // to 2^24, where float angles would lose every digit.
      const double angle = double(p) * std::exp(double(j - j % 2) * (-std::log(10000.0) / double(embed_dim)));
      out[p * embed_dim + j] = float(j % 2 ? std::cos(angle) : std::sin(angle));
    }
  pe = register_buffer("pe", table);
}

Tensor SinusoidalPositions::forward(const Tensor& x) { return add_positions(x, pe, "SinusoidalPositions"); }

std::string SinusoidalPositions::extra_repr() const { return sizes(pe); }

}  // namespace plexus::nn
