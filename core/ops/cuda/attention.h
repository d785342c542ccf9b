#pragma once
// Fused attention on a CUDA device (Backend::attention_forward / attention_backward,
// ops/backend.h), FP32, for head sizes up to kMaxAttentionDim: per (batch row, block of queries)
// an online softmax over tiles of keys staged in shared memory; the backward recomputes the
// weights from the saved log-sum-exp, one pass for dK and dV (a thread per key) and one for dQ
// (a thread per query), so there are no atomics and no [t, s] buffer. Host code only.
#include "ops/backend.h"

namespace plexus::cuda {

constexpr int64_t kMaxAttentionDim = 128;

void attention_forward(int device, float* out, float* lse, const float* q, const float* k, const float* v,
                       const Backend::AttentionProblem& p);
void attention_backward(int device, float* dq, float* dk, float* dv, const float* dout, const float* q, const float* k,
                        const float* v, const float* out, const float* lse, const Backend::AttentionProblem& p);

}  // namespace plexus::cuda
