#include "nn/attention.h"

#include <cmath>

#include "nn/functional.h"
#include "nn/init.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus::nn {

Tensor functional::scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                                                float dropout_p, bool training, Generator* gen) {
  if (q.dim() < 2 || q.shape() != k.shape() || q.shape() != v.shape())
    throw ShapeError("scaled_dot_product_attention: expected q, k, v of one shape [..., T, D], got " +
                     to_string(q.shape()) + ", " + to_string(k.shape()) + ", " + to_string(v.shape()));
  const float scale = 1.f / std::sqrt(float(q.shape().back()));
  const Tensor scores = matmul(q, k.transpose(-2, -1)) * scale;  // [..., T, T]
  const Tensor weights = causal ? causal_softmax(scores) : softmax(scores, -1);
  return matmul(dropout(weights, dropout_p, training, gen), v);
}

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, bool causal, float dropout, Generator* gen)
    : embed_dim_(embed_dim), num_heads_(num_heads), causal_(causal), dropout_(dropout), gen_(gen) {
  if (embed_dim < 1 || num_heads < 1 || embed_dim % num_heads != 0)
    throw ValueError("MultiheadAttention: embed_dim (" + std::to_string(embed_dim) +
                     ") must be a positive multiple of num_heads (" + std::to_string(num_heads) + ")");
  if (!(dropout >= 0.f && dropout < 1.f))
    throw ValueError("MultiheadAttention: dropout must be in [0, 1), got " + std::to_string(dropout));
  in_proj_weight = register_parameter("in_proj_weight", empty({3 * embed_dim, embed_dim}));
  init::xavier_uniform_(in_proj_weight, 1.f, gen);
  in_proj_bias = register_parameter("in_proj_bias", zeros({3 * embed_dim}));
  out_proj = register_module("out_proj", std::make_shared<Linear>(embed_dim, embed_dim, true, gen));
  init::constant_(out_proj->bias, 0.f);
}

Tensor MultiheadAttention::forward(const Tensor& x) {
  if (x.dim() != 3 || x.shape()[2] != embed_dim_)
    throw ShapeError("MultiheadAttention: expected input [N, T, " + std::to_string(embed_dim_) + "] (batch first), got " +
                     to_string(x.shape()));
  const int64_t n = x.shape()[0], t = x.shape()[1], h = num_heads_, d = embed_dim_ / num_heads_;
  // [N, T, 3E] -> [3, N, H, T, D]: q, k and v by heads.
  const Tensor qkv = functional::linear(x, in_proj_weight, in_proj_bias).view({n, t, 3, h, d}).permute({2, 0, 3, 1, 4});
  auto part = [&qkv](int64_t i) { return squeeze(narrow(qkv, 0, i, 1), 0); };
  const Tensor heads =
      functional::scaled_dot_product_attention(part(0), part(1), part(2), causal_, dropout_, is_training(), gen_);
  return out_proj->forward(heads.permute({0, 2, 1, 3}).reshape({n, t, embed_dim_}));
}

std::string MultiheadAttention::extra_repr() const {
  return "embed_dim=" + std::to_string(embed_dim_) + ", num_heads=" + std::to_string(num_heads_) +
         ", causal=" + (causal_ ? "true" : "false") + ", dropout=" + std::to_string(dropout_);
}

}  // namespace plexus::nn
