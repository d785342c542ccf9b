// A step is n rows of G*h gate values; rows are split across the pool once a step has enough
// of them to beat waking a thread (the same threshold as the elementwise loops). On x86-64
// CPUs with AVX-512 the unit loop runs in a copy of itself compiled for them (16 floats a
// vector instead of SSE2's 4), picked at run time.
#include "ops/cpu/rnn_cells.h"

#include <algorithm>

#include "ops/cpu/isa.h"
#include "ops/recurrent_cells.h"
#include "util/parallel.h"

namespace plexus::cpu {
namespace {

constexpr int64_t kParallelElements = 1 << 15;

// Rows [begin, end) of a step, unit by unit. Units of a row do not overlap: ivdep spares GCC
// the aliasing checks it gives up on (Clang has no such pragma that it does not also insist on).
template <class Step, auto Unit>
[[gnu::always_inline]] inline void rows(const Step& s, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
#if !defined(__clang__)
#pragma GCC ivdep
#endif
    for (int64_t j = 0; j < s.h; ++j) Unit(s, r, j);
  }
}

template <class Step, auto Unit>
void rows_baseline(const Step& s, int64_t begin, int64_t end) {
  rows<Step, Unit>(s, begin, end);
}

#ifdef PLEXUS_CPU_ISA_COPIES
template <class Step, auto Unit>
[[gnu::target("avx512f,avx512vl,fma")]] void rows_avx512(const Step& s, int64_t begin, int64_t end) {
  rows<Step, Unit>(s, begin, end);
}
#endif

template <class Step, auto Unit>
void over_rows(const Step& s) {
  auto run = rows_baseline<Step, Unit>;
#ifdef PLEXUS_CPU_ISA_COPIES
  if (kAvx512) run = rows_avx512<Step, Unit>;
#endif
  const int64_t per_row = int64_t(math::rnn_gates(s.cell)) * s.h;
  parallel_for(s.n, std::max<int64_t>(1, kParallelElements / 2 / std::max<int64_t>(1, per_row)),
               [&](int64_t begin, int64_t end) { run(s, begin, end); });
}

}  // namespace

void rnn_cell_forward(const Backend::RnnStep& s) {
  using S = Backend::RnnStep;
  switch (s.cell) {
    case RnnCell::Lstm: return over_rows<S, math::rnn_cell_forward<RnnCell::Lstm>>(s);
    case RnnCell::Gru: return over_rows<S, math::rnn_cell_forward<RnnCell::Gru>>(s);
    case RnnCell::Tanh: return over_rows<S, math::rnn_cell_forward<RnnCell::Tanh>>(s);
  }
}

void rnn_cell_backward(const Backend::RnnStepGrad& s) {
  using S = Backend::RnnStepGrad;
  switch (s.cell) {
    case RnnCell::Lstm: return over_rows<S, math::rnn_cell_backward<RnnCell::Lstm>>(s);
    case RnnCell::Gru: return over_rows<S, math::rnn_cell_backward<RnnCell::Gru>>(s);
    case RnnCell::Tanh: return over_rows<S, math::rnn_cell_backward<RnnCell::Tanh>>(s);
  }
}

}  // namespace plexus::cpu
