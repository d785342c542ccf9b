// A step is n rows of G*h gate values; rows are split across the pool once a step has enough
// of them to beat waking a thread (the same threshold as the elementwise loops).
#include "ops/cpu/recurrent.h"

#include <algorithm>

#include "ops/recurrent_cells.h"
#include "util/parallel.h"

namespace plexus::cpu {
namespace {

constexpr int64_t kParallelElements = 1 << 15;

template <class Step, class Row>
void over_rows(const Step& s, Row&& row) {
  const int64_t per_row = int64_t(math::rnn_gates(s.cell)) * s.h;
  parallel_for(s.n, std::max<int64_t>(1, kParallelElements / 2 / std::max<int64_t>(1, per_row)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) row(r);
               });
}

template <RnnCell Cell>
void forward(const Backend::RnnStep& s) {
  over_rows(s, [&s](int64_t r) {
    // Units of a row do not overlap: ivdep spares GCC the aliasing checks it gives up on.
#pragma GCC ivdep
    for (int64_t j = 0; j < s.h; ++j) math::rnn_cell_forward<Cell>(s, r, j);
  });
}

template <RnnCell Cell>
void backward(const Backend::RnnStepGrad& s) {
  over_rows(s, [&s](int64_t r) {
#pragma GCC ivdep
    for (int64_t j = 0; j < s.h; ++j) math::rnn_cell_backward<Cell>(s, r, j);
  });
}

}  // namespace

void rnn_cell_forward(const Backend::RnnStep& s) {
  switch (s.cell) {
    case RnnCell::Lstm: return forward<RnnCell::Lstm>(s);
    case RnnCell::Gru: return forward<RnnCell::Gru>(s);
    case RnnCell::Tanh: return forward<RnnCell::Tanh>(s);
  }
}

void rnn_cell_backward(const Backend::RnnStepGrad& s) {
  switch (s.cell) {
    case RnnCell::Lstm: return backward<RnnCell::Lstm>(s);
    case RnnCell::Gru: return backward<RnnCell::Gru>(s);
    case RnnCell::Tanh: return backward<RnnCell::Tanh>(s);
  }
}

}  // namespace plexus::cpu
