#pragma once
// The CPU backend's layer norm (Backend::layer_norm*, ops/backend.h): x is [rows, d], rows
// across the pool's threads, each row's sums in double.
#include <cstdint>

namespace plexus::cpu {

void layer_norm(float* y, float* mean, float* invstd, const float* x, const float* weight, const float* bias,
                int64_t rows, int64_t d, float eps);
void layer_norm_backward(float* dx, const float* dy, const float* x, const float* mean, const float* invstd,
                         const float* weight, int64_t rows, int64_t d);

}  // namespace plexus::cpu
