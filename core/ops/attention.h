#pragma once
// Fused attention, an op of its own (ops/attention.cpp) beside ops.h's.
#include <array>

#include "tensor/tensor.h"

namespace plexus {

// softmax(q·kᵀ / sqrt(D)) · v for q [N, ..., T, D] and k, v [N, ..., S, D] in one pass over tiles
// of keys: no [T, S] scores are stored, forward or backward (FlashAttention-2). `causal` (S = T):
// query i sees keys j <= i; key_lengths [N] (undefined = none, no gradient): the queries of
// example n see its first key_lengths[n] keys (at least 1). Needs S > 0 and D > 0.
// nn::functional::scaled_dot_product_attention calls it when there is no dropout on the weights.
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                       const Tensor& key_lengths = Tensor());

// fused_attention of a self-attention's heads straight from its packed projection: qkv [N, T,
// 3·H·D] holds q, k and v of each position, each as H heads of D, and the result is [N, T, H·D],
// heads side by side. Where the backend's kernels take strides no head is copied, forward or
// backward (the gradient is one [N, T, 3·H·D] tensor); elsewhere the heads are copied out dense.
Tensor fused_self_attention(const Tensor& qkv, int64_t heads, bool causal, const Tensor& key_lengths = Tensor());

// The packed projection qkv [N, T, 3·H·D] as q, k and v, each [N, H, T, D] (views), and back:
// merge_heads of [N, H, T, D] is [N, T, H·D], heads side by side.
std::array<Tensor, 3> split_heads(const Tensor& qkv, int64_t heads);
Tensor merge_heads(const Tensor& x);

}  // namespace plexus
