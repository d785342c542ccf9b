#pragma once
// 2-D max / average pooling over [planes, h, w] (dilation 1), written as the CPU loops.
// Forward: a thread per output cell. Backward: a thread per input cell gathers the windows that
// cover it in (y, x) order -- the order in which the CPU adds them -- so no atomics and the same
// rounding (max pooling with windows that do not overlap scatters from the outputs instead). Included by backend.cu only.
#include <cstdint>

#include "ops/backend.h"
#include "ops/cuda/strided.cuh"
#include "ops/scalar_math.h"

namespace plexus::cuda {
namespace {

using PoolGeometry = Backend::ConvGeometry;

// The output rows (or columns) whose window covers input coordinate i: [lo, hi].
struct WindowRange {
  int64_t lo, hi;
};
__device__ __forceinline__ WindowRange covering(int64_t i, int64_t k, int64_t stride, int64_t pad, int64_t out) {
  // window y covers i when y*stride - pad <= i < y*stride - pad + k
  const int64_t first = i + pad - k + 1;  // smallest y*stride
  int64_t lo = first <= 0 ? 0 : div_nonneg(first + stride - 1, stride);
  int64_t hi = div_nonneg(i + pad, stride);
  if (hi > out - 1) hi = out - 1;
  return {lo, hi};
}

// argmax: index in the h*w plane as float, -1 when the window saw no cell; a NaN wins.
__global__ void max_pool_kernel(float* out, float* argmax, const float* in, int64_t planes, PoolGeometry g) {
  const int64_t per = g.oh * g.ow, total = planes * per;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t p = div_nonneg(e, per), r = e - p * per;
    const int64_t y = div_nonneg(r, g.ow), xo = r - y * g.ow;
    const math::WindowMax best = math::window_max(in + p * g.h * g.w, g, y, xo);
    out[e] = best.value;
    argmax[e] = float(best.at);
  }
}

__global__ void max_pool_backward_kernel(float* grad_in, const float* grad_out, const float* argmax, int64_t planes,
                                         PoolGeometry g) {
  const int64_t hw = g.h * g.w, per = g.oh * g.ow, total = planes * hw;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t p = div_nonneg(e, hw), cell = e - p * hw;
    const int64_t iy = div_nonneg(cell, g.w), ix = cell - iy * g.w;
    const WindowRange ys = covering(iy, g.kh, g.sh, g.ph, g.oh), xs = covering(ix, g.kw, g.sw, g.pw, g.ow);
    const float* am = argmax + p * per;
    const float* go = grad_out + p * per;
    float acc = 0.f;
    for (int64_t y = ys.lo; y <= ys.hi; ++y)
      for (int64_t x = xs.lo; x <= xs.hi; ++x)
        if (int64_t(am[y * g.ow + x]) == cell) acc += go[y * g.ow + x];
    grad_in[e] += acc;
  }
}

// Windows that do not overlap (kh <= sh, kw <= sw): each input cell is the argmax of at most one
// window, so a thread per output adds straight into its cell -- the same sum as the gather, with
// a quarter of the threads for 2x2 pooling.
__global__ void max_pool_backward_scatter_kernel(float* grad_in, const float* grad_out, const float* argmax,
                                                 int64_t planes, PoolGeometry g) {
  const int64_t hw = g.h * g.w, per = g.oh * g.ow, total = planes * per;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t p = div_nonneg(e, per), at = int64_t(argmax[e]);
    if (at >= 0 && at < hw) grad_in[p * hw + at] += grad_out[e];
  }
}

__global__ void avg_pool_kernel(float* out, const float* in, int64_t planes, PoolGeometry g, bool include_pad) {
  const int64_t per = g.oh * g.ow, total = planes * per;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t p = div_nonneg(e, per), r = e - p * per;
    const int64_t y = div_nonneg(r, g.ow), xo = r - y * g.ow;
    const float* x = in + p * g.h * g.w;
    const int64_t y0 = y * g.sh - g.ph, x0 = xo * g.sw - g.pw;
    double s = 0;
    for (int64_t iy = max(y0, int64_t(0)); iy < min(y0 + g.kh, g.h); ++iy)
      for (int64_t ix = max(x0, int64_t(0)); ix < min(x0 + g.kw, g.w); ++ix) s += x[iy * g.w + ix];
    out[e] = float(s / double(math::pool_count(g, y, xo, include_pad)));
  }
}

__global__ void avg_pool_backward_kernel(float* grad_in, const float* grad_out, int64_t planes, PoolGeometry g,
                                         bool include_pad) {
  const int64_t hw = g.h * g.w, per = g.oh * g.ow, total = planes * hw;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t p = div_nonneg(e, hw), cell = e - p * hw;
    const int64_t iy = div_nonneg(cell, g.w), ix = cell - iy * g.w;
    const WindowRange ys = covering(iy, g.kh, g.sh, g.ph, g.oh), xs = covering(ix, g.kw, g.sw, g.pw, g.ow);
    const float* go = grad_out + p * per;
    float acc = 0.f;
    for (int64_t y = ys.lo; y <= ys.hi; ++y)
      for (int64_t x = xs.lo; x <= xs.hi; ++x) acc += go[y * g.ow + x] / float(math::pool_count(g, y, x, include_pad));
    grad_in[e] += acc;
  }
}

__global__ void adaptive_pool_kernel(float* out, float* argmax, const float* in, int64_t planes,
                                     Backend::AdaptiveGeometry g) {
  const int64_t per = g.oh * g.ow, total = planes * per;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t p = div_nonneg(e, per), r = e - p * per;
    const int64_t y = div_nonneg(r, g.ow);
    math::adaptive_pool_cell(out + p * per, argmax ? argmax + p * per : nullptr, in + p * g.h * g.w, g, y,
                             r - y * g.ow);
  }
}

__global__ void adaptive_pool_backward_kernel(float* grad_in, const float* grad_out, const float* argmax,
                                              int64_t planes, Backend::AdaptiveGeometry g) {
  const int64_t hw = g.h * g.w, per = g.oh * g.ow, total = planes * hw;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t p = div_nonneg(e, hw), cell = e - p * hw;
    const int64_t iy = div_nonneg(cell, g.w);
    grad_in[e] += math::adaptive_pool_grad(grad_out + p * per, argmax ? argmax + p * per : nullptr, g, iy,
                                           cell - iy * g.w);
  }
}

}  // namespace
}  // namespace plexus::cuda
