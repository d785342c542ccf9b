#include "nn/attention.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <limits>

#include "autograd/grad_mode.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "ops/backend.h"
#include "ops/attention.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus::nn {

namespace {
// The shapes both paths of scaled_dot_product_attention expect (q [..., T, D], k [..., S, D],
// key_lengths [N]), named as the user called it.
void check_attention_shapes(const Tensor& q, const Tensor& k, bool causal, const Tensor& key_lengths) {
  const auto batch = [](const Tensor& t) { return Shape(t.shape().begin(), t.shape().end() - 2); };
  if (q.dim() < 2 || k.dim() != q.dim() || batch(q) != batch(k) || q.shape().back() != k.shape().back() ||
      (causal && q.shape()[q.dim() - 2] != k.shape()[k.dim() - 2]))
    throw ShapeError(std::string("scaled_dot_product_attention: expected q [..., T, D] and k [..., S, D]") +
                     (causal ? " with S = T (causal)" : "") + ", got " + to_string(q.shape()) + ", " +
                     to_string(k.shape()));
  if (key_lengths.defined() && key_lengths.shape() != Shape{q.shape()[0]})
    throw ShapeError("scaled_dot_product_attention: expected key_lengths [" + std::to_string(q.shape()[0]) +
                     "], one per example, got " + to_string(key_lengths.shape()));
}

// Whether attention over `keys` keys with heads of D = d runs as one fused op on `device`: the
// fused kernels need keys, 0 < D <= the device's limit and no dropout on the weights.
bool takes_fused_path(Device device, int64_t keys, int64_t d, float dropout_p, bool training) {
  return functional::fused_attention_enabled() && keys > 0 && d > 0 &&
         d <= backend(device).max_fused_attention_dim() && (dropout_p == 0.f || !training);
}
}  // namespace

Tensor functional::attention_weights(const Tensor& q, const Tensor& k, bool causal, const Tensor& key_lengths) {
  check_attention_shapes(q, k, causal, key_lengths);
  const int64_t keys = k.shape()[k.dim() - 2];
  const float scale = 1.f / std::sqrt(float(q.shape().back()));
  Tensor scores = matmul(q, k.transpose(-2, -1)) * scale;  // [..., T, S]
  if (key_lengths.defined()) {
    // 0 for each example's keys, -inf for its padding: [N, 1, ..., 1, S], added to every query's scores.
    Tensor padding;
    {
      NoGradGuard no_grad;
      Shape per_example(size_t(q.dim()), 1);
      per_example[0] = q.shape()[0];
      per_example.back() = keys;
      const Tensor length = unsqueeze(clamp(key_lengths, 1.f, std::nullopt), 1);
      const Tensor valid = lt(arange(keys).to(q.device()).reshape({1, keys}), length);
      padding = where(valid, zeros({}, q.device()), full({}, -std::numeric_limits<float>::infinity(), q.device()))
                    .reshape(per_example);
    }
    scores = scores + padding;
  }
  return causal ? causal_softmax(scores) : softmax(scores, -1);
}

Tensor functional::scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                                                const Tensor& key_lengths, float dropout_p, bool training,
                                                Generator* gen) {
  if (k.shape() != v.shape())
    throw ShapeError(std::string("scaled_dot_product_attention: expected q [..., T, D] and k, v [..., S, D]") +
                     (causal ? " with S = T (causal)" : "") + ", got " + to_string(q.shape()) + ", " +
                     to_string(k.shape()) + ", " + to_string(v.shape()));
  check_attention_shapes(q, k, causal, key_lengths);
  // The fused kernels need a batch dim too (key_lengths index it).
  if (q.dim() >= 3 && takes_fused_path(q.device(), k.shape()[k.dim() - 2], q.shape().back(), dropout_p, training))
    return fused_attention(q, k, v, causal, key_lengths);
  const Tensor weights = attention_weights(q, k, causal, key_lengths);
  return matmul(dropout(weights, dropout_p, training, gen), v);
}

namespace {
std::atomic<bool>& fused_attention_switch() {
  static std::atomic<bool> on{[] {
    const char* e = std::getenv("PLEXUS_ATTENTION");
    return !(e && std::strcmp(e, "unfused") == 0);
  }()};
  return on;
}
}  // namespace

void functional::set_fused_attention(bool enabled) { fused_attention_switch() = enabled; }
bool functional::fused_attention_enabled() { return fused_attention_switch(); }

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

void MultiheadAttention::check_input(const Tensor& x, const char* role) const {
  if (x.dim() != 3 || x.shape()[2] != embed_dim_)
    throw ShapeError(std::string("MultiheadAttention: expected ") + role + " [N, T, " + std::to_string(embed_dim_) +
                     "] (batch first), got " + to_string(x.shape()));
}

Tensor MultiheadAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_lengths) {
  const Tensor heads =
      functional::scaled_dot_product_attention(q, k, v, causal_, key_lengths, dropout_, is_training(), gen_);
  return out_proj->forward(merge_heads(heads));
}

Tensor MultiheadAttention::forward(const Tensor& x) { return forward(x, x, x); }

Tensor MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const Tensor& key_lengths) {
  const int64_t d = embed_dim_ / num_heads_;
  if (query.is_same(key) && key.is_same(value) && query.dim() == 3 &&
      takes_fused_path(query.device(), query.shape()[1], d, dropout_, is_training())) {
    // Self-attention fused from the one projection of q, k and v: no head copied out and back.
    check_input(query, "query");
    const Tensor qkv = functional::linear(query, in_proj_weight, in_proj_bias);
    return out_proj->forward(fused_self_attention(qkv, num_heads_, causal_, key_lengths));
  }
  const auto [q, k, v] = heads(query, key, value);
  return attend(q, k, v, key_lengths);
}

Tensor MultiheadAttention::attention_weights(const Tensor& query, const Tensor& key, const Tensor& key_lengths) const {
  const std::array<Tensor, 3> qkv = heads(query, key, key);
  return functional::attention_weights(qkv[0], qkv[1], causal_, key_lengths);
}

std::array<Tensor, 3> MultiheadAttention::heads(const Tensor& query, const Tensor& key, const Tensor& value) const {
  check_input(query, "query");
  const int64_t h = num_heads_, d = embed_dim_ / num_heads_;
  if (query.is_same(key) && key.is_same(value)) {
    // Self-attention: q, k and v by heads from one product [N, T, 3E].
    return split_heads(functional::linear(query, in_proj_weight, in_proj_bias), h);
  }
  check_input(key, "key");
  check_input(value, "value");
  if (key.shape()[0] != query.shape()[0] || value.shape() != key.shape())
    throw ShapeError("MultiheadAttention: expected key and value of one shape [N, S, E] with the query's N, got query " +
                     to_string(query.shape()) + ", key " + to_string(key.shape()) + ", value " + to_string(value.shape()));
  // Rows [i·E, (i+1)·E) of in_proj project part i, to [N, H, length, D].
  auto project = [&](const Tensor& x, int64_t i) {
    const Tensor w = narrow(in_proj_weight, 0, i * embed_dim_, embed_dim_);
    const Tensor b = narrow(in_proj_bias, 0, i * embed_dim_, embed_dim_);
    return functional::linear(x, w, b).view({x.shape()[0], x.shape()[1], h, d}).permute({0, 2, 1, 3});
  };
  return {project(query, 0), project(key, 1), project(value, 2)};
}

std::string MultiheadAttention::extra_repr() const {
  return "embed_dim=" + std::to_string(embed_dim_) + ", num_heads=" + std::to_string(num_heads_) +
         ", causal=" + (causal_ ? "true" : "false") + ", dropout=" + std::to_string(dropout_);
}

}  // namespace plexus::nn
