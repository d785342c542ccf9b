#pragma once
// Reading an unpadded stride-1 convolution's im2col matrix straight from its image, and the
// epilogue of its forward product: shared by the FP32 kernel (sgemm_avx512.cpp) and the bf16
// one (sbgemm_avx512bf16.cpp), which pack the same columns into their own panels. Included only
// by files compiled with AVX-512; internal linkage, as avx512_tile.h.
//
// Without padding at stride 1 (LeNet's convolutions) a grid would compute kw - 1 dropped columns
// for every ow it keeps (a third of them for a 5x5 kernel on 12 columns), and the image itself is
// read as simply: the im2col matrix of one image, cols[(ch, ki, kj)][(y, x)] =
// img[ch][y + ki*dh][x + kj*dw], is never stored; 16 consecutive columns of a row are read
// straight from the image into a register, one masked load per stretch of them within one
// output row (a segment), and packed into the product's panels.
#include <immintrin.h>

#include <cstdint>

#include "ops/cpu/avx512_tile.h"
#include "ops/cpu/conv_grid.h"

namespace plexus::cpu {
namespace {

// Lanes [lane0, lane0 + lanes) are output row y, columns x0, x0 + 1, ...
struct Segment {
  int lane0, lanes;
  int64_t y, x0;
};

// The segments of output positions [p0, p0 + 16) that exist (< oh * ow): at most 16.
int segments_of(Segment* seg, const ConvShape& g, int64_t p0) {
  const int64_t end = smaller(p0 + 16, g.oh * g.ow);
  int count = 0;
  for (int64_t p = p0; p < end;) {
    const int64_t y = p / g.ow, x0 = p % g.ow, lanes = smaller(g.ow - x0, end - p);
    seg[count++] = Segment{int(p - p0), int(lanes), y, x0};
    p += lanes;
  }
  return count;
}

// (ch, ki, kj) of im2col row r, stepped along as r increases, and the image offset of the
// tap, (ch*h + ki*dh)*w + kj*dw.
struct KernelTap {
  int64_t ch, ki, kj, offset;
  KernelTap(const ConvShape& g, int64_t r)
      : ch(r / (g.kh * g.kw)), ki(r / g.kw % g.kh), kj(r % g.kw), offset((ch * g.h + ki * g.dh) * g.w + kj * g.dw) {}
  void next(const ConvShape& g) {
    ++kj;
    offset += g.dw;
    if (kj < g.kw) return;
    kj = 0;
    if (++ki == g.kh) {
      ki = 0;
      ++ch;
    }
    offset = (ch * g.h + ki * g.dh) * g.w;
  }
};

// tap[j] = the image offset of im2col row r0 + j, for j < count.
inline void tap_offsets(int64_t* tap, const ConvShape& g, int64_t r0, int64_t count) {
  KernelTap t(g, r0);
  for (int64_t j = 0; j < count; ++j, t.next(g)) tap[j] = t.offset;
}

// Reads 16 columns of im2col rows: those of output positions [p0, p0 + 16), lanes past the
// last position 0. Every tap of an output position is inside the image: one masked load per
// segment.
class ColsRow {
 public:
  ColsRow(const ConvShape& g, int64_t p0) : count_(segments_of(seg_, g, p0)) {
    for (int s = 0; s < count_; ++s) {
      mask_[s] = lane_range(seg_[s].lane0, seg_[s].lane0 + seg_[s].lanes);
      offset_[s] = seg_[s].y * g.w + seg_[s].x0 - seg_[s].lane0;
    }
  }

  int count() const { return count_; }
  __mmask16 mask(int s) const { return mask_[s]; }
  int64_t offset(int s) const { return offset_[s]; }

  // The row of the tap whose window starts at `at` (the image plus the tap's offset).
  __m512 load(const float* at) const {
    __m512 v = _mm512_setzero_ps();
    for (int s = 0; s < count_; ++s) v = _mm512_mask_loadu_ps(v, mask_[s], at + offset_[s]);
    return v;
  }

 private:
  Segment seg_[16];
  int count_;
  __mmask16 mask_[16];
  int64_t offset_[16];  // segment s reads img + tap offset + offset_[s]
};

// A ColsRow of at most two segments (S; none past the last output position), its masks and
// offsets held in registers through a packing loop rather than read back from the ColsRow for
// every tap.
template <int S>
struct TwoSegmentRow {
  explicit TwoSegmentRow(const ColsRow& r)
      : m0(S > 0 ? r.mask(0) : 0), m1(S > 1 ? r.mask(1) : 0), o0(S > 0 ? r.offset(0) : 0), o1(S > 1 ? r.offset(1) : 0) {}
  __m512 load(const float* at) const {
    if constexpr (S == 0) return _mm512_setzero_ps();
    const __m512 v = _mm512_maskz_loadu_ps(m0, at + o0);
    if constexpr (S > 1) return _mm512_mask_loadu_ps(v, m1, at + o1);
    return v;
  }
  __mmask16 m0, m1;
  int64_t o0, o1;
};

// f(row's reader): a TwoSegmentRow<S> where it has at most two segments, else the ColsRow.
template <class F>
void with_reader(const ColsRow& row, F&& f) {
  switch (row.count()) {
    case 0: return f(TwoSegmentRow<0>(row));
    case 1: return f(TwoSegmentRow<1>(row));
    case 2: return f(TwoSegmentRow<2>(row));
    default: return f(row);
  }
}

// The epilogue of a convolution's forward product, out [og][plane]: later depth blocks add onto
// what the first stored; the last adds the bias and clamps at 0 when relu.
struct StoreConv {
  float* out;
  int64_t plane;
  const float* bias;
  bool relu;
  template <class Acc>
  void operator()(const Acc& acc, const TileAt& at) const {
    float* row = out + at.i0 * plane + at.j0;
#pragma GCC unroll 16
    for (int i = 0; i < PLEXUS_TILE_ROWS(acc); ++i, row += plane) {
      __m512 v0 = acc[i][0], v1 = acc[i][1];
      if (!at.first) {
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(at.lo, row));
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(at.hi, row + 16));
      }
      if (at.last && bias) {
        const __m512 b = _mm512_set1_ps(bias[at.i0 + i]);
        v0 = _mm512_add_ps(v0, b);
        v1 = _mm512_add_ps(v1, b);
      }
      if (at.last && relu) {  // max(0, v) answers v when v is NaN: NaN stays NaN, as relu does
        v0 = _mm512_max_ps(_mm512_setzero_ps(), v0);
        v1 = _mm512_max_ps(_mm512_setzero_ps(), v1);
      }
      _mm512_mask_storeu_ps(row, at.lo, v0);
      _mm512_mask_storeu_ps(row + 16, at.hi, v1);
    }
  }
};

}  // namespace
}  // namespace plexus::cpu
