#pragma once
// The device side of fault reporting (cuda/runtime.h): a kernel that meets a bad index
// records it in the device's FaultRecord and carries on. Included by the kernels of ops/cuda.
#include "cuda/runtime.h"

namespace plexus::cuda {

// Records the first fault only; the other fields are read after a synchronisation.
__device__ inline void report_fault(FaultRecord* r, FaultOp op, float value, long long position, long long limit) {
  if (atomicCAS(&r->op, 0, int(op)) == 0) {
    r->value = value;
    r->position = position;
    r->limit = limit;
  }
}
// True (and the index in `out`) when v is a whole number in [0, limit).
__device__ inline bool valid_index(float v, long long limit, long long* out) {
  if (!(v >= 0.f && v < float(limit)) || v != floorf(v)) return false;
  *out = (long long)v;
  return true;
}

}  // namespace plexus::cuda
