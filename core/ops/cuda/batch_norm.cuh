#pragma once
// Batch norm kernels (Backend::batch_norm_*): x is [n, c, s], i.e. n*c rows of s values, row
// r belonging to channel r % c. Per-channel sums run in two steps, deterministically: blocks
// (channel, slice of images) write double partial sums, then one thread per channel adds its
// slices in order. The elementwise passes walk rows on blockIdx.y, so the channel is read
// once per row, not divided out per element. Included by backend.cu only.
#include <cstdint>

#include "ops/cuda/strided.cuh"

namespace plexus::cuda {
namespace {

constexpr int kBnThreads = 256;

// Two double sums over a block, returned to thread 0.
__device__ __forceinline__ double2 block_sum2(double a, double b) {
  __shared__ double sa[kBnThreads / 32], sb[kBnThreads / 32];
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_down_sync(0xffffffffu, a, o);
    b += __shfl_down_sync(0xffffffffu, b, o);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    sa[warp] = a;
    sb[warp] = b;
  }
  __syncthreads();
  if (warp == 0) {
    a = lane < kBnThreads / 32 ? sa[lane] : 0.0;
    b = lane < kBnThreads / 32 ? sb[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) {
      a += __shfl_down_sync(0xffffffffu, a, o);
      b += __shfl_down_sync(0xffffffffu, b, o);
    }
  }
  return {a, b};
}

// partial[ch * slices + slice] = (Σ u, Σ v) over the channel's values in images
// [slice * per_slice, ...): statistics (u = x, v = x²) or the backward sums (u = dy, v = dy·x).
// Grid: (c, slices). `s_div` divides by s; a slice holds fewer than 2^31 values.
template <bool kBackward>
__global__ void bn_partials(double2* partial, const float* x, const float* dy, int64_t n, int64_t c, int64_t s,
                            int64_t per_slice, FastDiv s_div) {
  const int64_t ch = blockIdx.x, slice = blockIdx.y;
  const int64_t b0 = slice * per_slice, b1 = min(n, b0 + per_slice);
  const uint32_t count = b1 > b0 ? uint32_t((b1 - b0) * s) : 0u;
  double u = 0, v = 0;
  for (uint32_t e = threadIdx.x; e < count; e += blockDim.x) {
    const uint32_t b = s_div.div(e), j = e - b * uint32_t(s);
    const int64_t at = ((b0 + b) * c + ch) * s + j;
    const double xv = x[at];
    if (kBackward) {
      const double g = dy[at];
      u += g;
      v += g * xv;
    } else {
      u += xv;
      v += xv * xv;
    }
  }
  const double2 t = block_sum2(u, v);
  if (threadIdx.x == 0) partial[ch * gridDim.y + slice] = t;
}

// One thread per channel: the slices' partials in order, then the statistics (mean, biased
// var, invstd) or the backward sums (Σ dy, Σ dy·xhat).
template <bool kBackward>
__global__ void bn_finish(const double2* partial, int64_t slices, int64_t c, double count, float eps, float* out_a,
                          float* out_b, float* out_c, const float* mean, const float* invstd) {
  const int64_t ch = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (ch >= c) return;
  double u = 0, v = 0;
  for (int64_t k = 0; k < slices; ++k) {
    u += partial[ch * slices + k].x;
    v += partial[ch * slices + k].y;
  }
  if (kBackward) {  // Σ dy·(x - mean)·invstd = (Σ dy·x - mean·Σ dy)·invstd
    out_a[ch] = float(u);
    out_b[ch] = float((v - double(mean[ch]) * u) * double(invstd[ch]));
  } else {
    const double mu = u / count, var = fmax(v / count - mu * mu, 0.0);
    out_a[ch] = float(mu);
    out_b[ch] = float(var);
    out_c[ch] = float(1.0 / sqrt(var + double(eps)));
  }
}

// y = (x - mean) * invstd * weight + bias, or in the backward pass
// dx = weight * invstd * (dy - (sum_dy + xhat * sum_dy_xhat) / count) (sums null: weight*invstd*dy).
template <bool kBackward>
__global__ void bn_rows(float* out, const float* x, const float* dy, const float* mean, const float* invstd,
                        const float* weight, const float* bias, const float* sum_dy, const float* sum_dy_xhat,
                        float inv_count, int64_t rows, int64_t c, int64_t s) {
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const int64_t ch = row % c;
    const float k = invstd[ch], scale = k * (weight ? weight[ch] : 1.f), mu = mean[ch];
    const float shift = kBackward ? 0.f : (bias ? bias[ch] : 0.f);
    const float a = kBackward && sum_dy ? sum_dy[ch] * inv_count : 0.f;
    const float bb = kBackward && sum_dy_xhat ? sum_dy_xhat[ch] * inv_count : 0.f;
    const int64_t base = row * s;
    for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < s; j += int64_t(gridDim.x) * blockDim.x) {
      const float xv = x[base + j];
      out[base + j] = kBackward ? scale * (dy[base + j] - a - (xv - mu) * k * bb) : (xv - mu) * scale + shift;
    }
  }
}

}  // namespace
}  // namespace plexus::cuda
