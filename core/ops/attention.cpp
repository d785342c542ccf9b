// Fused attention (ops/attention.h) and its derivative: the backend kernels keep each
// query's log-sum-exp from the forward and recompute the weights tile by tile in the backward
// (FlashAttention-2), so memory grows with T·D, not T·S.
#include "ops/attention.h"

#include <cmath>

#include "autograd/node.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus {
namespace {

void check_key_lengths(const char* op, const Tensor& key_lengths, int64_t n) {
  if (key_lengths.defined() && key_lengths.shape() != Shape{n})
    throw ShapeError(std::string(op) + ": expected key_lengths [" + std::to_string(n) + "], one per example, got " +
                     to_string(key_lengths.shape()));
}

}  // namespace

std::array<Tensor, 3> split_heads(const Tensor& qkv, int64_t heads) {
  const int64_t n = qkv.shape()[0], t = qkv.shape()[1], d = qkv.shape()[2] / 3 / heads;
  const Tensor split = qkv.reshape({n, t, 3, heads, d}).permute({2, 0, 3, 1, 4});
  auto part = [&split](int64_t i) { return squeeze(narrow(split, 0, i, 1), 0); };
  return {part(0), part(1), part(2)};
}

Tensor merge_heads(const Tensor& x) {
  const int64_t n = x.shape()[0], h = x.shape()[1], t = x.shape()[2], d = x.shape()[3];
  return x.permute({0, 2, 1, 3}).reshape({n, t, h * d});
}

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, const Tensor& key_lengths) {
  const int64_t rank = q.dim();
  const bool shapes_ok = rank >= 3 && k.shape() == v.shape() && k.dim() == rank &&
                         std::equal(q.shape().begin(), q.shape().end() - 2, k.shape().begin()) &&
                         q.shape().back() == k.shape().back() &&
                         (!causal || q.shape()[rank - 2] == k.shape()[rank - 2]);
  if (!shapes_ok)
    throw ShapeError(std::string("fused_attention: expected q [N, ..., T, D] and k, v [N, ..., S, D]") +
                     (causal ? " with S = T (causal)" : "") + ", got " + to_string(q.shape()) + ", " +
                     to_string(k.shape()) + ", " + to_string(v.shape()));
  check_key_lengths("fused_attention", key_lengths, q.shape()[0]);
  check_same_device("fused_attention", {q, k, v, key_lengths});
  const int64_t t = q.shape()[rank - 2], s = k.shape()[rank - 2], d = q.shape().back();
  const int64_t batch = numel(Shape(q.shape().begin(), q.shape().end() - 2));
  Tensor out = zeros(q.shape(), q.device());
  if (batch == 0 || t == 0) return out;
  if (s == 0 || d == 0)
    throw ShapeError("fused_attention: expected at least one key and D > 0, got k " + to_string(k.shape()));
  const Tensor lengths = key_lengths.defined() ? contiguous_data(key_lengths) : Tensor();
  const Backend::AttentionProblem p{batch,
                                    t,
                                    s,
                                    d,
                                    1.f / std::sqrt(float(d)),
                                    causal,
                                    lengths.defined() ? lengths.data() : nullptr,
                                    batch / q.shape()[0],
                                    1,
                                    {t * d, 0, d},
                                    {s * d, 0, d},
                                    {t * d, 0, d}};
  const Tensor qc = contiguous_data(q), kc = contiguous_data(k), vc = contiguous_data(v);
  Tensor lse = empty({batch, t}, q.device());
  backend(q.device()).attention_forward(out.data(), lse.data(), qc.data(), kc.data(), vc.data(), p);
  if (needs_grad(q, k, v))
    record(
        out, "fused_attention", {q, k, v},
        [sq = Saved(qc), sk = Saved(kc), sv = Saved(vc), so = Saved(out), lse, lengths, p](const Tensor& g) -> Grads {
          const Tensor dout = contiguous_data(g), qv = sq.get(), kv = sk.get(), vv = sv.get(), ov = so.get();
          Tensor dq = empty(qv.shape(), g.device()), dk = empty(kv.shape(), g.device()),
                 dv = empty(vv.shape(), g.device());
          backend(g.device())
              .attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), qv.data(), kv.data(), vv.data(),
                                  ov.data(), lse.data(), p);
          return {dq, dk, dv};
        });
  return out;
}

Tensor fused_self_attention(const Tensor& qkv, int64_t heads, bool causal, const Tensor& key_lengths) {
  if (qkv.dim() != 3 || heads < 1 || qkv.shape()[2] % (3 * heads) != 0 || qkv.shape()[2] == 0)
    throw ShapeError("fused_self_attention: expected qkv [N, T, 3·H·D] for " + std::to_string(heads) +
                     " heads, got " + to_string(qkv.shape()));
  const int64_t n = qkv.shape()[0], t = qkv.shape()[1], width = qkv.shape()[2] / 3, d = width / heads;
  Backend& be = backend(qkv.device());
  if (!be.strided_attention()) {  // each head of q, k and v copied out dense, and the result back
    const auto [q, k, v] = split_heads(qkv, heads);
    return merge_heads(fused_attention(q, k, v, causal, key_lengths));
  }
  check_key_lengths("fused_self_attention", key_lengths, n);
  check_same_device("fused_self_attention", {qkv, key_lengths});
  if (n == 0 || t == 0) return zeros({n, t, width}, qkv.device());
  const Tensor lengths = key_lengths.defined() ? contiguous_data(key_lengths) : Tensor();
  // Batch row n·H + h reads head h of example n where the projection wrote it.
  const Backend::AttentionStrides packed{t * 3 * width, d, 3 * width};
  const Backend::AttentionProblem p{n * heads,
                                    t,
                                    t,
                                    d,
                                    1.f / std::sqrt(float(d)),
                                    causal,
                                    lengths.defined() ? lengths.data() : nullptr,
                                    heads,
                                    heads,
                                    packed,
                                    packed,
                                    {t * width, d, width}};
  const Tensor in = contiguous_data(qkv);
  Tensor out = empty({n, t, width}, qkv.device());
  Tensor lse = empty({n * heads, t}, qkv.device());
  const float* x = in.data();
  be.attention_forward(out.data(), lse.data(), x, x + width, x + 2 * width, p);
  if (needs_grad(qkv))
    record(out, "fused_self_attention", {qkv},
           [sin = Saved(in), so = Saved(out), lse, lengths, p, width](const Tensor& g) -> Grads {
             const Tensor dout = contiguous_data(g), xv = sin.get();
             Tensor dx = empty(xv.shape(), g.device());
             const float* x = xv.data();
             float* dxp = dx.data();
             backend(g.device())
                 .attention_backward(dxp, dxp + width, dxp + 2 * width, dout.data(), x, x + width, x + 2 * width,
                                     so.get().data(), lse.data(), p);
             return {dx};
           });
  return out;
}

}  // namespace plexus
