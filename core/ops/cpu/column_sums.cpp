#include "ops/cpu/column_sums.h"

#include "ops/cpu/isa.h"

namespace plexus::cpu {
namespace {

// Four rows a pass: each accumulator is loaded and stored once per four of them.
[[gnu::always_inline]] inline void column_sums_run(double* acc, const float* x, int64_t rows, int64_t cols,
                                                   int64_t ld) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float *x0 = x + r * ld, *x1 = x0 + ld, *x2 = x1 + ld, *x3 = x2 + ld;
    for (int64_t j = 0; j < cols; ++j)
      acc[j] = (((acc[j] + double(x0[j])) + double(x1[j])) + double(x2[j])) + double(x3[j]);
  }
  for (; r < rows; ++r) {
    const float* xr = x + r * ld;
    for (int64_t j = 0; j < cols; ++j) acc[j] += double(xr[j]);
  }
}

void column_sums_baseline(double* acc, const float* x, int64_t rows, int64_t cols, int64_t ld) {
  column_sums_run(acc, x, rows, cols, ld);
}

#ifdef PLEXUS_CPU_ISA_COPIES
[[gnu::target("avx512f,avx512vl")]] void column_sums_avx512(double* acc, const float* x, int64_t rows, int64_t cols,
                                                            int64_t ld) {
  column_sums_run(acc, x, rows, cols, ld);
}
[[gnu::target("avx2,fma")]] void column_sums_avx2(double* acc, const float* x, int64_t rows, int64_t cols, int64_t ld) {
  column_sums_run(acc, x, rows, cols, ld);
}
#endif

}  // namespace

void add_column_sums(double* acc, const float* x, int64_t rows, int64_t cols, int64_t ld) {
#ifdef PLEXUS_CPU_ISA_COPIES
  if (kAvx512) return column_sums_avx512(acc, x, rows, cols, ld);
  if (kAvx2) return column_sums_avx2(acc, x, rows, cols, ld);
#endif
  column_sums_baseline(acc, x, rows, cols, ld);
}

}  // namespace plexus::cpu
