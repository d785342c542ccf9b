#pragma once
// The CPU backend's fused attention (Backend::attention_forward / attention_backward,
// ops/backend.h): FlashAttention-2 over tiles of queries and keys, so no [t, s] matrix is ever
// stored. Batch rows (example × head) are split across the pool's threads; the tile products run
// through the backend's single-threaded matrix product.
#include "ops/backend.h"

namespace plexus::cpu {

void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       const Backend::AttentionProblem& p);
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q, const float* k,
                        const float* v, const float* out, const float* lse, const Backend::AttentionProblem& p);

}  // namespace plexus::cpu
