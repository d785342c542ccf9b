#pragma once
// The CPU backend's batch norm (Backend::batch_norm_*, ops/backend.h): x is [n, c, s],
// channels across the pool's threads, sums in double.
#include <cstdint>

namespace plexus::cpu {

void batch_norm_stats(float* mean, float* var, float* invstd, const float* x, int64_t n, int64_t c, int64_t s,
                      float eps);
void batch_norm_apply(float* y, const float* x, const float* mean, const float* invstd, const float* weight,
                      const float* bias, int64_t n, int64_t c, int64_t s);
void batch_norm_backward_reduce(float* sum_dy, float* sum_dy_xhat, const float* dy, const float* x, const float* mean,
                                const float* invstd, int64_t n, int64_t c, int64_t s);
void batch_norm_backward_input(float* dx, const float* dy, const float* x, const float* mean, const float* invstd,
                               const float* weight, const float* sum_dy, const float* sum_dy_xhat, int64_t n,
                               int64_t c, int64_t s);

}  // namespace plexus::cpu
