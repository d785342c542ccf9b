#pragma once
// The CPU's bfloat16 matrix product (precision: bf16, ops/precision.h) for CPUs with
// AVX512_BF16 (sbgemm_avx512bf16.cpp): C = alpha·op(A)·op(B) + beta·C, row-major, one thread,
// as own_sgemm (sgemm.h), but the operands are rounded to bfloat16 (to nearest, ties to even)
// as they are packed and multiplied in pairs by vdpbf16ps, which sums into FP32. C, alpha and
// beta stay FP32. Debian's OpenBLAS has no sbgemm, hence our own. Where the CPU has AMX-BF16 (and
// the kernel lets this process use its tiles) the pairs are multiplied by tile instructions,
// each 16 times the work of a vdpbf16ps; the operands round the same way either way.
//
// This header is included by the AVX512_BF16 translation unit: declarations only.
#include <cstdint>

#include "ops/cpu/conv_grid.h"

namespace plexus::cpu {

// True when this CPU runs our AVX-512 kernels (own_sgemm_enabled) and has AVX512_BF16, and
// PLEXUS_CPU_BF16 is not "off" (which makes a CPU that has it compute as one without: FP32).
// The variable is read on every call, so a test can turn the kernel off and on.
bool cpu_has_bf16_products();

// True when own_sbgemm multiplies with AMX tiles: the CPU has bf16 products, AMX-BF16 and the
// kernel granted this process the tiles' state (Linux 5.16 and later), and PLEXUS_CPU_AMX is not
// "off" (which makes own_sbgemm use vdpbf16ps, as on a CPU without AMX). Read on every call.
bool cpu_has_amx_bf16();

// The bf16 products' kernel, for reports: "AMX" or "AVX512_BF16"; "" without bf16 products.
const char* bf16_kernel();

// True when the calling thread asks for bf16 products (matmul_precision) and the CPU has them.
bool bf16_products();

// The product described above; k > 0, m > 0, n > 0. beta = 0 never reads C. `workspace` is
// own_sgemm_thread_workspace() (a packed panel of op(B)); op(A) is packed into the thread's
// own_sgemm_thread_packed_a buffer.
void own_sbgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* workspace);

// conv_forward_image and conv_weight_grad_image (sgemm.h) by this product: the same implicit
// convolution of an unpadded stride-1 convolution (no im2col matrix stored), its panels packed
// from the image as bf16 pairs; `workspace` as for own_sbgemm.
void conv_forward_image_bf16(float* out, const float* img, const float* w, int64_t og, const ConvShape& g,
                             const float* bias, bool relu, float* workspace);
void conv_weight_grad_image_bf16(float* gw, const float* gout, const float* img, int64_t og, const ConvShape& g,
                                 float* workspace, bool accumulate);

}  // namespace plexus::cpu
