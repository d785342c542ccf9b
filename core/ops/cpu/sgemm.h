#pragma once
// The CPU kernels written for AVX-512 (sgemm_avx512.cpp): the matrix product, convolution as
// a product read from the image's grid (conv_grid.h), pooling's epilogues, and Adam's update.
//
// Our own single-precision matrix product for CPUs with AVX-512 (row-major, one thread):
// C = alpha·op(A)·op(B) + beta·C, where op transposes when ta / tb. CPUs with AVX2 and FMA but
// not AVX-512 run avx2_sgemm (below); OpenBLAS stays the product on every other CPU and when
// PLEXUS_GEMM=openblas.
//
// Why our own: the products in a training step are small (a batch of 100 against a layer
// of 128) and OpenBLAS's kernel for this machine may be pinned to AVX2 (OPENBLAS_CORETYPE),
// which halves what the vector units can do. The kernel broadcasts A against a packed panel
// of op(B) that stays in L1; A is read in place when C is at most four panels wide, and its
// depth blocks are packed into 12-row tiles first when it is wider.
//
// This header is included by the AVX-512 translation unit: declarations only, so no inline
// function compiled with AVX-512 can stand in for another file's copy.
#include <cstdint>

#include "ops/cpu/conv_grid.h"

namespace plexus::cpu {

// True when this CPU runs the AVX-512 kernel and PLEXUS_GEMM does not ask for OpenBLAS.
bool own_sgemm_enabled();

// Floats of workspace own_sgemm needs (one packed panel of op(B)), 64-byte aligned. The
// caller passes it, so the AVX-512 file keeps no thread-local storage.
constexpr int64_t kOwnSgemmWorkspace = 256 * 32;

// The calling thread's workspace: allocated on its first product, reused after.
float* own_sgemm_thread_workspace();

// The calling thread's buffer for A's packed depth blocks, at least `floats` long and 64-byte
// aligned; grown when a product needs more, reused after (own_sgemm takes it itself).
float* own_sgemm_thread_packed_a(int64_t floats);

// The product described above; k > 0, m > 0, n > 0. beta = 0 never reads C.
void own_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* workspace);

// Which of the three runs the products (floats): "AVX-512 kernel", "AVX2 kernel" or "OpenBLAS".
const char* product_kernel();

// The same product for CPUs with AVX2 and FMA but not AVX-512 (sgemm_avx2.cpp): true when
// this CPU runs it and PLEXUS_GEMM does not ask for OpenBLAS. Only the product: convolutions,
// pooling and Adam keep their portable loops there.
bool avx2_sgemm_enabled();
// Floats of workspace avx2_sgemm needs (op(B)'s packed panels for one block and A's packed rows
// for one pass over them), 32-byte aligned.
constexpr int64_t kAvx2SgemmWorkspace = 256 * 256 + 24 * 256;
// The calling thread's workspace for avx2_sgemm: allocated on its first product, reused after.
float* avx2_sgemm_thread_workspace();
// As own_sgemm, with the AVX2 kernel: k > 0, m > 0, n > 0; beta = 0 never reads C.
void avx2_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* workspace);

// own_sgemm packs A when C has more than this many 32-column panels: each panel then reads the
// packed tiles; with fewer, packing would cost about what it saves.
constexpr int64_t kOwnSgemmPackAPanels = 4;
// Rows of C per register tile (A is packed in tiles of this many rows).
constexpr int64_t kOwnSgemmTileRows = 12;

// A product split into column chunks that threads take as they come packs op(A) once per
// thread, whole, and runs each chunk on it: own_sgemm_pack_a writes op(A) (m x k) into
// `packed`, own_sgemm_packed_a_floats(m, k) floats, and own_sgemm_packed is own_sgemm on that
// packed A, the same result bit for bit.
int64_t own_sgemm_packed_a_floats(int64_t m, int64_t k);
void own_sgemm_pack_a(float* packed, bool ta, const float* a, int64_t lda, int64_t m, int64_t k);
void own_sgemm_packed(bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* packed_a, const float* b,
                      int64_t ldb, float beta, float* c, int64_t ldc, float* workspace);
// The calling thread's op(A) for the product numbered `product` (a number no other product
// shares): packed by own_sgemm_pack_a on the thread's first call with that number, reused by
// its later calls with it.
const float* own_sgemm_thread_packed_whole_a(uint64_t product, bool ta, const float* a, int64_t lda, int64_t m,
                                             int64_t k);

// A convolution of one image (one group) without padding at stride 1 (conv_by_grid false) as
// the same product, its im2col matrix never stored: the kernel reads the packed panels straight
// from the image. The image is [c, h, w], the weight [og, c, kh, kw], the output [og, oh, ow].
// `workspace` as for own_sgemm.
// out = w · cols(img), plus bias[o] per output channel when bias is not null, then
// max(·, 0) when relu; out is written, never read before.
void conv_forward_image(float* out, const float* img, const float* w, int64_t og, const ConvShape& g,
                        const float* bias, bool relu, float* workspace);
// gw = gout · cols(img)ᵀ, or gw += it when accumulate.
void conv_weight_grad_image(float* gw, const float* gout, const float* img, int64_t og, const ConvShape& g,
                            float* workspace, bool accumulate);

// Any other convolution of one image (one group) as the same product, read from its grid
// (conv_grid.h) with `offsets` of its taps (conv_grid_offsets): out [og][shape.columns] =
// wtᵀ · cols, where wt is the weight transposed ([taps][og], transpose_rows); every
// column is written, grid_to_plane keeps the output positions.
void conv_forward_grid(float* out, const float* grid, const int64_t* offsets, const float* wt, int64_t og,
                       const ConvGrid& shape);
// gwt [taps][og] = cols · goutᵀ, or += it when accumulate, where gout_rows is the output's
// gradient as grid rows (plane_to_grid: [og][shape.columns], zeros between positions).
// `panel` as own_sgemm's workspace.
void conv_weight_grad_grid(float* gwt, const float* grid, const int64_t* offsets, const float* gout_rows, int64_t og,
                           const ConvShape& g, const ConvGrid& shape, float* panel, bool accumulate);
// 2x2 max pooling at stride 2 of `planes` planes x [h, w] into out and argmax [h/2, w/2]
// each (the argmax as a float position in its plane), as CpuBackend's SSE2 loop and
// math::window_max (scan order, a NaN wins).
void max_pool_2x2(float* out, float* argmax, const float* x, int64_t planes, int64_t h, int64_t w);

// The gradient of a conv output (`planes` planes x [h, w], every cell written) from that of
// its ReLU'd (when relu) and 2x2 max-pooled output (planes x [h/2, w/2]): each pooled cell's
// gradient goes to its argmax cell (argmax, a position in the plane, as float) where out > 0,
// every other cell gets 0.
void unpool_2x2_grad(float* gconv, const float* gout, const float* out, const float* argmax, int64_t planes,
                     int64_t h, int64_t w, bool relu);

// out[r] = the sum of a's row r (rows x cols, contiguous), or out[r] += it when accumulate:
// a bias's gradient.
void row_sums(float* out, const float* a, int64_t rows, int64_t cols, bool accumulate);

// img = col2im(cols) at stride 1 (sh = sw = 1): each image cell sums its taps' columns in a
// register and is written once (adding tap rows into the image one by one would chain
// overlapping loads behind stores), so img need not be cleared first.
void col2im_unit_stride(float* img, const float* cols, const ConvShape& g);

// Adam's update of n parameters, exactly math::adam_update per element (the same operations,
// each rounded once, in the same order), 16 at a time. The fields are Backend::AdamScalars'.
struct AdamConstants {
  float beta1, one_minus_beta1, beta2, one_minus_beta2, weight_decay, step, eps, decay;
};
void adam_update(float* p, const float* g, float* m, float* v, float* vmax, int64_t n, const AdamConstants& k,
                 float sign, bool decay_grad);

}  // namespace plexus::cpu
