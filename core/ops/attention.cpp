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
  if (key_lengths.defined() && key_lengths.shape() != Shape{q.shape()[0]})
    throw ShapeError("fused_attention: expected key_lengths [" + std::to_string(q.shape()[0]) +
                     "], one per example, got " + to_string(key_lengths.shape()));
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
                                    batch / q.shape()[0]};
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

}  // namespace plexus
