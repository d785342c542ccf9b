// The AVX2 + FMA matrix product declared in sgemm.h, for CPUs without AVX-512. This file alone is
// compiled with AVX2 and FMA enabled (core/CMakeLists.txt); avx2_sgemm_enabled() (sgemm.cpp,
// plain) checks the CPU before anything here runs. It includes no standard header with inline
// functions, so none compiled for AVX2 can be picked by the linker for other files.
//
// Why not OpenBLAS here too: a training step's products are many and small (a transformer's
// Linear layers have depth 64, attention's tiles are 64 x 64 x 16), where OpenBLAS's per-call
// set-up and its packing of A cost as much as the arithmetic. Here op(B) is packed once per depth
// block for up to kNC columns, and A is read in place unless many panels read it.
//
// Shape of the computation, for each block of kNC columns of C and each depth block of at most
// kKC: pack op(B)[block] into 16-column panels (kc x 16, zero-padded; at most 256 KiB, in L2),
// then for each kMC rows of C (A's rows stay in L1 across the panels) and each panel, register
// tiles of kMR x 16: one broadcast of A and two fused multiply-adds per row and k. 16 registers
// hold the 12 accumulators, two of the panel and the broadcast. When A is transposed and more
// than kPackAPanels panels read the kMC rows, they are packed first, tile by tile (kc x kMR):
// the tiles then read their kMR values of each k from one line, where in place they are lda
// apart (at a stride of 4 KiB every k falls in the same L1 set). Untransposed, a tile reads its
// rows in place as kMR sequential streams, as fast as packed ones (packing them would cost a
// transpose).
#include <immintrin.h>

#include <cstdint>

#include "ops/cpu/sgemm.h"

namespace plexus::cpu {
namespace {

constexpr int kNR = 16;       // columns per panel: two 8-float registers
constexpr int kMR = 6;        // rows per register tile: 12 accumulators
constexpr int64_t kKC = 256;  // depth per packed block
constexpr int64_t kNC = 256;  // columns of C per packed block
constexpr int64_t kMC = 24;   // rows of C per pass over the block's panels (24 KiB of A at kKC)
constexpr int64_t kPackAPanels = 4;
static_assert(kKC * kNC + kMC * kKC == kAvx2SgemmWorkspace && kMC % kMR == 0);

inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

// The depth of each block of a product of depth k, equal but for the last: 784 = 4 x 196
// rather than 3 x 256 + 16.
int64_t depth_block(int64_t k) {
  const int64_t blocks = (k + kKC - 1) / kKC;
  return (k + blocks - 1) / blocks;
}

// r[i] (row i of an 8 x 8 tile) becomes column i.
// Always inlined: a call would pass the 8 registers through memory.
[[gnu::always_inline]] inline void transpose8(__m256 r[8]) {
  __m256 t[8], s[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    s[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    s[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    s[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    s[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
  }
}

// panel[p][0..16) = op(B)[k0 + p][j0 .. j0 + nr), zeros past nr.
void pack_panel(float* panel, bool tb, const float* b, int64_t ldb, int64_t k0, int64_t kc, int64_t j0, int64_t nr) {
  int64_t p = 0;
  if (!tb) {
    for (; nr == kNR && p < kc; ++p) {
      const float* src = b + (k0 + p) * ldb + j0;
      _mm256_store_ps(panel + p * kNR, _mm256_loadu_ps(src));
      _mm256_store_ps(panel + p * kNR + 8, _mm256_loadu_ps(src + 8));
    }
  } else {  // op(B)[k][j] = b[j * ldb + k]: 8 x 8 tiles read along k and transposed in registers
    for (; nr == kNR && p + 8 <= kc; p += 8)
      for (int half = 0; half < 2; ++half) {
        __m256 r[8];
        for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(b + (j0 + half * 8 + j) * ldb + k0 + p);
        transpose8(r);
        for (int q = 0; q < 8; ++q) _mm256_store_ps(panel + (p + q) * kNR + half * 8, r[q]);
      }
  }
  // A panel's last columns or depths.
  for (; p < kc; ++p)
    for (int64_t j = 0; j < kNR; ++j)
      panel[p * kNR + j] = j >= nr ? 0.f : tb ? b[(j0 + j) * ldb + k0 + p] : b[(k0 + p) * ldb + j0 + j];
}

// Lanes [0, n) of each half of a 16-column tile, as maskload / maskstore masks.
struct Columns {
  __m256i lo, hi;
  explicit Columns(int64_t n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), lane);
    hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n - 8)), lane);
  }
};

// Where one register tile lands: C's rows from `c` on, nr of its 16 columns, and how
// (C = alpha · acc + beta · C, reading C only when beta is not 0).
struct TileStore {
  float* c;
  int64_t ldc, nr;
  float alpha, beta;
};

// C = alpha · acc + beta · C for an MR x 16 tile.
template <int MR>
void store(const __m256 (&acc)[MR][2], const TileStore& to) {
  const __m256 va = _mm256_set1_ps(to.alpha), vb = _mm256_set1_ps(to.beta);
  const Columns in(to.nr);
  float* row = to.c;
  for (int i = 0; i < MR; ++i, row += to.ldc) {
    __m256 v0 = _mm256_mul_ps(va, acc[i][0]), v1 = _mm256_mul_ps(va, acc[i][1]);
    if (to.nr == kNR) {
      if (to.beta != 0.f) {
        v0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row), v0);
        v1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row + 8), v1);
      }
      _mm256_storeu_ps(row, v0);
      _mm256_storeu_ps(row + 8, v1);
    } else {
      if (to.beta != 0.f) {
        v0 = _mm256_fmadd_ps(vb, _mm256_maskload_ps(row, in.lo), v0);
        v1 = _mm256_fmadd_ps(vb, _mm256_maskload_ps(row + 8, in.hi), v1);
      }
      _mm256_maskstore_ps(row, in.lo, v0);
      _mm256_maskstore_ps(row + 8, in.hi, v1);
    }
  }
}

// One MR x 16 tile of C over one depth block of kc: A's row i at depth p is a[i * lda + p],
// or a[p * lda + i] when kTransA.
template <int MR, bool kTransA>
void tile(const TileStore& to, int64_t kc, const float* a, int64_t lda, const float* panel) {
  __m256 acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p, panel += kNR) {
    const __m256 b0 = _mm256_load_ps(panel), b1 = _mm256_load_ps(panel + 8);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(kTransA ? a + p * lda + i : a + i * lda + p);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
  // A copy goes to store(): with acc's own address taken, GCC kept every accumulator on the
  // stack too, stored at each step of the loop above.
  __m256 out[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) out[i][0] = acc[i][0], out[i][1] = acc[i][1];
  store<MR>(out, to);
}

// The rows of the register tile that starts at row i0 of rows [.., end): kMR, except that a
// last tile of 1 or 2 rows shares the rows of the one before it (20 = 6 + 6 + 4 + 4): with 2 to
// 4 accumulators it could not hide the FMA latency. The number of tiles stays the same.
constexpr int64_t kShortTile = 2;
inline int rows_of_tile(int64_t end, int64_t i0) {
  const int64_t left = end - i0;
  if (left <= kMR) return int(left);
  return left - kMR <= kShortTile ? int((left + 1) / 2) : kMR;
}

template <bool kTransA, int MR = kMR>
void tile_rows(int rows, const TileStore& to, int64_t kc, const float* a, int64_t lda, const float* panel) {
  if constexpr (MR > 1)
    if (rows < MR) return tile_rows<kTransA, MR - 1>(rows, to, kc, a, lda, panel);
  tile<MR, kTransA>(to, kc, a, lda, panel);
}

// op(A)[ic .. end)[k0 .. k0 + kc) as register tiles of rows_of_tile rows, stored tile after tile
// as tile[p * kMR + i] (a transposed A with lda = kMR; rows past a tile's own are never read).
// A is transposed: op(A)[i][k] = a[k * lda + i].
void pack_a(float* packed, const float* a, int64_t lda, int64_t ic, int64_t end, int64_t k0, int64_t kc) {
  for (int64_t i0 = ic, rows; i0 < end; i0 += rows, packed += kc * kMR) {
    rows = rows_of_tile(end, i0);
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t i = 0; i < rows; ++i) packed[p * kMR + i] = a[(k0 + p) * lda + i0 + i];
  }
}

template <bool kTransA>
void product(bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
             int64_t ldb, float beta, float* c, int64_t ldc, float* panels) {
  const int64_t depth = depth_block(k);
  float* packed_a = panels + kKC * kNC;
  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = smaller(kNC, n - jc);
    const bool packing = kTransA && nc > kPackAPanels * kNR;
    for (int64_t k0 = 0; k0 < k; k0 += depth) {
      const int64_t kc = smaller(depth, k - k0);
      for (int64_t j = 0; j < nc; j += kNR)
        pack_panel(panels + j * kc, tb, b, ldb, k0, kc, jc + j, smaller(kNR, nc - j));
      // Later depth blocks add to what the first wrote.
      const float beta_here = k0 == 0 ? beta : 1.f;
      for (int64_t ic = 0; ic < m; ic += kMC) {
        const int64_t end = smaller(m, ic + kMC);
        if (packing) pack_a(packed_a, a, lda, ic, end, k0, kc);
        for (int64_t j = 0; j < nc; j += kNR) {
          const float* tile_a = packed_a;
          for (int64_t i0 = ic, rows; i0 < end; i0 += rows, tile_a += kc * kMR) {
            rows = rows_of_tile(end, i0);
            const TileStore to{c + i0 * ldc + jc + j, ldc, smaller(kNR, nc - j), alpha, beta_here};
            if (packing)
              tile_rows<true>(int(rows), to, kc, tile_a, kMR, panels + j * kc);
            else
              tile_rows<kTransA>(int(rows), to, kc, kTransA ? a + k0 * lda + i0 : a + i0 * lda + k0, lda,
                                 panels + j * kc);
          }
        }
      }
    }
  }
}

}  // namespace

void avx2_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* workspace) {
  if (ta)
    product<true>(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workspace);
  else
    product<false>(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workspace);
}

}  // namespace plexus::cpu
