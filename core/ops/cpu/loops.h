#pragma once
// The one strided loop behind every CPU elementwise and reduction kernel: it walks N
// operands of the same logical shape, merges dims that are contiguous for all of them, and
// hands the innermost run to `inner(ptrs, inner_strides, n)` so that run can vectorize.
#include <array>
#include <cstdint>
#include <string>

#include "tensor/shape.h"
#include "util/error.h"

namespace plexus::cpu {

constexpr int kMaxDims = 16;

template <size_t N, class Inner>
void for_each_run(const Shape& shape, std::array<float*, N> ptrs,
                  const std::array<const int64_t*, N>& strides, Inner&& inner) {
  const int nd = int(shape.size());
  if (nd > kMaxDims) throw ValueError("tensors of more than 16 dims are not supported (got " + std::to_string(nd) + ")");
  std::array<int64_t, kMaxDims> size{};
  std::array<std::array<int64_t, kMaxDims>, N> stride{};
  int k = 0;
  for (int d = nd - 1; d >= 0; --d) {  // innermost first
    if (shape[d] == 0) return;
    if (shape[d] == 1) continue;
    bool merge = k > 0;
    for (size_t i = 0; i < N && merge; ++i) merge = stride[i][k - 1] * size[k - 1] == strides[i][d];
    if (merge) {
      size[k - 1] *= shape[d];
      continue;
    }
    size[k] = shape[d];
    for (size_t i = 0; i < N; ++i) stride[i][k] = strides[i][d];
    ++k;
  }
  std::array<int64_t, N> inner_stride{};
  if (k == 0) {
    inner(ptrs, inner_stride, int64_t(1));
    return;
  }
  for (size_t i = 0; i < N; ++i) inner_stride[i] = stride[i][0];
  std::array<int64_t, kMaxDims> idx{};
  for (;;) {
    inner(ptrs, inner_stride, size[0]);
    int d = 1;
    for (; d < k; ++d) {
      for (size_t i = 0; i < N; ++i) ptrs[i] += stride[i][d];
      if (++idx[d] < size[d]) break;
      for (size_t i = 0; i < N; ++i) ptrs[i] -= stride[i][d] * size[d];
      idx[d] = 0;
    }
    if (d == k) return;
  }
}

}  // namespace plexus::cpu
