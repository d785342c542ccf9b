#pragma once
// Launch basics shared by the kernels (block size, grid-stride bounds, cheap division) and the
// strided offsets of N operands of one logical shape. Included by backend.cu only.
//
// The host collapses the shape the way cpu::for_each_run does (size-1 dims dropped, dims
// contiguous for every operand merged, innermost first) into a Geometry passed to kernels by
// value; a kernel turns a row-major linear index into one offset per operand. Collapsing
// keeps the linear index equal to the row-major logical index, which random fills rely on.
#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "tensor/shape.h"
#include "util/error.h"

namespace plexus::cuda {
namespace {

constexpr int kMaxDims = 16;  // the CPU backend's limit too
constexpr int kThreads = 256;  // threads per block, everywhere
constexpr float kInf = std::numeric_limits<float>::infinity();

template <int N>
struct Geometry {
  int ndim;                          // collapsed dims, innermost first
  int64_t size[kMaxDims];
  int64_t stride[N][kMaxDims];       // per operand, in elements (0 = broadcast)
};

// Collapses `shape` for N operands; returns the element count (0: nothing to do).
template <int N>
int64_t collapse(const Shape& shape, const std::array<const int64_t*, N>& strides, Geometry<N>& g,
                 const char* op) {
  const int nd = int(shape.size());
  if (nd > kMaxDims)
    throw ValueError(std::string(op) + ": tensors of more than 16 dims are not supported (got " +
                     std::to_string(nd) + ")");
  g = Geometry<N>{};
  int64_t count = 1;
  for (int d = nd - 1; d >= 0; --d) {
    const int64_t s = shape[d];
    if (s == 0) {
      g.ndim = 0;
      return 0;
    }
    count *= s;
    if (s == 1) continue;
    const int k = g.ndim;
    bool merge = k > 0;
    for (int i = 0; i < N && merge; ++i) merge = g.stride[i][k - 1] * g.size[k - 1] == strides[i][d];
    if (merge) {
      g.size[k - 1] *= s;
      continue;
    }
    g.size[k] = s;
    for (int i = 0; i < N; ++i) g.stride[i][k] = strides[i][d];
    ++g.ndim;
  }
  return count;
}

inline bool is_aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// One run of unit stride for every operand (or a single element): the contiguous fast path.
template <int N>
bool is_contiguous_run(const Geometry<N>& g) {
  if (g.ndim == 0) return true;
  if (g.ndim > 1) return false;
  for (int i = 0; i < N; ++i)
    if (g.stride[i][0] != 1) return false;
  return true;
}

// a / b for a >= 0, b > 0: 32-bit division when both fit (the common case), which is several
// times cheaper than the 64-bit software routine.
__device__ __forceinline__ int64_t div_nonneg(int64_t a, int64_t b) {
  if (((uint64_t(a) | uint64_t(b)) >> 32) == 0) return int64_t(uint32_t(a) / uint32_t(b));
  return a / b;
}

// Division by a divisor fixed at launch, for n < 2^31: a multiply-high and a shift instead of
// the ~20-instruction division routine (Granlund & Montgomery; PyTorch's IntDivider).
struct FastDiv {
  uint32_t divisor = 1, magic = 1, shift = 0;
  FastDiv() = default;
  explicit FastDiv(int64_t d) : divisor(uint32_t(d)) {
    while (shift < 32 && (uint64_t(1) << shift) < divisor) ++shift;
    magic = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - divisor)) / divisor + 1);
  }
  __device__ __forceinline__ uint32_t div(uint32_t n) const { return (__umulhi(n, magic) + n) >> shift; }
};

// Offsets of row-major linear index i (0 <= i < product of sizes) for every operand.
template <int N>
__device__ __forceinline__ void offsets(const Geometry<N>& g, int64_t i, int64_t (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = 0; d < g.ndim - 1; ++d) {
    const int64_t q = div_nonneg(i, g.size[d]);
    const int64_t idx = i - q * g.size[d];
    i = q;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += idx * g.stride[k][d];
  }
  if (g.ndim > 0) {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += i * g.stride[k][g.ndim - 1];
  }
}

// Grid-stride loop bounds.
__device__ __forceinline__ int64_t global_thread() { return int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_threads() { return int64_t(gridDim.x) * blockDim.x; }

}  // namespace
}  // namespace plexus::cuda
