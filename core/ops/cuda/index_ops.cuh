#pragma once
// index_select / index_add / gather / scatter_add. Every index is a float that must be a whole
// number in range: a bad one is recorded in the device's FaultRecord (reported at the next
// synchronisation) and the element is skipped (0 written for the selecting ops), so no kernel
// touches memory out of range. Included by backend.cu only.
#include <cstdint>

#include "ops/cuda/fault.cuh"
#include "ops/cuda/strided.cuh"

namespace plexus::cuda {
namespace {

// Splits e over [outer, n, inner] (the shape of the selecting / adding side).
struct OuterNInner {
  int64_t o, j, i;
};
__device__ __forceinline__ OuterNInner split3(int64_t e, int64_t n, int64_t inner) {
  const int64_t t = div_nonneg(e, inner), o = div_nonneg(t, n);
  return {o, t - o * n, e - t * inner};
}

// out[o, j, i] = in[o, index[j], i]; each bad index is reported by its (o = 0, i = 0) thread.
__global__ void index_select_kernel(FaultRecord* fault, float* out, const float* in, const float* index,
                                    int64_t outer, int64_t in_n, int64_t idx_n, int64_t inner) {
  const int64_t total = outer * idx_n * inner;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const OuterNInner c = split3(e, idx_n, inner);
    const float v = index[c.j];
    long long k;
    if (!valid_index(v, in_n, &k)) {
      if (c.o == 0 && c.i == 0) report_fault(fault, FaultOp::IndexSelect, v, c.j, in_n);
      out[e] = 0.f;
      continue;
    }
    out[e] = in[(c.o * in_n + k) * inner + c.i];
  }
}

// out[o, index[j], i] += src[o, j, i] (atomic: indices may repeat).
__global__ void index_add_kernel(FaultRecord* fault, float* out, const float* src, const float* index,
                                 int64_t outer, int64_t out_n, int64_t idx_n, int64_t inner) {
  const int64_t total = outer * idx_n * inner;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const OuterNInner c = split3(e, idx_n, inner);
    const float v = index[c.j];
    long long k;
    if (!valid_index(v, out_n, &k)) {
      if (c.o == 0 && c.i == 0) report_fault(fault, FaultOp::IndexAdd, v, c.j, out_n);
      continue;
    }
    atomicAdd(out + (c.o * out_n + k) * inner + c.i, src[e]);
  }
}

// gather / scatter_add: element e of the (contiguous) index tensor addresses the data tensor at
// its own coordinate with coordinate `dim` replaced by index[e].
struct IndexedAxis {
  int ndim;
  int dim;                       // ndim when there is no indexed dim (a 0-d tensor)
  int64_t limit;                 // data size along dim
  int64_t size[kMaxDims];        // index tensor shape
  int64_t data_stride[kMaxDims]; // contiguous strides of the data tensor
};

// Offset of e's coordinate in the data tensor, the indexed dim left out.
__device__ __forceinline__ int64_t base_offset(const IndexedAxis& a, int64_t e) {
  int64_t off = 0;
  for (int d = a.ndim - 1; d >= 0; --d) {
    const int64_t q = div_nonneg(e, a.size[d]);
    if (d != a.dim) off += (e - q * a.size[d]) * a.data_stride[d];
    e = q;
  }
  return off;
}

__global__ void gather_kernel(FaultRecord* fault, float* out, const float* in, const float* index, IndexedAxis a,
                              int64_t total) {
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    int64_t off = base_offset(a, e);
    if (a.dim < a.ndim) {
      const float v = index[e];
      long long k;
      if (!valid_index(v, a.limit, &k)) {
        report_fault(fault, FaultOp::Gather, v, e, a.limit);
        out[e] = 0.f;
        continue;
      }
      off += k * a.data_stride[a.dim];
    }
    out[e] = in[off];
  }
}

__global__ void scatter_add_kernel(FaultRecord* fault, float* out, const float* src, const float* index,
                                   IndexedAxis a, int64_t total) {
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    int64_t off = base_offset(a, e);
    if (a.dim < a.ndim) {
      const float v = index[e];
      long long k;
      if (!valid_index(v, a.limit, &k)) {
        report_fault(fault, FaultOp::ScatterAdd, v, e, a.limit);
        continue;
      }
      off += k * a.data_stride[a.dim];
    }
    atomicAdd(out + off, src[e]);
  }
}

}  // namespace
}  // namespace plexus::cuda
