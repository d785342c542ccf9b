#pragma once
// Self-attention: scaled dot-product attention and multi-head self-attention with PyTorch's
// parameter layout, so weights move between the two by name.
#include <array>

#include "nn/linear.h"
#include "nn/module.h"

namespace plexus::nn {

namespace functional {
// softmax(q·kᵀ / sqrt(D)) · v over q [N, ..., T, D] and k, v [N, ..., S, D]; `causal` (S = T)
// lets query i see keys j <= i only (causal_softmax); `key_lengths` [N], when defined, lets the
// queries of example n see its first key_lengths[n] keys only (the rest is padding; an empty
// sequence counts as length 1, so no query attends to nothing); dropout with p = dropout_p on
// the attention weights while training. Without that dropout, one fused op (see below).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                                    const Tensor& key_lengths = Tensor(), float dropout_p = 0.f, bool training = false,
                                    Generator* gen = nullptr);
// Its attention weights [N, ..., T, S] (before dropout): each query's softmax over the keys it sees.
Tensor attention_weights(const Tensor& q, const Tensor& k, bool causal, const Tensor& key_lengths = Tensor());
// Whether scaled_dot_product_attention runs as one fused op (fused_attention, ops/ops.h: no
// [T, S] matrix) where it can: q with a batch dim and no dropout on the weights (p = 0 or not
// training). On by default; PLEXUS_ATTENTION=unfused in the environment turns it off at start, so
// a benchmark or a test can compare the two paths. Process-wide.
void set_fused_attention(bool enabled);
bool fused_attention_enabled();
}  // namespace functional

// Multi-head attention, batch first, as torch.nn.MultiheadAttention(E, num_heads, dropout,
// batch_first=True): in_proj_weight [3E, E] and in_proj_bias [3E] project the queries, keys and
// values (rows [0, E), [E, 2E), [2E, 3E)), heads of E / num_heads, and the child Linear
// "out_proj" [E, E] joins them. forward(x) is self-attention (query = key = value = x, the three
// projections in one product); forward(query, key, value) attends from query [N, T, E] to
// key/value [N, S, E], cross-attention, over each example's first key_lengths[n] keys when
// key_lengths [N] is defined (torch's key_padding_mask). Initialised as torch 1.13 does: xavier-uniform
// in_proj_weight, zero biases, out_proj.weight as Linear's default.
class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, bool causal = false, float dropout = 0.f,
                     Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  Tensor forward(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_lengths = Tensor());
  // The weights [N, H, T, S] forward(query, key, key, key_lengths) attends with, per head: each
  // query's softmax over the keys (causal and padding masks as forward applies them, no dropout).
  // Self-attention: attention_weights(x, x).
  Tensor attention_weights(const Tensor& query, const Tensor& key, const Tensor& key_lengths = Tensor()) const;
  std::string type_name() const override { return "MultiheadAttention"; }
  std::string extra_repr() const override;

  Tensor in_proj_weight, in_proj_bias;
  std::shared_ptr<Linear> out_proj;

 private:
  void check_input(const Tensor& x, const char* role) const;
  // The queries [N, H, T, D], keys and values [N, H, S, D] by heads: in_proj's three parts.
  std::array<Tensor, 3> heads(const Tensor& query, const Tensor& key, const Tensor& value) const;
  // q [N, H, T, D], k and v [N, H, S, D] attended and joined by out_proj into [N, T, E].
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_lengths);
  int64_t embed_dim_, num_heads_;
  bool causal_;
  float dropout_;
  Generator* gen_;
};

}  // namespace plexus::nn
