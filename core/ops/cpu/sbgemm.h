#pragma once
// The CPU's bfloat16 matrix product (precision: bf16, ops/precision.h) for CPUs with
// AVX512_BF16 (sbgemm_avx512bf16.cpp): C = alpha·op(A)·op(B) + beta·C, row-major, one thread,
// as own_sgemm (sgemm.h), but the operands are rounded to bfloat16 (to nearest, ties to even)
// as they are packed and multiplied in pairs by vdpbf16ps, which sums into FP32. C, alpha and
// beta stay FP32. Debian's OpenBLAS has no sbgemm, hence our own.
//
// This header is included by the AVX512_BF16 translation unit: declarations only.
#include <cstdint>

namespace plexus::cpu {

// True when this CPU runs our AVX-512 kernels (own_sgemm_enabled) and has AVX512_BF16, and
// PLEXUS_CPU_BF16 is not "off" (which makes a CPU that has it compute as one without: FP32).
// The variable is read on every call, so a test can turn the kernel off and on.
bool cpu_has_bf16_products();

// True when the calling thread asks for bf16 products (matmul_precision) and the CPU has them.
bool bf16_products();

// The product described above; k > 0, m > 0, n > 0. beta = 0 never reads C. `workspace` is
// own_sgemm_thread_workspace() (a packed panel of op(B)); op(A) is packed into the thread's
// own_sgemm_thread_packed_a buffer.
void own_sbgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* workspace);

}  // namespace plexus::cpu
