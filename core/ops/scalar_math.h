#pragma once
// Scalar formulas both backends share, so the CPU and the GPU compute the same numbers: the
// smooth nonlinearities with their derivatives, and the windows of pooling. The host compiler
// builds them into the CPU backend; nvcc builds them for the device into the CUDA backend.
#include <math.h>

#include <cstdint>

#include "ops/backend.h"

#ifdef __CUDACC__
#define PLEXUS_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define PLEXUS_HOST_DEVICE inline
#endif

namespace plexus::math {

PLEXUS_HOST_DEVICE float sigmoid(float x) {
  // Two branches keep exp's argument non-positive: no overflow for large |x|.
  if (x >= 0) return 1.f / (1.f + expf(-x));
  const float e = expf(x);
  return e / (1.f + e);
}

// Exact (erf) GELU and its derivative Φ(x) + x φ(x).
PLEXUS_HOST_DEVICE float gelu(float x) { return 0.5f * x * (1.f + erff(x * float(M_SQRT1_2))); }
PLEXUS_HOST_DEVICE float gelu_grad(float x) {
  const float cdf = 0.5f * (1.f + erff(x * float(M_SQRT1_2)));
  const float pdf = expf(-0.5f * x * x) * float(0.5 * M_2_SQRTPI * M_SQRT1_2);
  return cdf + x * pdf;
}

// log(1 + exp(beta x)) / beta, linear above the threshold (as PyTorch).
PLEXUS_HOST_DEVICE float softplus(float x, float beta, float threshold) {
  const float bx = beta * x;
  return bx > threshold ? x : log1pf(expf(bx)) / beta;
}

PLEXUS_HOST_DEVICE float sign(float x) { return float((x > 0) - (x < 0)); }

// The largest cell of output (y, x)'s pooling window over one [h, w] plane and its index in
// the plane (-1 when the window covers no cell); a NaN wins, as in PyTorch.
struct WindowMax {
  float value;
  int64_t at;
};
PLEXUS_HOST_DEVICE WindowMax window_max(const float* plane, const Backend::ConvGeometry& g, int64_t y, int64_t x) {
  WindowMax best{-INFINITY, -1};
  for (int64_t ki = 0; ki < g.kh; ++ki) {
    const int64_t iy = y * g.sh - g.ph + ki;
    if (iy < 0 || iy >= g.h) continue;
    for (int64_t kj = 0; kj < g.kw; ++kj) {
      const int64_t ix = x * g.sw - g.pw + kj;
      if (ix < 0 || ix >= g.w) continue;
      const float v = plane[iy * g.w + ix];
      if (best.at < 0 || v > best.value || v != v) best = {v, iy * g.w + ix};
    }
  }
  return best;
}

// Cells averaged at output (y, x): the window clipped to the padded image, or to the image
// itself when padding does not count (PyTorch's count_include_pad).
PLEXUS_HOST_DEVICE int64_t pool_count(const Backend::ConvGeometry& g, int64_t y, int64_t x, bool include_pad) {
  const int64_t y0 = y * g.sh - g.ph, x0 = x * g.sw - g.pw;
  const int64_t y1 = y0 + g.kh < g.h + g.ph ? y0 + g.kh : g.h + g.ph;
  const int64_t x1 = x0 + g.kw < g.w + g.pw ? x0 + g.kw : g.w + g.pw;
  if (include_pad) return (y1 - y0) * (x1 - x0);
  return ((y1 < g.h ? y1 : g.h) - (y0 > 0 ? y0 : 0)) * ((x1 < g.w ? x1 : g.w) - (x0 > 0 ? x0 : 0));
}

}  // namespace plexus::math
