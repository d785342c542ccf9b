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
#include "ops/cpu/conv_taps.h"
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
template <int MR, class Store>
void tile(const TileAt& at, int64_t pairs, const int32_t* a, const __m512i* panel, const Store& store) {
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

template <int MR = kMR, class Store>
void tile_rows(int rows, const TileAt& at, int64_t pairs, const int32_t* a, const __m512i* panel, const Store& store) {
  if constexpr (MR > 1)
    if (rows < MR) return tile_rows<MR - 1>(rows, at, pairs, a, panel, store);
  tile<MR>(at, pairs, a, panel, store);
}

// C (m x n) = op(A) · op(B) by vdpbf16ps tiles, where pack_b(panel, k0, kc, j0, nr) packs pairs
// q < pairs_of(kc) of op(B)'s rows k0 .. k0 + kc, columns j0 .. j0 + nr, as pack_panel does, and
// store(acc, at) writes each register tile (later depth blocks adding onto the first's).
template <class PackB, class Store>
void dp_product(int64_t m, int64_t n, int64_t k, bool ta, const float* a, int64_t lda, PackB&& pack_b,
                const Store& store, float* workspace) {
  const int64_t depth = depth_block(k);
  // Pairs are 32 bits, as floats: the thread's buffer for A holds them as it holds floats.
  auto* packed = reinterpret_cast<int32_t*>(own_sgemm_thread_packed_a(packed_rows(m) * pairs_of(depth) + 16));
  auto* panel = reinterpret_cast<__m512i*>(workspace);
  for (int64_t k0 = 0; k0 < k; k0 += depth) {
    const int64_t kc = smaller(depth, k - k0), pairs = pairs_of(kc);
    pack_a(packed, ta, a, lda, m, k0, kc);
    for (int64_t j0 = 0; j0 < n; j0 += kNR) {
      const int64_t nr = smaller(kNR, n - j0);
      pack_b(panel, k0, kc, j0, nr);
      const int32_t* tile_a = packed;
      for (int64_t i0 = 0; i0 < m; i0 += kMR, tile_a += pairs * kMR) {
        const TileAt at{i0, j0, k0, kc, first_lanes(nr), first_lanes(nr - 16), k0 == 0, k0 + kc >= k};
        tile_rows(int(smaller(kMR, m - i0)), at, pairs, tile_a, panel, store);
      }
    }
  }
}

#if defined(__AMX_BF16__)
// ---- AMX: the same pairs, multiplied 16 x 16 x 16 at a time ----------------------------------
// tdpbf16ps multiplies a tile of A (16 rows of 16 pairs, 64 bytes a row) by one of B (16 pairs of
// 16 columns, a column's pair in each 32-bit lane) into 16 x 16 FP32 sums, rounding and summing as
// vdpbf16ps does, 16 times its work. B's panels are packed as above, so the two halves of a panel
// are B tiles 128 bytes apart; A is packed row by row instead (row i's pairs in order), and each
// A tile is 16 of those rows. A register block is 32 x 32 of C: tiles 0-3 sum it, 4-5 hold A's two
// row tiles and 6-7 the panel's halves.

constexpr int64_t kAmxDepth = 512;  // per block: a panel of 256 pairs x 32 columns is the 32 KiB workspace
static_assert(kAmxDepth / 2 * kNR <= kOwnSgemmWorkspace);
constexpr int64_t kTilePairs = 16;  // pairs per row of an A tile and rows of a B tile

// Every tile 16 rows of 64 bytes (palette 1). Static, so that the whole of it is in memory when
// ldtilecfg reads it (the intrinsic tells the compiler it reads 8 bytes).
struct TileConfig {
  uint8_t palette, start_row, reserved[14];
  uint16_t bytes_per_row[16];
  uint8_t rows[16];
};
constexpr TileConfig kTiles{1, 0, {}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

// The depth of each block: equal but for the last, whole tiles of 32 k but for the last.
int64_t amx_depth_block(int64_t k) {
  const int64_t blocks = (k + kAmxDepth - 1) / kAmxDepth;
  return ((k + blocks - 1) / blocks + 2 * kTilePairs - 1) / (2 * kTilePairs) * (2 * kTilePairs);
}

// The pairs of a block of depth kc, padded with zeros to whole tiles.
int64_t tile_pairs(int64_t kc) { return (kc + 2 * kTilePairs - 1) / (2 * kTilePairs) * kTilePairs; }

// op(A)[0 .. m)[k0 .. k0 + kc) row by row, row i's tile_pairs(kc) pairs at packed + i * that;
// rows up to a whole tile of 16 and pairs past kc are zeros.
void pack_a_rows(int32_t* packed, bool ta, const float* a, int64_t lda, int64_t m, int64_t k0, int64_t kc) {
  const int64_t pairs = tile_pairs(kc);
  for (int64_t i0 = 0; i0 < m; i0 += 16) {
    const int64_t rows = smaller(16, m - i0);
    for (int64_t q0 = 0; q0 < pairs; q0 += kTilePairs) {
      __m512 r[16];
      if (ta) {  // op(A)[i][k] = a[k * lda + i]: pairs across rows, lane r row i0 + r, turned into rows
        for (int q = 0; q < 16; ++q) r[q] = _mm512_setzero_ps();
        pack_across_rows(a, lda, k0 + 2 * q0, smaller(2 * kTilePairs, kc - 2 * q0), i0, first_lanes(rows),
                         [&](int64_t q, __m512i v) { r[q] = _mm512_castsi512_ps(v); });
        transpose16(r);
      } else {
        for (int i = 0; i < 16; ++i)
          r[i] = i < rows ? pairs_along(a + (i0 + i) * lda + k0 + 2 * q0, kc - 2 * q0) : _mm512_setzero_ps();
      }
      for (int i = 0; i < 16; ++i) _mm512_store_si512(packed + (i0 + i) * pairs + q0, _mm512_castps_si512(r[i]));
    }
  }
}

// sums [32][32] (or its first 16 rows when A_TILES is 1) = A's row tiles · the panel over
// `pairs` pairs; A's rows are `pairs` pairs apart.
template <int A_TILES>
void amx_block(float* sums, const int32_t* a, const __m512i* panel, int64_t pairs) {
  const int64_t a_stride = pairs * 4;  // bytes
  _tile_zero(0);
  _tile_zero(1);
  if constexpr (A_TILES == 2) {
    _tile_zero(2);
    _tile_zero(3);
  }
  for (int64_t q = 0; q < pairs; q += kTilePairs, a += kTilePairs, panel += 2 * kTilePairs) {
    _tile_loadd(6, panel, 128);
    _tile_loadd(7, panel + 1, 128);
    _tile_loadd(4, a, a_stride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    if constexpr (A_TILES == 2) {
      _tile_loadd(5, a + 16 * pairs, a_stride);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, sums, 128);
  _tile_stored(1, sums + 16, 128);
  if constexpr (A_TILES == 2) {
    _tile_stored(2, sums + 16 * 32, 128);
    _tile_stored(3, sums + 16 * 32 + 16, 128);
  }
}

// dp_product by AMX tiles, pack_b and store as there.
template <class PackB, class Store>
void amx_product(int64_t m, int64_t n, int64_t k, bool ta, const float* a, int64_t lda, PackB&& pack_b,
                 const Store& store, float* workspace) {
  const int64_t depth = amx_depth_block(k);
  auto* packed = reinterpret_cast<int32_t*>(own_sgemm_thread_packed_a((m + 15) / 16 * 16 * tile_pairs(depth)));
  auto* panel = reinterpret_cast<__m512i*>(workspace);
  alignas(64) float sums[32 * 32];
  _tile_loadconfig(&kTiles);
  for (int64_t k0 = 0; k0 < k; k0 += depth) {
    const int64_t kc = smaller(depth, k - k0), pairs = tile_pairs(kc);
    pack_a_rows(packed, ta, a, lda, m, k0, kc);
    for (int64_t j0 = 0; j0 < n; j0 += kNR) {
      const int64_t nr = smaller(kNR, n - j0);
      pack_b(panel, k0, kc, j0, nr);
      for (int64_t q = pairs_of(kc); q < pairs; ++q) panel[2 * q] = panel[2 * q + 1] = _mm512_setzero_si512();
      // The tile loads read the packing's stores, which the intrinsics do not tell the compiler.
      asm volatile("" ::: "memory");
      for (int64_t i0 = 0; i0 < m; i0 += 32) {
        const int rows = int(smaller(32, m - i0));
        if (rows > 16)
          amx_block<2>(sums, packed + i0 * pairs, panel, pairs);
        else
          amx_block<1>(sums, packed + i0 * pairs, panel, pairs);
        for (int i = 0; i < rows; ++i) {
          const __m512 row[1][2] = {{_mm512_load_ps(sums + i * 32), _mm512_load_ps(sums + i * 32 + 16)}};
          store(row, TileAt{i0 + i, j0, k0, kc, first_lanes(nr), first_lanes(nr - 16), k0 == 0, k0 + kc >= k});
        }
      }
    }
  }
  _tile_release();
}
#endif

// The product by AMX where the CPU has it, else by vdpbf16ps.
template <class PackB, class Store>
void bf16_product(int64_t m, int64_t n, int64_t k, bool ta, const float* a, int64_t lda, PackB&& pack_b,
                  const Store& store, float* workspace) {
#if defined(__AMX_BF16__)
  if (cpu_has_amx_bf16()) return amx_product(m, n, k, ta, a, lda, pack_b, store, workspace);
#endif
  dp_product(m, n, k, ta, a, lda, pack_b, store, workspace);
}

}  // namespace

void own_sbgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* workspace) {
  auto pack_b = [&](__m512i* panel, int64_t k0, int64_t kc, int64_t j0, int64_t nr) {
    pack_panel(panel, tb, b, ldb, k0, kc, j0, nr);
  };
  bf16_product(m, n, k, ta, a, lda, pack_b, StoreScaled{c, ldc, alpha, beta}, workspace);
}

void conv_forward_image_bf16(float* out, const float* img, const float* w, int64_t og, const ConvShape& g,
                             const float* bias, bool relu, float* workspace) {
  const int64_t kdim = g.c * g.kh * g.kw, plane = g.oh * g.ow;
  // Pair q of a panel: im2col rows k0 + 2q and k0 + 2q + 1 at output positions j0 .. j0 + 32.
  auto pack_b = [&](__m512i* panel, int64_t k0, int64_t kc, int64_t j0, int64_t) {
    with_reader(ColsRow(g, j0), [&](const auto& lo) {
      with_reader(ColsRow(g, j0 + 16), [&](const auto& hi) {
        KernelTap t(g, k0);
        for (int64_t q = 0; q < pairs_of(kc); ++q) {
          const __m512 even0 = lo.load(img + t.offset), even1 = hi.load(img + t.offset);
          t.next(g);
          __m512 odd0 = _mm512_setzero_ps(), odd1 = _mm512_setzero_ps();
          if (2 * q + 1 < kc) {
            odd0 = lo.load(img + t.offset);
            odd1 = hi.load(img + t.offset);
            t.next(g);
          }
          _mm512_store_si512(panel + 2 * q, interleave_pairs(even0, odd0));
          _mm512_store_si512(panel + 2 * q + 1, interleave_pairs(even1, odd1));
        }
      });
    });
  };
  bf16_product(og, plane, kdim, false, w, kdim, pack_b, StoreConv{out, plane, bias, relu}, workspace);
}

void conv_weight_grad_image_bf16(float* gw, const float* gout, const float* img, int64_t og, const ConvShape& g,
                                 float* workspace, bool accumulate) {
  const int64_t kdim = g.c * g.kh * g.kw, plane = g.oh * g.ow;
  // gw (+)= gout · colsᵀ: pair q of a panel holds output positions k0 + 2q and k0 + 2q + 1 of
  // im2col rows j0 .. j0 + 32. Each row's 32 positions are read as 16 pairs along it, and 16
  // rows' pairs transposed in registers. Positions past the depth block are the next block's:
  // their pairs are dropped (a block's depth is even but for the last, which ends the plane).
  auto pack_b = [&](__m512i* panel, int64_t k0, int64_t kc, int64_t j0, int64_t nr) {
    int64_t tap[kNR];  // the image offset of each column's tap
    tap_offsets(tap, g, j0, nr);
    for (int64_t p = 0; p < kc; p += 32) {
      const int64_t pairs = smaller(16, pairs_of(kc - p));
      with_reader(ColsRow(g, k0 + p), [&](const auto& lo) {
        with_reader(ColsRow(g, k0 + p + 16), [&](const auto& hi) {
          for (int half = 0; half < 2; ++half) {
            __m512 r[16];
            for (int j = 0; j < 16; ++j) {
              const int64_t col = half * 16 + j;
              r[j] = col < nr ? _mm512_castsi512_ps(
                                    (__m512i)_mm512_cvtne2ps_pbh(hi.load(img + tap[col]), lo.load(img + tap[col])))
                              : _mm512_setzero_ps();
            }
            transpose16(r);
            for (int64_t q = 0; q < pairs; ++q)
              _mm512_store_si512(panel + (p / 2 + q) * 2 + half, _mm512_castps_si512(r[q]));
          }
        });
      });
    }
  };
  bf16_product(og, kdim, plane, false, gout, plane, pack_b, StoreScaled{gw, kdim, 1.f, accumulate ? 1.f : 0.f},
               workspace);
}

}  // namespace plexus::cpu
