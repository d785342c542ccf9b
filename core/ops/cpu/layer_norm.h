#pragma once
// The CPU backend's layer norm (Backend::layer_norm*, ops/backend.h): x is [rows, d], rows
// across the pool's threads, each row's sums in double.
#include <algorithm>
#include <cstdint>

#include "util/parallel.h"

namespace plexus::cpu {

// f(r) for each row of [rows, d], rows split across threads, each chunk about 2^15 values.
template <class F>
void each_row(int64_t rows, int64_t d, F&& f) {
  parallel_for(rows, std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(1, d)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) f(r);
  });
}

void layer_norm(float* y, float* mean, float* invstd, const float* x, const float* weight, const float* bias,
                int64_t rows, int64_t d, float eps);
// One row of it: y, its mean and invstd from x [d] (the fused residual step's, ops/cpu/residual.cpp).
void layer_norm_row(float* y, float* mean, float* invstd, const float* x, const float* weight, const float* bias,
                    int64_t d, float eps);
void layer_norm_backward(float* dx, const float* dy, const float* x, const float* mean, const float* invstd,
                         const float* weight, int64_t rows, int64_t d);
// The affine parameters' gradients in one pass: gw = Σ_rows dy·xhat, gb = Σ_rows dy (either may
// be null), in double per chunk of rows, the chunks added in order.
void layer_norm_param_grads(float* gw, float* gb, const float* dy, const float* x, const float* mean,
                            const float* invstd, int64_t rows, int64_t d);

}  // namespace plexus::cpu
