#pragma once
// Reductions (sum / max / min over any set of dims) and arg-reductions. Included by
// backend.cu only.
//
// A 256-thread block serves 256 / lanes outputs with `lanes` threads each:
//  - "row" layout (lane_stride 1): the lanes of one output are adjacent threads, so they read
//    adjacent elements when the reduced dims are innermost (32 lanes = a warp per output, or
//    256 = the block per output when there are few outputs);
//  - "column" layout (lane_stride 32): 32 adjacent threads serve 32 adjacent outputs, so they
//    read adjacent elements when the kept dims are innermost (column sums, bias gradients);
//    8 lanes per output.
// When there are too few blocks to fill the GPU, blockIdx.y splits each reduction into chunks
// whose partials (double for sums) go to a buffer that reduce_finish combines.
#include <cstdint>

#include "ops/cuda/group_reduce.cuh"
#include "ops/cuda/strided.cuh"

namespace plexus::cuda {
namespace {

// Sum accumulates in double (the CPU backend's rule) and rounds once at the end.
struct SumReduce {
  using Acc = double;
  __device__ static Acc identity() { return 0.0; }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static Acc load(float x) { return double(x); }
  __device__ static float finish(Acc a) { return float(a); }
};
// Max / Min: a NaN wins (the CPU's `isnan(v) || v > acc ? v : acc`).
struct MaxReduce {
  using Acc = float;
  __device__ static Acc identity() { return -kInf; }
  __device__ static Acc combine(Acc a, Acc b) { return isnan(b) || b > a ? b : a; }
  __device__ static Acc load(float x) { return x; }
  __device__ static float finish(Acc a) { return a; }
};
struct MinReduce {
  using Acc = float;
  __device__ static Acc identity() { return kInf; }
  __device__ static Acc combine(Acc a, Acc b) { return isnan(b) || b < a ? b : a; }
  __device__ static Acc load(float x) { return x; }
  __device__ static float finish(Acc a) { return a; }
};

struct ReducePlan {
  Geometry<2> kept;     // per output: offsets into out (operand 0) and in (operand 1)
  Geometry<1> reduced;  // per reduction element: offset into in, from the output's base
  int64_t outputs;      // distinct output elements
  int64_t extent;       // elements per reduction (0: write the identity)
  int64_t chunk;        // elements per blockIdx.y
  int64_t out_blocks;   // blocks needed along x (the grid may be smaller: grid-stride)
  int lanes;            // threads per output: a power of two dividing kThreads
  int lane_stride;      // 1 (row layout) or 32 (column layout)
};

template <class R>
__global__ void __launch_bounds__(kThreads) reduce_kernel(ReducePlan p, float* out, const float* in,
                                                          typename R::Acc* partial) {
  using Acc = typename R::Acc;
  __shared__ Acc smem[kThreads];
  const int t = threadIdx.x;
  const int slot = p.lane_stride == 1 ? t / p.lanes : t % p.lane_stride;
  const int lane = p.lane_stride == 1 ? t % p.lanes : t / p.lane_stride;
  const int per_block = kThreads / p.lanes;
  const int64_t begin = int64_t(blockIdx.y) * p.chunk;
  const int64_t end = begin + p.chunk < p.extent ? begin + p.chunk : p.extent;
  // The loop bound is the same for the whole block, so __syncthreads below is safe.
  for (int64_t blk = blockIdx.x; blk < p.out_blocks; blk += gridDim.x) {
    const int64_t j = blk * per_block + slot;
    Acc acc = R::identity();
    int64_t off[2] = {0, 0};
    if (j < p.outputs) {
      offsets(p.kept, j, off);
      const float* base = in + off[1];
      int64_t r = begin + lane;
      // Four loads in flight per thread, combined in index order as the plain loop would.
      for (; r + 3 * p.lanes < end; r += 4 * p.lanes) {
        float v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          int64_t ro[1];
          offsets(p.reduced, r + u * p.lanes, ro);
          v[u] = base[ro[0]];
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) acc = R::combine(acc, R::load(v[u]));
      }
      for (; r < end; r += p.lanes) {
        int64_t ro[1];
        offsets(p.reduced, r, ro);
        acc = R::combine(acc, R::load(base[ro[0]]));
      }
    }
    smem[t] = acc;
    __syncthreads();
    for (int s = p.lanes / 2; s > 0; s >>= 1) {
      if (lane < s) smem[t] = R::combine(smem[t], smem[t + s * p.lane_stride]);
      __syncthreads();
    }
    if (lane == 0 && j < p.outputs) {
      if (gridDim.y == 1)
        out[off[0]] = R::finish(smem[t]);
      else
        partial[int64_t(blockIdx.y) * p.outputs + j] = smem[t];
    }
    __syncthreads();  // smem is rewritten by the next iteration
  }
}

template <class R>
struct Combine {
  __device__ typename R::Acc operator()(typename R::Acc a, typename R::Acc b) const { return R::combine(a, b); }
};

// Combines the `splits` partials of each output: a warp per output, lanes strided over the
// splits, then a butterfly (a fixed order, so the result is deterministic).
template <class R>
__global__ void reduce_finish(ReducePlan p, int splits, float* out, const typename R::Acc* partial) {
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x % 32;
  for (int64_t j = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32; j < p.outputs; j += int64_t(gridDim.x) * kWarps) {
    typename R::Acc acc = R::identity();
    for (int g = lane; g < splits; g += 32) acc = R::combine(acc, partial[int64_t(g) * p.outputs + j]);
    acc = warp_allreduce<32>(acc, Combine<R>());
    if (lane == 0) {
      int64_t off[2];
      offsets(p.kept, j, off);
      out[off[0]] = R::finish(acc);
    }
  }
}

// ---- arg-reductions ----------------------------------------------------------------------
// The CPU scans j = 0.. keeping the first strict extremum and stopping at the first NaN, so
// the answer is the first NaN if there is one, else the first index of the extremum. As a
// combinable rule over (value, index) candidates (index < 0: no candidate yet):
__device__ __forceinline__ bool arg_better(bool is_max, float v, int64_t i, float best, int64_t best_i) {
  if (i < 0) return false;
  if (best_i < 0) return true;
  const bool nv = isnan(v), nb = isnan(best);
  if (nv || nb) return nv && (!nb || i < best_i);
  if (is_max ? v > best : v < best) return true;
  return v == best && i < best_i;
}

// inner == 1: kLanes threads per row of n contiguous values, tree-combined in shared memory.
template <int kLanes>
__global__ void __launch_bounds__(kThreads) arg_reduce_rows(bool is_max, float* out, const float* in,
                                                            int64_t rows, int64_t n) {
  __shared__ float sv[kThreads];
  __shared__ int64_t si[kThreads];
  constexpr int kPerBlock = kThreads / kLanes;
  const int t = threadIdx.x, lane = t % kLanes;
  const int64_t row_blocks = (rows + kPerBlock - 1) / kPerBlock;
  for (int64_t blk = blockIdx.x; blk < row_blocks; blk += gridDim.x) {  // uniform per block
    const int64_t row = blk * kPerBlock + t / kLanes;
    float best = 0.f;
    int64_t best_i = -1;
    if (row < rows) {
      const float* x = in + row * n;
      for (int64_t j = lane; j < n; j += kLanes) {  // increasing j: the first candidate wins ties
        const float v = x[j];
        if (arg_better(is_max, v, j, best, best_i)) {
          best = v;
          best_i = j;
        }
      }
    }
    sv[t] = best;
    si[t] = best_i;
    __syncthreads();
    for (int s = kLanes / 2; s > 0; s >>= 1) {
      if (lane < s && arg_better(is_max, sv[t + s], si[t + s], sv[t], si[t])) {
        sv[t] = sv[t + s];
        si[t] = si[t + s];
      }
      __syncthreads();
    }
    if (lane == 0 && row < rows) out[row] = float(si[t] < 0 ? 0 : si[t]);
    __syncthreads();
  }
}

// inner > 1: a thread per (outer, inner) column, the CPU loop itself (adjacent threads read
// adjacent addresses).
__global__ void arg_reduce_columns(bool is_max, float* out, const float* in, int64_t outer, int64_t n,
                                   int64_t inner) {
  const int64_t total = outer * inner;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t o = div_nonneg(e, inner), i = e - o * inner;
    const float* x = in + o * n * inner + i;
    int64_t best = 0;
    float b = n > 0 ? x[0] : 0.f;
    for (int64_t j = 1; j < n && !isnan(b); ++j) {
      const float v = x[j * inner];
      if (isnan(v) || (is_max ? v > b : v < b)) {
        best = j;
        b = v;
      }
    }
    out[e] = float(best);
  }
}

}  // namespace
}  // namespace plexus::cuda
