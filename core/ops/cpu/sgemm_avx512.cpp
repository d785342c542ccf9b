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

// GCC 12's avx512fintrin.h fills the unused source of its unmasked shuffles with
// _mm512_undefined_ps(), which trips -Wuninitialized wherever transpose16 is inlined (the
// build already drops -Wmaybe-uninitialized for this file for the same reason).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstdint>

#include "ops/cpu/avx512_tile.h"
#include "ops/cpu/conv_taps.h"
#include "ops/cpu/sgemm.h"

namespace plexus::cpu {
namespace {

constexpr int kNR = 32;         // columns per panel: two 16-float registers
constexpr int kMR = 12;         // rows per register tile: 24 accumulators of 32
constexpr int64_t kKC = 256;    // depth per packed panel: 32 KiB, stays in L1 with A's rows
static_assert(kKC * kNR == kOwnSgemmWorkspace);
static_assert(kMR == kOwnSgemmTileRows);

// The depth of each block of a product of depth k, equal but for the last: 784 = 4 x 196
// rather than 3 x 256 + 16.
int64_t depth_block(int64_t k) {
  const int64_t blocks = (k + kKC - 1) / kKC;
  return (k + blocks - 1) / blocks;
}

// Rows of op(A) packed: whole tiles of kMR.
int64_t packed_rows(int64_t m) { return (m + kMR - 1) / kMR * kMR; }

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

// acc[i] += a[i * stride] · (b0, b1) for each row i < MR: one step of every register tile; a
// narrow tile (kNarrow: its panel's columns all in b0) leaves acc[i][1] alone. Always inlined:
// the accumulators stay in registers.
template <int MR, bool kNarrow>
[[gnu::always_inline]] inline void rank1(__m512 (&acc)[MR][2], const float* a, int64_t stride, __m512 b0, __m512 b1) {
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    const __m512 ai = _mm512_set1_ps(a[i * stride]);
    acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
    if constexpr (!kNarrow) acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
  }
}

// acc[0..MR) += A[0..MR)[0..kc) · panel, where A's row i at k is a[i * lda + k], or
// a[k * lda + i] when kTransA.
template <int MR, bool kTransA, bool kNarrow>
void accumulate(__m512 (&acc)[MR][2], int64_t kc, const float* a, int64_t lda, const float* panel) {
  for (int64_t p = 0; p < kc; ++p, panel += kNR) {
    const __m512 b0 = _mm512_load_ps(panel), b1 = kNarrow ? b0 : _mm512_load_ps(panel + 16);
    if constexpr (kTransA)  // A's column k is contiguous: a[k * lda + i]
      rank1<MR, kNarrow>(acc, a + p * lda, 1, b0, b1);
    else  // A's row i is contiguous: a[i * lda + k]
      rank1<MR, kNarrow>(acc, a + p, lda, b0, b1);
  }
}

// One MR x 32 tile over one depth block, handed to epilogue(acc, at) to land in C.
template <int MR, bool kTransA, bool kNarrow, class Epilogue>
void tile(const TileAt& at, const float* a, int64_t lda, const float* panel, Epilogue& epilogue) {
  __m512 acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  accumulate<MR, kTransA, kNarrow>(acc, at.kc, a, lda, panel);
  epilogue(acc, at);
}

// The rows of the register tile that starts at row i0 of C's m: mr, except that a last tile
// of 1 to 3 rows shares the rows of the one before it (50 = 12 + 12 + 12 + 7 + 7): with 2 to 6
// accumulators it could not hide the FMA latency, and would take as long per depth step as a
// tile of 4 rows. The number of tiles stays (m + mr - 1) / mr.
constexpr int64_t kShortTile = 3;
inline int rows_of_tile(int64_t m, int64_t i0, int64_t mr = kMR) {
  const int64_t left = m - i0;
  if (left <= mr) return int(left);
  return left - mr <= kShortTile ? int((left + 1) / 2) : int(mr);
}

// A panel of at most 16 columns (attention's head width, a product's last columns) fills one
// register per row, so its tiles take 16 rows: twice the useful multiply-adds per step of a
// 12 x 32 tile whose second half would multiply zeros.
constexpr int kNarrowMR = 16;

template <bool kTransA, bool kNarrow, class Epilogue, int MR = kNarrow ? kNarrowMR : kMR>
void tile_rows(int rows, const TileAt& at, const float* a, int64_t lda, const float* panel, Epilogue& epilogue) {
  if constexpr (MR > 1)
    if (rows < MR) return tile_rows<kTransA, kNarrow, Epilogue, MR - 1>(rows, at, a, lda, panel, epilogue);
  tile<MR, kTransA, kNarrow>(at, a, lda, panel, epilogue);
}

// The loops every product here shares: for each depth block of at most kKC and each 32-column
// panel of C, pack(panel, k0, kc, j0, nr) fills the panel with op(B)[k0 .. k0 + kc)
// [j0 .. j0 + nr) (zeros past nr), then each rows_of_tile rows of C get one register tile.
// Depth blocks outermost: a deep product (a weight gradient over 8192 rows) reads each block of
// A from memory once for all its panels, then from L2; C, which it revisits, is small.
template <bool kTransA, class Pack, class Epilogue>
void blocked_product(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, float* panel, Pack&& pack,
                     Epilogue&& epilogue) {
  const int64_t depth = depth_block(k);
  for (int64_t k0 = 0; k0 < k; k0 += depth) {
    const int64_t kc = smaller(depth, k - k0);
    for (int64_t j0 = 0; j0 < n; j0 += kNR) {
      const int64_t nr = smaller(kNR, n - j0);
      pack(panel, k0, kc, j0, nr);
      const bool narrow = nr <= 16;
      for (int64_t i0 = 0, rows; i0 < m; i0 += rows) {
        rows = rows_of_tile(m, i0, narrow ? kNarrowMR : kMR);
        const TileAt at{i0, j0, k0, kc, first_lanes(nr), first_lanes(nr - 16), k0 == 0, k0 + kc >= k};
        const float* tile_a = kTransA ? a + k0 * lda + i0 : a + i0 * lda + k0;
        if (narrow) tile_rows<kTransA, true>(int(rows), at, tile_a, lda, panel, epilogue);
        else tile_rows<kTransA, false>(int(rows), at, tile_a, lda, panel, epilogue);
      }
    }
  }
}

// op(A)[i0 .. i0 + rows)[k0 .. k0 + kc) of each register tile, stored tile after tile as
// tile[p * kMR + i] (zeros past its rows): the tile then reads its kMR values of each k from one
// line, where op(A) in place may have them lda apart (columns of A when transposed: a
// stride of 4 KiB puts every k in the same L1 set and on a new page).
void pack_a(float* packed, bool ta, const float* a, int64_t lda, int64_t m, int64_t k0, int64_t kc) {
  for (int64_t i0 = 0, rows; i0 < m; i0 += rows, packed += kc * kMR) {
    rows = rows_of_tile(m, i0);
    if (ta) {  // op(A)[i][k] = a[k * lda + i]: each k's rows are contiguous
      const __mmask16 in = first_lanes(rows);
      for (int64_t p = 0; p < kc; ++p) {
        // The 12 floats of row p; 16-lane stores overlap the next row's start, which its
        // own store then writes (the last row's spill is the buffer's slack).
        _mm512_storeu_ps(packed + p * kMR, _mm512_maskz_loadu_ps(in, a + (k0 + p) * lda + i0));
      }
    } else {  // op(A)[i][k] = a[i * lda + k]: 16 ks of each row, transposed in registers
      for (int64_t p = 0; p < kc; p += 16) {
        const __mmask16 depth = first_lanes(kc - p);
        __m512 r[16];
        for (int i = 0; i < 16; ++i)
          r[i] = i < rows ? _mm512_maskz_loadu_ps(depth, a + (i0 + i) * lda + k0 + p) : _mm512_setzero_ps();
        transpose16(r);
        const __mmask16 in = first_lanes(kMR);
        for (int64_t q = 0; q < smaller(16, kc - p); ++q) _mm512_mask_storeu_ps(packed + (p + q) * kMR, in, r[q]);
      }
    }
  }
}

// Depth block by depth block: block_of_a(k0, kc) gives op(A)'s block packed by pack_a, then
// every panel of C runs over it, each packed tile read as a transposed A with lda = kMR.
template <class BlockOfA>
void packed_product(bool tb, int64_t m, int64_t n, int64_t k, float alpha, BlockOfA&& block_of_a, const float* b,
                    int64_t ldb, float beta, float* c, int64_t ldc, float* panel) {
  const int64_t depth = depth_block(k);
  StoreScaled store{c, ldc, alpha, beta};
  for (int64_t k0 = 0; k0 < k; k0 += depth) {
    const int64_t kc = smaller(depth, k - k0);
    const float* tile_a = block_of_a(k0, kc);
    for (int64_t j0 = 0; j0 < n; j0 += kNR) {
      const int64_t nr = smaller(kNR, n - j0);
      pack_panel(panel, tb, b, ldb, k0, kc, j0, nr);
      const float* a = tile_a;
      for (int64_t i0 = 0, rows; i0 < m; i0 += rows, a += kc * kMR) {
        rows = rows_of_tile(m, i0);
        const TileAt at{i0, j0, k0, kc, first_lanes(nr), first_lanes(nr - 16), k0 == 0, k0 + kc >= k};
        tile_rows<true, false>(int(rows), at, a, kMR, panel, store);
      }
    }
  }
}

template <bool kTransA>
void product(bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
             int64_t ldb, float beta, float* c, int64_t ldc, float* panel) {
  if ((n + kNR - 1) / kNR <= kOwnSgemmPackAPanels) {
    auto pack_b = [&](float* p, int64_t k0, int64_t kc, int64_t j0, int64_t nr) { pack_panel(p, tb, b, ldb, k0, kc, j0, nr); };
    return blocked_product<kTransA>(m, n, k, a, lda, panel, pack_b, StoreScaled{c, ldc, alpha, beta});
  }
  // A's depth blocks packed one at a time into one block's room.
  float* packed = own_sgemm_thread_packed_a(packed_rows(m) * depth_block(k) + 16);
  auto block_of_a = [&](int64_t k0, int64_t kc) {
    pack_a(packed, kTransA, a, lda, m, k0, kc);
    return packed;
  };
  packed_product(tb, m, n, k, alpha, block_of_a, b, ldb, beta, c, ldc, panel);
}

}  // namespace

void conv_forward_image(float* out, const float* img, const float* w, int64_t og, const ConvShape& g,
                        const float* bias, bool relu, float* panel) {
  const int64_t kdim = g.c * g.kh * g.kw, plane = g.oh * g.ow;
  // Panel rows are im2col rows k0 .. k0 + kc, its columns output positions j0 .. j0 + 32.
  auto pack = [&](float* p, int64_t k0, int64_t kc, int64_t j0, int64_t) {
    with_reader(ColsRow(g, j0), [&](const auto& lo) {
      with_reader(ColsRow(g, j0 + 16), [&](const auto& hi) {
        KernelTap t(g, k0);
        for (int64_t r = 0; r < kc; ++r, t.next(g)) {
          _mm512_store_ps(p + r * kNR, lo.load(img + t.offset));
          _mm512_store_ps(p + r * kNR + 16, hi.load(img + t.offset));
        }
      });
    });
  };
  blocked_product<false>(og, plane, kdim, w, kdim, panel, pack, StoreConv{out, plane, bias, relu});
}

void conv_weight_grad_image(float* gw, const float* gout, const float* img, int64_t og, const ConvShape& g,
                            float* panel, bool accumulate) {
  const int64_t kdim = g.c * g.kh * g.kw, plane = g.oh * g.ow;
  // gw (+)= gout · colsᵀ: panel rows are output positions k0 .. k0 + kc, its columns im2col
  // rows j0 .. j0 + 32, read 16 positions at a time and transposed in registers.
  auto pack = [&](float* p, int64_t k0, int64_t kc, int64_t j0, int64_t nr) {
    int64_t tap[kNR];  // the image offset of each column's tap
    tap_offsets(tap, g, j0, nr);
    for (int64_t q = 0; q < kc; q += 16) {
      const int64_t rows = smaller(16, kc - q);
      with_reader(ColsRow(g, k0 + q), [&](const auto& row) {
        for (int half = 0; half < 2; ++half) {
          __m512 r[16];
          for (int j = 0; j < 16; ++j)
            r[j] = half * 16 + j < nr ? row.load(img + tap[half * 16 + j]) : _mm512_setzero_ps();
          // Lanes past this depth block's positions are the next block's; their rows are dropped.
          transpose16(r);
          for (int64_t s = 0; s < rows; ++s) _mm512_store_ps(p + (q + s) * kNR + half * 16, r[s]);
        }
      });
    }
  };
  blocked_product<false>(og, kdim, plane, gout, plane, panel, pack, StoreScaled{gw, kdim, 1.f, accumulate ? 1.f : 0.f});
}

namespace {

// ---- Convolution on a grid (conv_grid.h) ------------------------------------------------------
// Every im2col row is a stretch of the grid, so neither product packs the image: the forward
// product reads its 32 columns of each row in place, the weight gradient broadcasts them.

template <int N>
struct Rows {};

// f(Rows<rows>{}) for 1 <= rows <= MAX, with rows known when compiled.
template <int MAX, int MR = MAX, class F>
void with_rows(int rows, F&& f) {
  if constexpr (MR > 1)
    if (rows < MR) return with_rows<MAX, MR - 1>(rows, f);
  f(Rows<MR>{});
}

// The rows of tile t when m rows are split into tiles of at most `most` rows, as evenly as can
// be (16 = 8 + 8, not 12 + 4: a tile of few rows has too few accumulators to hide the
// multiply-add latency).
struct EvenTiles {
  EvenTiles(int64_t m, int64_t most) : count((m + most - 1) / most), base(m / count), extra(m % count) {}
  int rows(int64_t t) const { return int(base + (t < extra ? 1 : 0)); }
  int64_t count, base, extra;
};

// out[0..MR)[0..32) = Σ_k wt[k][0..MR) · grid[offsets[k] ..][0..32).
template <int MR>
void forward_tile(float* out, int64_t ldo, const float* grid, const int64_t* offsets, int64_t taps, const float* wt,
                  int64_t ldw) {
  __m512 acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < taps; ++k, wt += ldw) {
    const float* row = grid + offsets[k];
    rank1<MR, false>(acc, wt, 1, _mm512_loadu_ps(row), _mm512_loadu_ps(row + 16));
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    _mm512_storeu_ps(out + i * ldo, acc[i][0]);
    _mm512_storeu_ps(out + i * ldo + 16, acc[i][1]);
  }
}

// c[0..MR)[0..16 NV) (+)= Σ_p rows[i][p] · panel[p], the panel NV registers (16 NV columns, lanes
// `in` of its last register) wide: c's rows ldc apart, added onto when `add`.
template <int MR, int NV>
void weight_grad_tile(float* c, int64_t ldc, const float* const* rows, int64_t kc, const float* panel, __mmask16 in,
                      bool add) {
  const float* r[MR];
  __m512 acc[MR][NV];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i) {
    r[i] = rows[i];
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p, panel += kNR) {
    __m512 b[NV];
    for (int v = 0; v < NV; ++v) b[v] = _mm512_load_ps(panel + 16 * v);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i) {
      const __m512 a = _mm512_set1_ps(r[i][p]);
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(a, b[v], acc[i][v]);
    }
  }
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i, c += ldc)
    for (int v = 0; v < NV; ++v) {
      const __mmask16 m = v == NV - 1 ? in : __mmask16(0xFFFF);
      __m512 x = acc[i][v];
      if (add) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, c + 16 * v));
      _mm512_mask_storeu_ps(c + 16 * v, m, x);
    }
}

}  // namespace

void conv_forward_grid(float* out, const float* grid, const int64_t* offsets, const float* wt, int64_t og,
                       const ConvGrid& shape) {
  const EvenTiles tiles(og, kMR);
  for (int64_t j0 = 0; j0 < shape.columns; j0 += kNR)
    for (int64_t t = 0, i0 = 0; t < tiles.count; i0 += tiles.rows(t), ++t)
      with_rows<kMR>(tiles.rows(t), [&]<int MR>(Rows<MR>) {
        forward_tile<MR>(out + i0 * shape.columns + j0, shape.columns, grid + j0, offsets, shape.taps, wt + i0, og);
      });
}

void conv_weight_grad_grid(float* gwt, const float* grid, const int64_t* offsets, const float* gout_rows, int64_t og,
                           const ConvShape& g, const ConvGrid& shape, float* panel, bool accumulate) {
  const int64_t positions = g.oh * shape.cols;  // the product's depth: gout_rows is 0 past it
  const int64_t depth = depth_block(positions);
  for (int64_t j0 = 0; j0 < og; j0 += kNR) {
    const int64_t nr = smaller(kNR, og - j0);
    // At most 16 channels: one register across, so twice the rows (24 accumulators either way).
    const bool narrow = nr <= 16;
    const EvenTiles tiles(shape.taps, narrow ? 2 * kMR : kMR);
    for (int64_t k0 = 0; k0 < positions; k0 += depth) {
      const int64_t kc = smaller(depth, positions - k0);
      // panel[p][j] = gout_rows[j0 + j][k0 + p]: the output gradient's positions down, channels across.
      pack_panel(panel, true, gout_rows, shape.columns, k0, kc, j0, nr);
      const bool add = accumulate || k0 > 0;
      for (int64_t t = 0, i0 = 0; t < tiles.count; i0 += tiles.rows(t), ++t) {
        const float* rows[2 * kMR];
        for (int i = 0; i < tiles.rows(t); ++i) rows[i] = grid + offsets[i0 + i] + k0;
        float* c = gwt + i0 * og + j0;
        if (narrow)
          with_rows<2 * kMR>(tiles.rows(t), [&]<int MR>(Rows<MR>) {
            weight_grad_tile<MR, 1>(c, og, rows, kc, panel, first_lanes(nr), add);
          });
        else
          with_rows<kMR>(tiles.rows(t), [&]<int MR>(Rows<MR>) {
            weight_grad_tile<MR, 2>(c, og, rows, kc, panel, first_lanes(nr - 16), add);
          });
      }
    }
  }
}

// ---- Copies into and out of grids (conv_grid.h), 16 columns at a time -------------------------

void to_conv_grid(float* grid, const float* img, const ConvShape& g, const ConvGrid& shape) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  float* at = grid;
  for (int64_t ch = 0; ch < g.c; ++ch)
    for (int64_t r = 0; r < g.sh; ++r)
      for (int64_t t = 0; t < g.sw; ++t) {
        // Grid column b is image column t + b*sw - pw, inside for b in [lo, hi).
        const int64_t lo = (g.pw - t + g.sw - 1) / g.sw;  // pw - t > -sw: rounds up
        const int64_t hi = smaller(shape.cols, g.w + g.pw - t > 0 ? (g.w + g.pw - t + g.sw - 1) / g.sw : 0);
        for (int64_t a = 0; a < shape.rows; ++a, at += shape.cols) {
          const int64_t y = r + a * g.sh - g.ph;
          const bool inside = y >= 0 && y < g.h;
          // Lane l of block b0 reads row[(b0 + l) * sw] (a masked lane reads nothing).
          const float* row = inside ? img + (ch * g.h + y) * g.w + t - g.pw : img;
          for (int64_t b0 = 0; b0 < shape.cols; b0 += 16) {
            const __mmask16 m = inside ? lane_range(lo - b0, hi - b0) : __mmask16(0);
            __m512 v;
            if (g.sw == 1) {
              v = _mm512_maskz_loadu_ps(m, row + b0);
            } else if (g.sw == 2) {  // the even floats of two registers: a gather here is far slower
              const int64_t x0 = 2 * b0, first = 2 * (lo > b0 ? lo : b0), end = 2 * (hi > b0 ? hi : b0) - 1;
              const __m512 v0 = _mm512_maskz_loadu_ps(lane_range(first - x0, end - x0), row + x0);
              const __m512 v1 = _mm512_maskz_loadu_ps(lane_range(first - x0 - 16, end - x0 - 16), row + x0 + 16);
              v = _mm512_maskz_permutex2var_ps(m, v0, even, v1);
            } else {
              const __m512i index = _mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(int(b0))),
                                                       _mm512_set1_epi32(int(g.sw)));
              v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, index, row, 4);
            }
            _mm512_mask_storeu_ps(at + b0, first_lanes(shape.cols - b0), v);
          }
        }
      }
  for (; at < grid + shape.floats; at += 16)
    _mm512_mask_storeu_ps(at, first_lanes(grid + shape.floats - at), _mm512_setzero_ps());
}

void plane_to_grid(float* rows, const float* planes_in, int64_t planes, const ConvShape& g, const ConvGrid& grid) {
  for (int64_t p = 0; p < planes; ++p, rows += grid.columns) {
    for (int64_t y = 0; y < g.oh; ++y)
      for (int64_t x0 = 0; x0 < grid.cols; x0 += 16)
        _mm512_mask_storeu_ps(rows + y * grid.cols + x0, first_lanes(grid.cols - x0),
                              _mm512_maskz_loadu_ps(first_lanes(g.ow - x0), planes_in + (p * g.oh + y) * g.ow + x0));
    for (int64_t q = g.oh * grid.cols; q < grid.columns; q += 16)
      _mm512_mask_storeu_ps(rows + q, first_lanes(grid.columns - q), _mm512_setzero_ps());
  }
}

void grid_to_plane(float* planes_out, const float* rows, int64_t planes, const ConvShape& g, const ConvGrid& grid,
                   const float* bias, bool relu) {
  for (int64_t p = 0; p < planes; ++p, rows += grid.columns) {
    const __m512 b = _mm512_set1_ps(bias ? bias[p] : 0.f);
    for (int64_t y = 0; y < g.oh; ++y)
      for (int64_t x0 = 0; x0 < g.ow; x0 += 16) {
        const __mmask16 m = first_lanes(g.ow - x0);
        __m512 v = _mm512_maskz_loadu_ps(m, rows + y * grid.cols + x0);
        if (bias) v = _mm512_add_ps(v, b);
        if (relu) v = _mm512_max_ps(_mm512_setzero_ps(), v);  // answers v when v is NaN, as relu does
        _mm512_mask_storeu_ps(planes_out + (p * g.oh + y) * g.ow + x0, m, v);
      }
  }
}

void max_pool_2x2(float* out, float* argmax, const float* x, int64_t planes, int64_t h, int64_t w) {
  const int64_t oh = h / 2, ow = w / 2;
  // Even and odd columns of 32 consecutive floats (two registers).
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 lane2 = _mm512_setr_ps(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512 offs[3] = {_mm512_set1_ps(1.f), _mm512_set1_ps(float(w)), _mm512_set1_ps(float(w + 1))};
  // 16 output columns at a time through every row of every plane, so that the masks are
  // made once (the planes of a small convnet are one block wide).
  for (int64_t xo = 0; xo < ow; xo += 16) {
    const __mmask16 m = first_lanes(ow - xo), lo = first_lanes(2 * (ow - xo)), hi = first_lanes(2 * (ow - xo) - 16);
    for (int64_t p = 0; p < planes; ++p) {
      const float* r0 = x + p * h * w + 2 * xo;
      float* best_at = out + p * oh * ow + xo;
      float* arg_at = argmax + p * oh * ow + xo;
      __m512 first = _mm512_add_ps(_mm512_set1_ps(float(2 * xo)), lane2);  // window's top-left cell
      for (int64_t y = 0; y < oh; ++y, r0 += 2 * w, best_at += ow, arg_at += ow) {
        const float* r1 = r0 + w;
        const __m512 a0 = _mm512_maskz_loadu_ps(lo, r0), a1 = _mm512_maskz_loadu_ps(hi, r0 + 16);
        const __m512 b0 = _mm512_maskz_loadu_ps(lo, r1), b1 = _mm512_maskz_loadu_ps(hi, r1 + 16);
        // The window in scan order, as math::window_max: a later cell wins when greater or NaN.
        const __m512 cand[3] = {_mm512_permutex2var_ps(a0, odd, a1), _mm512_permutex2var_ps(b0, even, b1),
                                _mm512_permutex2var_ps(b0, odd, b1)};
        __m512 best = _mm512_permutex2var_ps(a0, even, a1);
        __m512 at = first;
        for (int k = 0; k < 3; ++k) {
          const __mmask16 take = _mm512_cmp_ps_mask(cand[k], best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(cand[k], cand[k], _CMP_UNORD_Q);
          best = _mm512_mask_mov_ps(best, take, cand[k]);
          at = _mm512_mask_mov_ps(at, take, _mm512_add_ps(first, offs[k]));
        }
        _mm512_mask_storeu_ps(best_at, m, best);
        _mm512_mask_storeu_ps(arg_at, m, at);
        first = _mm512_add_ps(first, _mm512_set1_ps(float(2 * w)));
      }
    }
  }
}

void unpool_2x2_grad(float* gconv, const float* gout, const float* out, const float* argmax, int64_t planes,
                     int64_t h, int64_t w, bool relu) {
  // Written densely rather than scattered into a zeroed plane: each window's gradient and
  // argmax are doubled into the two columns it covers, and a cell keeps the gradient where it
  // is its window's argmax. 16 windows (32 columns) at a time through every row pair of every
  // plane, so that the masks are made once.
  const int64_t oh = h / 2, ow = w / 2;
  const __m512i dup[2] = {_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7),
                          _mm512_setr_epi32(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15)};
  const __m512 lane = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int64_t x0 = 0; x0 < w; x0 += 32) {
    // Windows that exist (none for an odd last column: it gets 0), and the columns.
    const __mmask16 in = first_lanes(ow - x0 / 2), cols[2] = {first_lanes(w - x0), first_lanes(w - x0 - 16)};
    for (int64_t p = 0; p < planes; ++p) {
      float* row = gconv + p * h * w + x0;
      const int64_t pooled = p * oh * ow + x0 / 2;
      __m512 cell[2] = {_mm512_add_ps(_mm512_set1_ps(float(x0)), lane), _mm512_add_ps(_mm512_set1_ps(float(x0 + 16)), lane)};
      for (int64_t y = 0; y < oh; ++y) {
        __m512 g = _mm512_maskz_loadu_ps(in, gout + pooled + y * ow);
        // Where the ReLU let the window's maximum through.
        if (relu) g = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(in, out + pooled + y * ow), _mm512_setzero_ps(), _CMP_GT_OQ), g);
        const __m512 am = _mm512_maskz_loadu_ps(in, argmax + pooled + y * ow);
        for (int half = 0; half < 2; ++half) {
          const __m512 g2 = _mm512_permutexvar_ps(dup[half], g), am2 = _mm512_permutexvar_ps(dup[half], am);
          for (int r = 0; r < 2; ++r) {  // the window's two rows
            const __m512 at = _mm512_add_ps(cell[half], _mm512_set1_ps(float(r * w)));
            _mm512_mask_storeu_ps(row + r * w + 16 * half, cols[half],
                                  _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(am2, at, _CMP_EQ_OQ), g2));
          }
          cell[half] = _mm512_add_ps(cell[half], _mm512_set1_ps(float(2 * w)));
        }
        row += 2 * w;
      }
      // An odd last row no window covers.
      if (h % 2)
        for (int half = 0; half < 2; ++half) _mm512_mask_storeu_ps(row + 16 * half, cols[half], _mm512_setzero_ps());
    }
  }
}

void row_sums(float* out, const float* a, int64_t rows, int64_t cols, bool accumulate) {
  for (int64_t r = 0; r < rows; ++r, a += cols) {
    // Four sums: the additions are four dependency chains rather than one.
    __m512 sum[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    int64_t j = 0;
    for (; j + 64 <= cols; j += 64)
      for (int s = 0; s < 4; ++s) sum[s] = _mm512_add_ps(sum[s], _mm512_loadu_ps(a + j + 16 * s));
    for (; j < cols; j += 16) sum[0] = _mm512_add_ps(sum[0], _mm512_maskz_loadu_ps(first_lanes(cols - j), a + j));
    const float total = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(sum[0], sum[1]), _mm512_add_ps(sum[2], sum[3])));
    out[r] = accumulate ? out[r] + total : total;
  }
}

namespace {

// The (ch, iy) loops of col2im_unit_stride for one block of 16 image columns (lanes m) and
// kj0's taps: TAPS of them when TAPS > 0, known when compiled so that their masks and offsets
// stay in registers; `taps` of them, read from the arrays each time, when TAPS = 0.
template <int TAPS>
void col2im_block(float* img, const float* cols, const ConvShape& g, int64_t ix0, int64_t kj0, __mmask16 m,
                  const __mmask16* mask_at, const int64_t* offset_at, int64_t taps, bool accumulate) {
  // The geometry in locals: the image's masked stores may alias anything, and the compiler
  // would read g's fields again after each one.
  const int64_t channels = g.c, h = g.h, w = g.w, kh = g.kh, kw = g.kw, oh = g.oh, ow = g.ow;
  const int64_t ph = g.ph, dh = g.dh, plane = oh * ow;
  constexpr int kMax = TAPS > 0 ? TAPS : 32;
  __mmask16 mask[kMax];
  int64_t offset[kMax];
  if constexpr (TAPS > 0) {
    taps = TAPS;
    for (int t = 0; t < TAPS; ++t) mask[t] = mask_at[t], offset[t] = offset_at[t];
  }
  const __mmask16* mk = TAPS > 0 ? mask : mask_at;
  const int64_t* off = TAPS > 0 ? offset : offset_at;
  for (int64_t ch = 0; ch < channels; ++ch)
    for (int64_t iy = 0; iy < h; ++iy) {
      // Two sums: the additions are two dependency chains rather than one.
      __m512 sum0 = _mm512_setzero_ps(), sum1 = _mm512_setzero_ps();
      for (int64_t ki = 0; ki < kh; ++ki) {
        const int64_t y = iy + ph - ki * dh;
        if (y < 0 || y >= oh) continue;
        const float* row = cols + ((ch * kh + ki) * kw + kj0) * plane + y * ow;
        int64_t t = 0;
        for (; t + 2 <= taps; t += 2) {
          sum0 = _mm512_add_ps(sum0, _mm512_maskz_loadu_ps(mk[t], row + off[t]));
          sum1 = _mm512_add_ps(sum1, _mm512_maskz_loadu_ps(mk[t + 1], row + off[t + 1]));
        }
        if (t < taps) sum0 = _mm512_add_ps(sum0, _mm512_maskz_loadu_ps(mk[t], row + off[t]));
      }
      float* at = img + (ch * h + iy) * w + ix0;
      const __m512 sum = _mm512_add_ps(sum0, sum1);
      _mm512_mask_storeu_ps(at, m, accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(m, at), sum) : sum);
    }
}

}  // namespace

void col2im_unit_stride(float* img, const float* cols, const ConvShape& g) {
  constexpr int64_t kTaps = 32;
  __mmask16 mask[kTaps];
  int64_t offset[kTaps];
  const int64_t plane = g.oh * g.ow;
  for (int64_t ix0 = 0; ix0 < g.w; ix0 += 16) {
    const __mmask16 m = first_lanes(g.w - ix0);
    // Image cell (iy, ix) gathers cols[(ch, ki, kj)][(y, x)] of every tap with
    // y = iy + ph - ki*dh and x = ix + pw - kj*dw inside the output: lane l of tap kj reads
    // output column l + shift, shift = ix0 + pw - kj*dw, valid where that is in [0, ow).
    // Each tap's lanes and offset from its kernel row's first column are worked out once
    // per 16 image columns, for up to 32 taps at a time.
    for (int64_t kj0 = 0; kj0 < g.kw; kj0 += kTaps) {
      const int64_t taps = smaller(kTaps, g.kw - kj0);
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t shift = ix0 + g.pw - (kj0 + t) * g.dw;
        mask[t] = lane_range(-shift > 0 ? -shift : 0, smaller(16, g.ow - shift));
        offset[t] = t * plane + shift;
      }
      const bool add = kj0 > 0;  // later blocks of taps add onto the first's
      switch (taps) {  // the kernel widths of most convolutions, unrolled
        case 3: col2im_block<3>(img, cols, g, ix0, kj0, m, mask, offset, taps, add); break;
        case 5: col2im_block<5>(img, cols, g, ix0, kj0, m, mask, offset, taps, add); break;
        case 7: col2im_block<7>(img, cols, g, ix0, kj0, m, mask, offset, taps, add); break;
        default: col2im_block<0>(img, cols, g, ix0, kj0, m, mask, offset, taps, add);
      }
    }
  }
}

namespace {

// One rounding each, as math::adam_update's scalar operations (the _round forms are never
// contracted into fused multiply-adds, which would round differently).
constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
__m512 mul(__m512 a, __m512 b) { return _mm512_mul_round_ps(a, b, kNearest); }
__m512 add(__m512 a, __m512 b) { return _mm512_add_round_ps(a, b, kNearest); }

}  // namespace

void adam_update(float* p, const float* g, float* m, float* v, float* vmax, int64_t n, const AdamConstants& k,
                 float sign, bool decay_grad) {
  const __m512 b1 = _mm512_set1_ps(k.beta1), c1 = _mm512_set1_ps(k.one_minus_beta1);
  const __m512 b2 = _mm512_set1_ps(k.beta2), c2 = _mm512_set1_ps(k.one_minus_beta2);
  const __m512 wd = _mm512_set1_ps(k.weight_decay), step = _mm512_set1_ps(k.step), eps = _mm512_set1_ps(k.eps);
  const __m512 decay = _mm512_set1_ps(k.decay), sg = _mm512_set1_ps(sign);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 in = first_lanes(n - i);
    const __m512 pi = _mm512_maskz_loadu_ps(in, p + i);
    __m512 d = mul(sg, _mm512_maskz_loadu_ps(in, g + i));
    if (decay_grad) d = add(d, mul(wd, pi));
    const __m512 mi = add(mul(b1, _mm512_maskz_loadu_ps(in, m + i)), mul(c1, d));
    const __m512 vi = add(mul(b2, _mm512_maskz_loadu_ps(in, v + i)), mul(c2, mul(d, d)));
    _mm512_mask_storeu_ps(m + i, in, mi);
    _mm512_mask_storeu_ps(v + i, in, vi);
    __m512 denom = vi;
    if (vmax) {  // *vmax < v ? v : *vmax
      const __m512 old = _mm512_maskz_loadu_ps(in, vmax + i);
      denom = _mm512_mask_mov_ps(old, _mm512_cmp_ps_mask(old, vi, _CMP_LT_OQ), vi);
      _mm512_mask_storeu_ps(vmax + i, in, denom);
    }
    const __m512 ratio = _mm512_div_round_ps(mi, add(_mm512_sqrt_round_ps(denom, kNearest), eps), kNearest);
    _mm512_mask_storeu_ps(p + i, in, _mm512_sub_round_ps(mul(pi, decay), mul(step, ratio), kNearest));
  }
}

void own_sgemm_pack_a(float* packed, bool ta, const float* a, int64_t lda, int64_t m, int64_t k) {
  // Block after block, each kc x packed_rows(m): the block at depth k0 starts at k0 x packed_rows(m).
  const int64_t depth = depth_block(k);
  for (int64_t k0 = 0; k0 < k; k0 += depth) pack_a(packed + k0 * packed_rows(m), ta, a, lda, m, k0, smaller(depth, k - k0));
}

void own_sgemm_packed(bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* packed_a, const float* b,
                      int64_t ldb, float beta, float* c, int64_t ldc, float* workspace) {
  packed_product(tb, m, n, k, alpha, [&](int64_t k0, int64_t) { return packed_a + k0 * packed_rows(m); }, b, ldb, beta,
                 c, ldc, workspace);
}

void own_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* workspace) {
  if (ta)
    product<true>(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workspace);
  else
    product<false>(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workspace);
}

}  // namespace plexus::cpu
