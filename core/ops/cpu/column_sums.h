#pragma once
// Column sums of a row-major float matrix into double accumulators: the sum over a batch that a
// bias gradient is (ops/matmul.cpp's linear_grads, the CPU backend's reduce_sum), vectorised
// 8 doubles wide where the CPU has AVX-512 (4 with AVX2, 2 in the baseline), picked at run time
// as in gelu.cpp. Each column's sum runs down its rows in order, in double.
#include <cstdint>

namespace plexus::cpu {

// acc[j] += Σ_{r < rows} x[r * ld + j] for each j < cols.
void add_column_sums(double* acc, const float* x, int64_t rows, int64_t cols, int64_t ld);

}  // namespace plexus::cpu
