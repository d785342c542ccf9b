#pragma once
// Pieces both AVX-512 kernel files share (sgemm_avx512.cpp, sbgemm_avx512bf16.cpp): lane masks,
// a 16 x 16 transpose in registers, and the store of a 32-column register tile of C. Included
// only by files compiled with AVX-512; everything here has internal linkage, so no copy compiled
// for one file's instruction set can stand in for another's.
#include <immintrin.h>

#include <cstdint>

namespace plexus::cpu {
namespace {

inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

inline __mmask16 first_lanes(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}

inline __mmask16 lane_range(int64_t a, int64_t b) {  // lanes [a, b) of 16
  return a >= b ? __mmask16(0) : __mmask16(first_lanes(b) & ~first_lanes(a));
}

// r[i] (row i of a 16 x 16 tile) becomes column i.
// Always inlined: a call would pass the 16 registers through memory.
[[gnu::always_inline]] inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4)
    for (int j = 0; j < 2; ++j) {
      r[i + 2 * j] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + j]), _mm512_castps_pd(t[i + j + 2])));
      r[i + 2 * j + 1] =
          _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + j]), _mm512_castps_pd(t[i + j + 2])));
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

// Where a register tile's 32 columns of C are and which of them exist.
struct TileAt {
  int64_t i0, j0, k0, kc;  // first row and column of C; the depth block of this product
  __mmask16 lo, hi;        // the columns j0 .. j0 + nr in each 16-lane half
  bool first, last;        // the first / last depth block of the product
};

// The rows of a tile acc[MR][2] (a constant: sizeof does not read the reference).
#define PLEXUS_TILE_ROWS(acc) int(sizeof(acc) / sizeof((acc)[0]))

// C = alpha · acc + beta · C on the first depth block, C += alpha · acc after it.
struct StoreScaled {
  float* c;
  int64_t ldc;
  float alpha, beta;
  template <class Acc>
  void operator()(const Acc& acc, const TileAt& at) const {
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(at.first ? beta : 1.f);
    const bool read = !at.first || beta != 0.f;
    float* row = c + at.i0 * ldc + at.j0;
#pragma GCC unroll 16
    for (int i = 0; i < PLEXUS_TILE_ROWS(acc); ++i, row += ldc) {
      __m512 v0 = _mm512_mul_ps(va, acc[i][0]), v1 = _mm512_mul_ps(va, acc[i][1]);
      if (read) {
        v0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(at.lo, row), v0);
        v1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(at.hi, row + 16), v1);
      }
      _mm512_mask_storeu_ps(row, at.lo, v0);
      _mm512_mask_storeu_ps(row + 16, at.hi, v1);
    }
  }
};

}  // namespace
}  // namespace plexus::cpu
