#pragma once
// GELU x·Φ(x) (the exact, erf form) and its derivative Φ(x) + x·φ(x) over contiguous arrays,
// vectorised: a call into libm's erff per element made GELU 7 % of a transformer's step. Within
// a few ulp of the exact values (tests/core/ops/test_gelu.cpp); ±inf and NaN give what
// math::gelu and math::gelu_grad (ops/scalar_math.h, the CUDA backend's) give.
#include <cstdint>

namespace plexus::cpu {

// y[i] = gelu(x[i]); y may be x.
void gelu(float* y, const float* x, int64_t n);
// gx[i] = g[i] · gelu'(x[i]); gx may be g or x.
void gelu_backward(float* gx, const float* g, const float* x, int64_t n);

}  // namespace plexus::cpu
