#pragma once
// Layer norm over contiguous rows [rows, d] (Backend::layer_norm*): kLanes threads per row, as
// softmax.cuh's row kernels, the row's sums in double and all-reduced in a fixed order, so
// results are deterministic. Numerics follow the CPU backend (ops/cpu/layer_norm.cpp): two
// passes for the variance, float arithmetic per element. Included by backend.cu only.
#include <cstdint>

#include "ops/cuda/group_reduce.cuh"
#include "ops/cuda/softmax.cuh"

namespace plexus::cuda {
namespace {

template <int kLanes>
__global__ void __launch_bounds__(kThreads) layer_norm_rows(float* y, float* mean, float* invstd, const float* x,
                                                            const float* weight, const float* bias, int64_t rows,
                                                            int64_t d, float eps) {
  __shared__ double smd[kThreads / 32];
  for_each_row<kLanes>(rows, [&](int64_t row, int lane) {
    const float* xr = x + row * d;
    float* yr = y + row * d;
    double s = 0;
    for (int64_t j = lane; j < d; j += kLanes) s += double(xr[j]);
    const double mu = group_allreduce<kLanes>(s, SumOp(), smd) / double(d);
    double q = 0;
    for (int64_t j = lane; j < d; j += kLanes) q += (xr[j] - mu) * (xr[j] - mu);
    const double var = group_allreduce<kLanes>(q, SumOp(), smd) / double(d);
    const float m = float(mu), k = float(1.0 / sqrt(var + double(eps)));
    if (lane == 0) {
      mean[row] = m;
      invstd[row] = k;
    }
    for (int64_t j = lane; j < d; j += kLanes)
      yr[j] = __fadd_rn(__fmul_rn(__fmul_rn(xr[j] - m, k), weight ? weight[j] : 1.f), bias ? bias[j] : 0.f);
  });
}

// dx = invstd * (dyw - mean(dyw) - xhat * mean(dyw * xhat)), dyw = dy * weight.
template <int kLanes>
__global__ void __launch_bounds__(kThreads) layer_norm_backward_rows(float* dx, const float* dy, const float* x,
                                                                     const float* mean, const float* invstd,
                                                                     const float* weight, int64_t rows, int64_t d) {
  __shared__ double smd[kThreads / 32];
  for_each_row<kLanes>(rows, [&](int64_t row, int lane) {
    const float* xr = x + row * d;
    const float* gr = dy + row * d;
    float* out = dx + row * d;
    const float m = mean[row], k = invstd[row];
    double a = 0, b = 0;
    for (int64_t j = lane; j < d; j += kLanes) {
      const float g = weight ? __fmul_rn(gr[j], weight[j]) : gr[j];
      a += double(g);
      b += double(g) * double(__fmul_rn(xr[j] - m, k));
    }
    const float fa = float(group_allreduce<kLanes>(a, SumOp(), smd) / double(d));
    const float fb = float(group_allreduce<kLanes>(b, SumOp(), smd) / double(d));
    for (int64_t j = lane; j < d; j += kLanes) {
      const float g = weight ? __fmul_rn(gr[j], weight[j]) : gr[j];
      out[j] = __fmul_rn(k, g - fa - __fmul_rn(__fmul_rn(xr[j] - m, k), fb));
    }
  });
}

}  // namespace
}  // namespace plexus::cuda
