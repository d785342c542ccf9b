// The AVX-512 matrix product declared in sgemm.h. This file alone is compiled with AVX-512
// enabled (core/CMakeLists.txt); own_sgemm_enabled() (sgemm.cpp, plain) checks the CPU
// before anything here runs. It includes no standard header with inline functions, so none
// compiled for AVX-512 can be picked by the linker for other files.
//
// Shape of the computation, for each 32-column panel of C:
//   for each block of kKC rows of op(B): pack op(B)[block, panel] into `panel` (kc x 32,
//   zero-padded), then for each kMR rows of C: kMR x 32 accumulators in registers, one
//   broadcast of A and two fused multiply-adds per row and k.
#include <immintrin.h>

#include <cstdint>

#include "ops/cpu/sgemm.h"

namespace plexus::cpu {
namespace {

constexpr int kNR = 32;         // columns per panel: two 16-float registers
constexpr int kMR = 12;         // rows per register tile: 24 accumulators of 32
constexpr int64_t kKC = 256;    // depth per packed panel: 32 KiB, stays in L1 with A's rows
static_assert(kKC * kNR == kOwnSgemmWorkspace);

int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

__mmask16 first_lanes(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1); }

// r[i] (row i of a 16 x 16 tile) becomes column i.
void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4)
    for (int j = 0; j < 2; ++j) {
      r[i + 2 * j] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + j]), _mm512_castps_pd(t[i + j + 2])));
      r[i + 2 * j + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + j]), _mm512_castps_pd(t[i + j + 2])));
    }
  for (int h = 0; h < 16; h += 8)
    for (int j = 0; j < 4; ++j) {
      t[h + j] = _mm512_shuffle_f32x4(r[h + j], r[h + j + 4], 0x88);
      t[h + j + 4] = _mm512_shuffle_f32x4(r[h + j], r[h + j + 4], 0xdd);
    }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
  }
}

// panel[p][0..32) = op(B)[k0 + p][j0 .. j0 + nr), zeros past nr.
void pack_panel(float* panel, bool tb, const float* b, int64_t ldb, int64_t k0, int64_t kc, int64_t j0, int64_t nr) {
  if (!tb) {
    const __mmask16 lo = first_lanes(nr), hi = first_lanes(nr - 16);
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b + (k0 + p) * ldb + j0;
      _mm512_store_ps(panel + p * kNR, _mm512_maskz_loadu_ps(lo, src));
      _mm512_store_ps(panel + p * kNR + 16, _mm512_maskz_loadu_ps(hi, src + 16));
    }
    return;
  }
  // op(B)[k][j] = b[j * ldb + k]: 16 x 16 tiles read along k and transposed in registers.
  for (int64_t p = 0; p < kc; p += 16) {
    const __mmask16 depth = first_lanes(kc - p);
    const int64_t rows = smaller(16, kc - p);
    for (int half = 0; half < 2; ++half) {
      __m512 r[16];
      for (int j = 0; j < 16; ++j) {
        const int64_t col = half * 16 + j;
        r[j] = col < nr ? _mm512_maskz_loadu_ps(depth, b + (j0 + col) * ldb + k0 + p) : _mm512_setzero_ps();
      }
      transpose16(r);
      for (int64_t q = 0; q < rows; ++q) _mm512_store_ps(panel + (p + q) * kNR + half * 16, r[q]);
    }
  }
}

// C[0..MR)[cols] = alpha · A[0..MR)[0..kc) · panel + beta · C, where A's row i at k is
// a[i * rs + k * cs]; columns past the masks are neither read nor written.
template <int MR, bool kTransA>
void tile(int64_t kc, const float* a, int64_t lda, const float* panel, float* c, int64_t ldc, float alpha,
          float beta, __mmask16 lo, __mmask16 hi) {
  __m512 acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  if constexpr (kTransA) {  // A's column k is contiguous: a[k * lda + i]
    for (int64_t p = 0; p < kc; ++p, a += lda, panel += kNR) {
      const __m512 b0 = _mm512_load_ps(panel), b1 = _mm512_load_ps(panel + 16);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        const __m512 ai = _mm512_set1_ps(a[i]);
        acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      }
    }
  } else {  // A's row i is contiguous: a[i * lda + k]
    for (int64_t p = 0; p < kc; ++p, ++a, panel += kNR) {
      const __m512 b0 = _mm512_load_ps(panel), b1 = _mm512_load_ps(panel + 16);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        const __m512 ai = _mm512_set1_ps(a[i * lda]);
        acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      }
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i, c += ldc) {
    __m512 v0 = _mm512_mul_ps(va, acc[i][0]), v1 = _mm512_mul_ps(va, acc[i][1]);
    if (beta != 0.f) {
      v0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(lo, c), v0);
      v1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(hi, c + 16), v1);
    }
    _mm512_mask_storeu_ps(c, lo, v0);
    _mm512_mask_storeu_ps(c + 16, hi, v1);
  }
}

template <bool kTransA, int MR = kMR>
void tile_rows(int rows, int64_t kc, const float* a, int64_t lda, const float* panel, float* c, int64_t ldc,
               float alpha, float beta, __mmask16 lo, __mmask16 hi) {
  if constexpr (MR > 1)
    if (rows < MR) return tile_rows<kTransA, MR - 1>(rows, kc, a, lda, panel, c, ldc, alpha, beta, lo, hi);
  tile<MR, kTransA>(kc, a, lda, panel, c, ldc, alpha, beta, lo, hi);
}

template <bool kTransA>
void product(bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
             int64_t ldb, float beta, float* c, int64_t ldc, float* panel) {
  // Equal depth blocks: 784 = 4 x 196 rather than 3 x 256 + 16.
  const int64_t blocks = (k + kKC - 1) / kKC, depth = (k + blocks - 1) / blocks;
  for (int64_t j0 = 0; j0 < n; j0 += kNR) {
    const int64_t nr = smaller(kNR, n - j0);
    const __mmask16 lo = first_lanes(nr), hi = first_lanes(nr - 16);
    for (int64_t k0 = 0; k0 < k; k0 += depth) {
      const int64_t kc = smaller(depth, k - k0);
      pack_panel(panel, tb, b, ldb, k0, kc, j0, nr);
      const float beta_here = k0 == 0 ? beta : 1.f;
      for (int64_t i0 = 0; i0 < m; i0 += kMR) {
        const float* a_tile = kTransA ? a + k0 * lda + i0 : a + i0 * lda + k0;
        tile_rows<kTransA>(int(smaller(kMR, m - i0)), kc, a_tile, lda, panel, c + i0 * ldc + j0, ldc, alpha,
                           beta_here, lo, hi);
      }
    }
  }
}

}  // namespace

void own_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* workspace) {
  if (ta)
    product<true>(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workspace);
  else
    product<false>(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workspace);
}

}  // namespace plexus::cpu
