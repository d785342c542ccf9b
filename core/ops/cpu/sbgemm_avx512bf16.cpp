// The bfloat16 matrix product declared in sbgemm.h. This file alone is compiled with
// AVX512_BF16 enabled (core/CMakeLists.txt); cpu_has_bf16_products() (sbgemm.cpp, plain)
// checks the CPU before anything here runs. Like sgemm_avx512.cpp it includes no standard
// header with inline functions.
//
// vdpbf16ps multiplies 16 pairs of bfloat16 and adds each pair's two products into an FP32
// lane: one instruction does the work of two FMAs. The operands are therefore packed in pairs
// along k, each pair one 32-bit lane (the lower half the even k):
//   op(A), one depth block at a time: tiles of kMR rows, tile[q * kMR + i] = (A[i][2q], A[i][2q+1]);
//   op(B), one 32-column panel of the block at a time: panel[q][j] = (B[2q][j], B[2q+1][j]).
// Rounding to bfloat16 (to nearest, ties to even: vcvtne2ps2bf16) happens in the packing; an
// odd depth pairs its last k with a zero. Each tile then keeps kMR x 32 FP32 sums in 24
// registers: per pair, one broadcast of A's pair and two vdpbf16ps per row.
#include <immintrin.h>

// As in sgemm_avx512.cpp: GCC 12's shuffles inlined into transpose16 trip -Wuninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstdint>

#include "ops/cpu/avx512_tile.h"
#include "ops/cpu/sbgemm.h"
#include "ops/cpu/sgemm.h"

namespace plexus::cpu {
namespace {

constexpr int kNR = 32;       // columns per panel: two registers of 16 pairs
constexpr int kMR = 12;       // rows per register tile: 24 accumulators of 16
constexpr int64_t kKC = 256;  // depth per block: a panel of 128 pairs x 32 lanes is 16 KiB, in L1
static_assert(kKC / 2 * kNR <= kOwnSgemmWorkspace);

// The depth of each block, equal but for the last and even, so that every block but the last
// is whole pairs.
int64_t depth_block(int64_t k) {
  const int64_t blocks = (k + kKC - 1) / kKC;
  return ((k + blocks - 1) / blocks + 1) / 2 * 2;
}

int64_t pairs_of(int64_t kc) { return (kc + 1) / 2; }

// Two FP32 vectors rounded to bfloat16 and interleaved: lane j of the result is
// (even[j], odd[j]), even in the lower half.
__m512i interleave_pairs(__m512 even, __m512 odd) {
  // cvtne2ps gives even's 16 values in words 0..15 and odd's in 16..31; word 2j takes j, 2j+1 takes 16 + j.
  const __m512i index =
      _mm512_set_epi32(0x001F000F, 0x001E000E, 0x001D000D, 0x001C000C, 0x001B000B, 0x001A000A, 0x00190009, 0x00180008,
                       0x00170007, 0x00160006, 0x00150005, 0x00140004, 0x00130003, 0x00120002, 0x00110001, 0x00100000);
  return _mm512_permutexvar_epi16(index, (__m512i)_mm512_cvtne2ps_pbh(odd, even));
}

// 32 consecutive k of one row (lanes past `count` zero) as 16 pairs: lane q is (k 2q, k 2q + 1).
__m512 pairs_along(const float* src, int64_t count) {
  const __m512 lo = _mm512_maskz_loadu_ps(first_lanes(count), src);
  const __m512 hi = _mm512_maskz_loadu_ps(first_lanes(count - 16), src + 16);
  return _mm512_castsi512_ps((__m512i)_mm512_cvtne2ps_pbh(hi, lo));
}

// Pairs of a matrix M whose k runs across rows (M[k][x] = m[k * ld + x]): lanes x0 .. x0 + 16
// (those in `in`) of pairs q = 0 .. pairs of depth kc from k0, each stored by put(q, vector).
template <class Put>
void pack_across_rows(const float* m, int64_t ld, int64_t k0, int64_t kc, int64_t x0, __mmask16 in, Put&& put) {
  for (int64_t q = 0; q < pairs_of(kc); ++q) {
    const float* even = m + (k0 + 2 * q) * ld + x0;
    const __m512 e = _mm512_maskz_loadu_ps(in, even);
    const __m512 o = 2 * q + 1 < kc ? _mm512_maskz_loadu_ps(in, even + ld) : _mm512_setzero_ps();
    put(q, interleave_pairs(e, o));
  }
}

// Pairs of a matrix M whose k runs along rows (M[x][k] = m[x * ld + k]): rows x0 .. x0 + rows
// (rows <= 16, the others zero) transposed 16 pairs at a time, so that put(q, vector) gets
// pair q of every row, row r in lane r.
template <class Put>
void pack_along_rows(const float* m, int64_t ld, int64_t k0, int64_t kc, int64_t x0, int64_t rows, Put&& put) {
  for (int64_t p = 0; p < kc; p += 32) {
    __m512 r[16];
    for (int i = 0; i < 16; ++i)
      r[i] = i < rows ? pairs_along(m + (x0 + i) * ld + k0 + p, kc - p) : _mm512_setzero_ps();
    transpose16(r);
    for (int64_t q = 0; q < smaller(16, pairs_of(kc - p)); ++q) put(p / 2 + q, _mm512_castps_si512(r[q]));
  }
}

// panel[q * 2 + h] = pairs q of op(B)[k0 .., j0 + 16h .. j0 + 16h + 16), zeros past nr.
void pack_panel(__m512i* panel, bool tb, const float* b, int64_t ldb, int64_t k0, int64_t kc, int64_t j0, int64_t nr) {
  for (int h = 0; h < 2; ++h) {
    auto put = [&](int64_t q, __m512i v) { _mm512_store_si512(panel + q * 2 + h, v); };
    if (tb)  // op(B)[k][j] = b[j * ldb + k]
      pack_along_rows(b, ldb, k0, kc, j0 + 16 * h, smaller(16, nr - 16 * h), put);
    else
      pack_across_rows(b, ldb, k0, kc, j0 + 16 * h, first_lanes(nr - 16 * h), put);
  }
}

// Rows of op(A) packed: whole tiles of kMR.
int64_t packed_rows(int64_t m) { return (m + kMR - 1) / kMR * kMR; }

// op(A)[0 .. m)[k0 .. k0 + kc) in tiles of kMR rows, tile after tile, each pairs_of(kc) x kMR
// lanes (zeros past m), each pair's kMR lanes written by a masked store.
void pack_a(int32_t* packed, bool ta, const float* a, int64_t lda, int64_t m, int64_t k0, int64_t kc) {
  const __mmask16 tile = first_lanes(kMR);
  for (int64_t i0 = 0; i0 < m; i0 += kMR, packed += pairs_of(kc) * kMR) {
    auto put = [&](int64_t q, __m512i v) { _mm512_mask_storeu_epi32(packed + q * kMR, tile, v); };
    if (ta)  // op(A)[i][k] = a[k * lda + i]
      pack_across_rows(a, lda, k0, kc, i0, first_lanes(smaller(kMR, m - i0)), put);
    else
      pack_along_rows(a, lda, k0, kc, i0, smaller(kMR, m - i0), put);
  }
}

// acc[0..MR) += A's tile · panel over `pairs` pairs.
template <int MR>
void tile(const TileAt& at, int64_t pairs, const int32_t* a, const __m512i* panel, const StoreScaled& store) {
  __m512 acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t q = 0; q < pairs; ++q, a += kMR, panel += 2) {
    const __m512bh b0 = (__m512bh)_mm512_load_si512(panel), b1 = (__m512bh)_mm512_load_si512(panel + 1);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512bh ai = (__m512bh)_mm512_set1_epi32(a[i]);
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
    }
  }
  store(acc, at);
}

template <int MR = kMR>
void tile_rows(int rows, const TileAt& at, int64_t pairs, const int32_t* a, const __m512i* panel,
               const StoreScaled& store) {
  if constexpr (MR > 1)
    if (rows < MR) return tile_rows<MR - 1>(rows, at, pairs, a, panel, store);
  tile<MR>(at, pairs, a, panel, store);
}

}  // namespace

void own_sbgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* workspace) {
  const int64_t depth = depth_block(k);
  // Pairs are 32 bits, as floats: the thread's buffer for A holds them as it holds floats.
  auto* packed = reinterpret_cast<int32_t*>(own_sgemm_thread_packed_a(packed_rows(m) * pairs_of(depth) + 16));
  auto* panel = reinterpret_cast<__m512i*>(workspace);
  const StoreScaled store{c, ldc, alpha, beta};
  for (int64_t k0 = 0; k0 < k; k0 += depth) {
    const int64_t kc = smaller(depth, k - k0), pairs = pairs_of(kc);
    pack_a(packed, ta, a, lda, m, k0, kc);
    for (int64_t j0 = 0; j0 < n; j0 += kNR) {
      const int64_t nr = smaller(kNR, n - j0);
      pack_panel(panel, tb, b, ldb, k0, kc, j0, nr);
      const int32_t* tile_a = packed;
      for (int64_t i0 = 0; i0 < m; i0 += kMR, tile_a += pairs * kMR) {
        const TileAt at{i0, j0, k0, kc, first_lanes(nr), first_lanes(nr - 16), k0 == 0, k0 + kc >= k};
        tile_rows(int(smaller(kMR, m - i0)), at, pairs, tile_a, panel, store);
      }
    }
  }
}

}  // namespace plexus::cpu
