#pragma once
// One time step of a recurrent cell (Backend::rnn_cell_forward / rnn_cell_backward): a thread
// per (batch row, hidden unit) runs the CPU's formula (ops/recurrent_cells.h). Included by
// backend.cu only.
#include <cstdint>

#include "ops/backend.h"
#include "ops/cuda/strided.cuh"
#include "ops/recurrent_cells.h"

namespace plexus::cuda {
namespace {

template <RnnCell Cell>
__global__ void rnn_cell_forward_kernel(Backend::RnnStep s) {
  const int64_t total = s.n * s.h;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t r = div_nonneg(e, s.h);
    math::rnn_cell_forward<Cell>(s, r, e - r * s.h);
  }
}

template <RnnCell Cell>
__global__ void rnn_cell_backward_kernel(Backend::RnnStepGrad s) {
  const int64_t total = s.n * s.h;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t r = div_nonneg(e, s.h);
    math::rnn_cell_backward<Cell>(s, r, e - r * s.h);
  }
}

}  // namespace
}  // namespace plexus::cuda
