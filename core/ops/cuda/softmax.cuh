#pragma once
// Softmax, its derivative and fused cross-entropy over rows. Included by backend.cu only.
//
// The *_rows kernels serve contiguous rows (softmax with inner == 1, cross-entropy): kLanes
// threads per row (8 for short rows, a warp, or the whole block for long rows) stride over the row and all-reduce
// the max and the sums. The *_columns kernels serve a strided middle dim (inner > 1): a thread
// per (outer, inner) column walks it, and adjacent threads read adjacent addresses. Numerics
// follow the CPU backend: max ignoring NaN (std::max), exp in double summed in double, an
// all -inf softmax row takes m = 0, log-softmax as (x - m) - log(s).
#include <cstdint>

#include "ops/cuda/fault.cuh"
#include "ops/cuda/group_reduce.cuh"
#include "ops/cuda/strided.cuh"
#include "ops/scalar_math.h"

namespace plexus::cuda {
namespace {

// Row loop shared by the row kernels: calls body(row, lane) for this thread's rows. A row is
// served by 8 lanes, a warp or the whole block (kLanes 8, 32, kThreads), and every thread of a
// group gets the same rows, so every thread a group_allreduce needs takes part.
template <int kLanes, class Body>
__device__ __forceinline__ void for_each_row(int64_t rows, Body body) {
  constexpr int kPerBlock = kThreads / kLanes;
  const int64_t row_blocks = (rows + kPerBlock - 1) / kPerBlock;
  for (int64_t blk = blockIdx.x; blk < row_blocks; blk += gridDim.x) {
    const int64_t row = blk * kPerBlock + threadIdx.x / kLanes;
    if (row < rows) body(row, int(threadIdx.x % kLanes));  // uniform per group
  }
}

// causal_t > 0: the causal softmax of attention (rows of [..., t, t]), where row r sees its
// first r % t + 1 values only and the rest get exactly 0.
template <int kLanes>
__global__ void __launch_bounds__(kThreads) softmax_rows(float* out, const float* in, int64_t rows, int64_t row_len,
                                                         bool log_form, int64_t causal_t) {
  __shared__ float smf[kThreads / 32];
  __shared__ double smd[kThreads / 32];
  for_each_row<kLanes>(rows, [&](int64_t row, int lane) {
    const float* x = in + row * row_len;
    float* y = out + row * row_len;
    const int64_t n = causal_t > 0 ? row % causal_t + 1 : row_len;
    for (int64_t j = n + lane; j < row_len; j += kLanes) y[j] = 0.f;
    float m = -kInf;
    for (int64_t j = lane; j < n; j += kLanes) m = MaxIgnoreNan()(m, x[j]);
    m = group_allreduce<kLanes>(m, MaxIgnoreNan(), smf);
    if (m == -kInf) m = 0.f;  // all -inf: avoid inf - inf
    double s = 0;
    for (int64_t j = lane; j < n; j += kLanes) s += exp(double(x[j] - m));
    s = group_allreduce<kLanes>(s, SumOp(), smd);
    if (log_form) {
      const float log_s = float(log(s));
      for (int64_t j = lane; j < n; j += kLanes) y[j] = (x[j] - m) - log_s;
    } else {
      const float inv = float(1.0 / s);
      for (int64_t j = lane; j < n; j += kLanes) y[j] = expf(x[j] - m) * inv;
    }
  });
}

__global__ void softmax_columns(float* out, const float* in, int64_t outer, int64_t n, int64_t inner,
                                bool log_form) {
  const int64_t total = outer * inner;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t o = div_nonneg(e, inner), i = e - o * inner;
    const float* x = in + o * n * inner + i;
    float* y = out + o * n * inner + i;
    float m = -kInf;
    for (int64_t j = 0; j < n; ++j) m = MaxIgnoreNan()(m, x[j * inner]);
    if (m == -kInf) m = 0.f;
    double s = 0;
    for (int64_t j = 0; j < n; ++j) s += exp(double(x[j * inner] - m));
    if (log_form) {
      const float log_s = float(log(s));
      for (int64_t j = 0; j < n; ++j) y[j * inner] = (x[j * inner] - m) - log_s;
    } else {
      const float inv = float(1.0 / s);
      for (int64_t j = 0; j < n; ++j) y[j * inner] = expf(x[j * inner] - m) * inv;
    }
  }
}

// log: g - softmax * sum(g); else y * (g - sum(g * y)).
template <int kLanes>
__global__ void __launch_bounds__(kThreads) softmax_backward_rows(float* gin, const float* gout, const float* out,
                                                                  int64_t rows, int64_t n, bool log_form) {
  __shared__ double smd[kThreads / 32];
  for_each_row<kLanes>(rows, [&](int64_t row, int lane) {
    const float* g = gout + row * n;
    const float* y = out + row * n;
    float* gi = gin + row * n;
    double s = 0;
    if (log_form) {
      for (int64_t j = lane; j < n; j += kLanes) s += g[j];
    } else {
      for (int64_t j = lane; j < n; j += kLanes) s += double(g[j]) * y[j];
    }
    const float fs = float(group_allreduce<kLanes>(s, SumOp(), smd));
    if (log_form) {
      for (int64_t j = lane; j < n; j += kLanes) gi[j] = g[j] - expf(y[j]) * fs;
    } else {
      for (int64_t j = lane; j < n; j += kLanes) gi[j] = y[j] * (g[j] - fs);
    }
  });
}

__global__ void softmax_backward_columns(float* gin, const float* gout, const float* out, int64_t outer,
                                         int64_t n, int64_t inner, bool log_form) {
  const int64_t total = outer * inner;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t o = div_nonneg(e, inner), i = e - o * inner;
    const int64_t base = o * n * inner + i;
    double s = 0;
    if (log_form) {
      for (int64_t j = 0; j < n; ++j) s += gout[base + j * inner];
      for (int64_t j = 0; j < n; ++j)
        gin[base + j * inner] = gout[base + j * inner] - expf(out[base + j * inner]) * float(s);
    } else {
      for (int64_t j = 0; j < n; ++j) s += double(gout[base + j * inner]) * out[base + j * inner];
      for (int64_t j = 0; j < n; ++j)
        gin[base + j * inner] = out[base + j * inner] * (gout[base + j * inner] - float(s));
    }
  }
}

// loss: math::cross_entropy_loss, as on the CPU; a target that is not a whole number in
// [0, c) is reported and its row's loss is 0.
template <int kLanes>
__global__ void __launch_bounds__(kThreads) cross_entropy_rows(FaultRecord* fault, float* loss, float* lse,
                                                               const float* logits, const float* target,
                                                               int64_t rows, int64_t c, float smoothing) {
  __shared__ float smf[kThreads / 32];
  __shared__ double smd[kThreads / 32];
  for_each_row<kLanes>(rows, [&](int64_t row, int lane) {
    const float* x = logits + row * c;
    float m = -kInf;
    for (int64_t j = lane; j < c; j += kLanes) m = MaxIgnoreNan()(m, x[j]);
    m = group_allreduce<kLanes>(m, MaxIgnoreNan(), smf);
    double s = 0, sum_x = 0;
    for (int64_t j = lane; j < c; j += kLanes) {
      s += exp(double(x[j] - m));
      sum_x += x[j];
    }
    s = group_allreduce<kLanes>(s, SumOp(), smd);
    sum_x = group_allreduce<kLanes>(sum_x, SumOp(), smd);
    if (lane != 0) return;
    const double l = m + log(s);
    lse[row] = float(l);
    const float tv = target[row];
    long long t;
    if (!valid_index(tv, c, &t)) {
      report_fault(fault, FaultOp::CrossEntropy, tv, row, c);
      loss[row] = 0.f;
      return;
    }
    loss[row] = math::cross_entropy_loss(l, x[t], sum_x, c, smoothing);
  });
}

// Elementwise over [rows, c]: g = gl * (softmax - s/c), minus gl * (1 - s) at the target,
// with gl = scale * gloss[r * gloss_stride] (stride 0: the gradient of a sum or mean).
__global__ void cross_entropy_backward_kernel(FaultRecord* fault, float* gx, const float* gloss,
                                              int64_t gloss_stride, float scale, const float* logits,
                                              const float* lse, const float* target, int64_t rows, int64_t c,
                                              float smoothing, float off) {
  const int64_t total = rows * c;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t r = div_nonneg(e, c), j = e - r * c;
    const float tv = target[r];
    long long t;
    if (!valid_index(tv, c, &t)) {
      if (j == 0) report_fault(fault, FaultOp::CrossEntropyBackward, tv, r, c);
      gx[e] = 0.f;
      continue;
    }
    const float gr = scale * gloss[r * gloss_stride];
    float v = gr * (expf(logits[e] - lse[r]) - off);
    if (j == t) v -= gr * (1.f - smoothing);
    gx[e] = v;
  }
}

}  // namespace
}  // namespace plexus::cuda
