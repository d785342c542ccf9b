#pragma once
// All-reduce over a group of kLanes threads that share one row: 8 lanes of a warp (short rows),
// a warp, or the whole 256-thread block. Every lane gets the same value (the butterfly combines commutative pairs,
// the block step reads the warps' partials in a fixed order), so the result is deterministic.
// Included by backend.cu only.
#include <cstdint>

#include "ops/cuda/strided.cuh"

namespace plexus::cuda {
namespace {

struct SumOp {
  template <class T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
// std::max's rule ((a < b) ? b : a): a NaN never replaces the running maximum.
struct MaxIgnoreNan {
  __device__ float operator()(float a, float b) const { return a < b ? b : a; }
};

// Butterfly over aligned groups of kWidth lanes of a warp (8 or 32). The mask names only the
// caller's group, so groups of a warp that have no row left may skip the call.
template <int kWidth, class T, class Op>
__device__ __forceinline__ T warp_allreduce(T v, Op op) {
  constexpr unsigned kGroupMask = kWidth == 32 ? 0xffffffffu : (1u << kWidth) - 1;
  const unsigned mask = kGroupMask << (threadIdx.x % 32 / kWidth * kWidth);
#pragma unroll
  for (int s = kWidth / 2; s > 0; s >>= 1) v = op(v, __shfl_xor_sync(mask, v, s));
  return v;
}

// `smem` holds kThreads / 32 values of T. A group of kThreads lanes is the whole block: every
// thread must call. A group of 8 or 32 lanes is (part of) one warp: every lane of the group.
template <int kLanes, class T, class Op>
__device__ __forceinline__ T group_allreduce(T v, Op op, T* smem) {
  static_assert(kLanes == 8 || kLanes == 32 || kLanes == kThreads, "a group is 8 lanes, a warp or the block");
  if constexpr (kLanes <= 32) {
    return warp_allreduce<kLanes>(v, op);
  } else {
    constexpr int kWarps = kThreads / 32;
    v = warp_allreduce<32>(v, op);
    __syncthreads();  // the previous call's readers are done with smem
    if (threadIdx.x % 32 == 0) smem[threadIdx.x / 32] = v;
    __syncthreads();
    v = smem[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) v = op(v, smem[w]);
    return v;
  }
}

}  // namespace
}  // namespace plexus::cuda
