// The CUDA kernels of fused attention (ops/cuda/attention.h). A thread owns one query (forward,
// dQ) or one key (dK, dV) and keeps its row and accumulators in registers, sized by the head-size
// bucket kD (16, 32, 64 or 128; rows shorter than kD are zero-padded in shared memory and
// registers, so the unrolled loops need no bounds). exp in full precision (expf): the results
// match the CPU kernel and the unfused path to FP32 rounding.
#include <cmath>
#include <string>
#include <type_traits>

#include "cuda/runtime.h"
#include "ops/cuda/attention.h"
#include "tensor/tensor.h"
#include "util/error.h"

namespace plexus::cuda {
namespace {

using Problem = Backend::AttentionProblem;

constexpr int kRows = 64;  // queries (or keys) per block, one per thread
constexpr int kTile = 32;  // keys (or queries) staged in shared memory at a time

__device__ int64_t visible_keys(const Problem& p, int64_t b) {
  if (!p.key_lengths) return p.s;
  const float len = p.key_lengths[b / p.rows_per_length];
  if (!(len < float(p.s))) return p.s;
  return max(int64_t(1), int64_t(ceilf(len)));
}

// A query thread's place (forward and dQ): its batch row b (the block's y) and query i, whether
// i is a query at all, the keys it sees [0, row_end) and those its block loads [0, block_end)
// (causal: none right of the block's last query).
struct QueryThread {
  int64_t b, i, row_end, block_end;
  bool active;
};
__device__ QueryThread query_thread(const Problem& p) {
  const int64_t b = blockIdx.y, i = int64_t(blockIdx.x) * kRows + threadIdx.x;
  const int64_t keys = visible_keys(p, b);
  return {b, i, p.causal ? min(keys, i + 1) : keys, p.causal ? min(keys, int64_t(blockIdx.x + 1) * kRows) : keys,
          i < p.t};
}

// Rows [r0, r0 + kTile) of a [rows, d] matrix into shared memory as [kTile][kD], zeros past the
// matrix's rows and d.
template <int kD>
__device__ void stage(float (*dst)[kD], const float* src, int64_t r0, int64_t rows, int64_t d) {
  for (int e = threadIdx.x; e < kTile * kD; e += blockDim.x) {
    const int r = e / kD, c = e % kD;
    dst[r][c] = r0 + r < rows && c < d ? src[(r0 + r) * d + c] : 0.f;
  }
}

// Calls body(k_j, v_j), rows staged in shared memory, for each key query thread `qt` sees, in
// order; every thread of the block stages the tiles, active or not.
template <int kD, class Body>
__device__ void for_each_key(const Problem& p, const QueryThread& qt, const float* k, const float* v, float (*ks)[kD],
                             float (*vs)[kD], Body body) {
  for (int64_t j0 = 0; j0 < qt.block_end; j0 += kTile) {
    stage<kD>(ks, k + qt.b * p.s * p.d, j0, p.s, p.d);
    stage<kD>(vs, v + qt.b * p.s * p.d, j0, p.s, p.d);
    __syncthreads();
    if (qt.active)
      for (int jj = 0; jj < kTile && j0 + jj < qt.row_end; ++jj) body(ks[jj], vs[jj]);
    __syncthreads();
  }
}

template <int kD>
__device__ void load_row(float (&dst)[kD], const float* src, int64_t d, float scale = 1.f) {
#pragma unroll
  for (int c = 0; c < kD; ++c) dst[c] = c < d ? src[c] * scale : 0.f;
}

template <int kD>
__device__ float dot(const float (&a)[kD], const float* b) {
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kD; ++c) s = fmaf(a[c], b[c], s);
  return s;
}

template <int kD>
__global__ void __launch_bounds__(kRows)
    attention_forward_kernel(float* out, float* lse, const float* q, const float* k, const float* v, Problem p) {
  __shared__ float ks[kTile][kD], vs[kTile][kD];
  const QueryThread qt = query_thread(p);
  const int64_t b = qt.b, i = qt.i;
  const bool active = qt.active;
  float qr[kD], acc[kD];
  if (active) load_row(qr, q + (b * p.t + i) * p.d, p.d, p.scale);
#pragma unroll
  for (int c = 0; c < kD; ++c) acc[c] = 0.f;
  float m = -INFINITY, l = 0.f;
  for_each_key<kD>(p, qt, k, v, ks, vs, [&](const float* kj, const float* vj) {
    const float sc = dot(qr, kj);
    const float m_new = fmaxf(m, sc);
    const float shrink = expf(m - m_new), pj = expf(sc - m_new);
    l = l * shrink + pj;
#pragma unroll
    for (int c = 0; c < kD; ++c) acc[c] = fmaf(pj, vj[c], acc[c] * shrink);
    m = m_new;
  });
  if (!active) return;
  float* o = out + (b * p.t + i) * p.d;
  for (int c = 0; c < kD && c < p.d; ++c) o[c] = acc[c] / l;
  lse[b * p.t + i] = m + logf(l);
}

// D_i = dO_i · O_i per query row.
__global__ void attention_delta_kernel(float* delta, const float* dout, const float* out, int64_t rows, int64_t d) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.f;
  for (int64_t c = 0; c < d; ++c) s = fmaf(dout[r * d + c], out[r * d + c], s);
  delta[r] = s;
}

// dK and dV: a thread per key, over tiles of the queries that see it.
template <int kD>
__global__ void __launch_bounds__(kRows)
    attention_dkdv_kernel(float* dk, float* dv, const float* dout, const float* q, const float* k, const float* v,
                          const float* lse, const float* delta, Problem p) {
  __shared__ float qs[kTile][kD], dos[kTile][kD];
  __shared__ float lses[kTile], deltas[kTile];
  const int64_t b = blockIdx.y, j = int64_t(blockIdx.x) * kRows + threadIdx.x;
  const int64_t keys = visible_keys(p, b);
  const bool active = j < keys;
  float kr[kD], vr[kD], dkr[kD], dvr[kD];
  if (active) {
    load_row(kr, k + (b * p.s + j) * p.d, p.d);
    load_row(vr, v + (b * p.s + j) * p.d, p.d);
  }
#pragma unroll
  for (int c = 0; c < kD; ++c) dkr[c] = dvr[c] = 0.f;
  // Causal: queries before the block's first key see none of its keys.
  const int64_t first = p.causal ? int64_t(blockIdx.x) * kRows : 0;
  for (int64_t i0 = first; i0 < p.t && int64_t(blockIdx.x) * kRows < keys; i0 += kTile) {
    stage<kD>(qs, q + b * p.t * p.d, i0, p.t, p.d);
    stage<kD>(dos, dout + b * p.t * p.d, i0, p.t, p.d);
    if (threadIdx.x < kTile) {
      const int64_t i = i0 + threadIdx.x;
      lses[threadIdx.x] = i < p.t ? lse[b * p.t + i] : 0.f;
      deltas[threadIdx.x] = i < p.t ? delta[b * p.t + i] : 0.f;
    }
    __syncthreads();
    if (active)
      for (int ii = 0; ii < kTile && i0 + ii < p.t; ++ii) {
        if (p.causal && i0 + ii < j) continue;
        const float pij = expf(p.scale * dot(kr, qs[ii]) - lses[ii]);
        const float ds = pij * (dot(vr, dos[ii]) - deltas[ii]);
#pragma unroll
        for (int c = 0; c < kD; ++c) {
          dvr[c] = fmaf(pij, dos[ii][c], dvr[c]);
          dkr[c] = fmaf(p.scale * ds, qs[ii][c], dkr[c]);
        }
      }
    __syncthreads();
  }
  if (j >= p.s) return;
  float *dkj = dk + (b * p.s + j) * p.d, *dvj = dv + (b * p.s + j) * p.d;
  for (int c = 0; c < kD && c < p.d; ++c) {
    dkj[c] = dkr[c];  // zero for keys past the padding: no query saw them
    dvj[c] = dvr[c];
  }
}

// dQ: a thread per query, over tiles of the keys it sees.
template <int kD>
__global__ void __launch_bounds__(kRows)
    attention_dq_kernel(float* dq, const float* dout, const float* q, const float* k, const float* v, const float* lse,
                        const float* delta, Problem p) {
  __shared__ float ks[kTile][kD], vs[kTile][kD];
  const QueryThread qt = query_thread(p);
  const int64_t b = qt.b, i = qt.i;
  const bool active = qt.active;
  float qr[kD], dor[kD], dqr[kD];
  float lse_i = 0.f, delta_i = 0.f;
  if (active) {
    load_row(qr, q + (b * p.t + i) * p.d, p.d, p.scale);
    load_row(dor, dout + (b * p.t + i) * p.d, p.d);
    lse_i = lse[b * p.t + i];
    delta_i = delta[b * p.t + i];
  }
#pragma unroll
  for (int c = 0; c < kD; ++c) dqr[c] = 0.f;
  for_each_key<kD>(p, qt, k, v, ks, vs, [&](const float* kj, const float* vj) {
    const float pij = expf(dot(qr, kj) - lse_i);
    const float ds = pij * (dot(dor, vj) - delta_i);
#pragma unroll
    for (int c = 0; c < kD; ++c) dqr[c] = fmaf(p.scale * ds, kj[c], dqr[c]);
  });
  if (!active) return;
  float* o = dq + (b * p.t + i) * p.d;
  for (int c = 0; c < kD && c < p.d; ++c) o[c] = dqr[c];
}

// Calls f(std::integral_constant<int, kD>) for the smallest bucket that holds d.
template <class F>
void with_dim_bucket(int64_t d, F&& f) {
  if (d <= 16) return f(std::integral_constant<int, 16>());
  if (d <= 32) return f(std::integral_constant<int, 32>());
  if (d <= 64) return f(std::integral_constant<int, 64>());
  if (d <= kMaxAttentionDim) return f(std::integral_constant<int, 128>());
  throw ValueError("fused attention on CUDA: head size D = " + std::to_string(d) + " is over the kernel's " +
                   std::to_string(kMaxAttentionDim));
}

dim3 grid_of(int64_t rows, int64_t batch) {
  if (batch > 65535)
    throw ValueError("fused attention on CUDA: " + std::to_string(batch) +
                     " batch rows (examples x heads) exceed 65535");
  return dim3(unsigned((rows + kRows - 1) / kRows), unsigned(batch));
}

}  // namespace

void attention_forward(int device, float* out, float* lse, const float* q, const float* k, const float* v,
                       const Problem& p) {
  use_device(device);
  if (p.batch == 0 || p.t == 0) return;
  with_dim_bucket(p.d, [&](auto bucket) {
    constexpr int kD = decltype(bucket)::value;
    attention_forward_kernel<kD><<<grid_of(p.t, p.batch), kRows, 0, stream(device)>>>(out, lse, q, k, v, p);
  });
  check_launch("attention_forward_kernel");
}

void attention_backward(int device, float* dq, float* dk, float* dv, const float* dout, const float* q, const float* k,
                        const float* v, const float* out, const float* lse, const Problem& p) {
  use_device(device);
  if (p.batch == 0 || p.t == 0) return;
  const Tensor delta = plexus::empty({p.batch, p.t}, Device::cuda(device));
  const int64_t rows = p.batch * p.t;
  attention_delta_kernel<<<unsigned((rows + 255) / 256), 256, 0, stream(device)>>>(delta.data(), dout, out, rows, p.d);
  check_launch("attention_delta_kernel");
  with_dim_bucket(p.d, [&](auto bucket) {
    constexpr int kD = decltype(bucket)::value;
    attention_dkdv_kernel<kD>
        <<<grid_of(p.s, p.batch), kRows, 0, stream(device)>>>(dk, dv, dout, q, k, v, lse, delta.data(), p);
    check_launch("attention_dkdv_kernel");
    attention_dq_kernel<kD>
        <<<grid_of(p.t, p.batch), kRows, 0, stream(device)>>>(dq, dout, q, k, v, lse, delta.data(), p);
    check_launch("attention_dq_kernel");
  });
}

}  // namespace plexus::cuda
