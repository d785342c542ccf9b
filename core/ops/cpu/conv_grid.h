#pragma once
// A convolution's image laid out so that every row of its im2col matrix is a stretch of it: the
// "grid" that the AVX-512 convolution (sgemm.h) reads in place instead of packing panels.
//
// The image [c, h, w] is zero-padded ([c, h + 2ph, w + 2pw]) and, at stride (sh, sw), split into
// its sh x sw phases: phase (r, t) of a channel holds the padded rows y ≡ r (mod sh) and columns
// x ≡ t (mod sw), a plane of [rows, cols] = [ceil((h + 2ph) / sh), ceil((w + 2pw) / sw)]. Output
// position (oy, ox) is then grid column q = oy * cols + ox, and im2col row (ch, ki, kj) is the
// grid from offsets[(ch, ki, kj)] on: the tap's phase plane, moved down (ki*dh) / sh rows and
// right (kj*dw) / sw columns. Columns ox >= ow of each output row are computed and dropped.
//
// Declarations and plain structs only: the AVX-512 file includes this header (see sgemm.h).
#include <cstdint>

namespace plexus::cpu {

// Backend::ConvGeometry's fields: the image [c, h, w], kernel, output, stride, padding, dilation.
struct ConvShape {
  int64_t c, h, w, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw;
};

// Whether the AVX-512 convolution reads this one from a grid: all but the unpadded ones at
// stride 1, which it reads from the image itself (sgemm.h: conv_forward_image).
bool conv_by_grid(const ConvShape& g);

struct ConvGrid {
  int64_t rows, cols;  // of each phase plane
  int64_t columns;     // output grid columns, oh * cols rounded up to whole 32-column panels
  int64_t floats;      // of the grid, with the zeros a panel past the last column reads
  int64_t taps;        // im2col rows: c * kh * kw
};
ConvGrid conv_grid(const ConvShape& g);

// offsets[(ch, ki, kj)] for every im2col row (grid.taps of them).
void conv_grid_offsets(int64_t* offsets, const ConvShape& g, const ConvGrid& grid);

// The copies below are AVX-512 (sgemm_avx512.cpp), called only where own_sgemm_enabled().
// grid = the image img [c, h, w] laid out as above; every one of grid.floats is written.
void to_conv_grid(float* grid, const float* img, const ConvShape& g, const ConvGrid& grid_shape);

// `planes` output planes [oh, ow] into / out of output grid rows of grid.columns: plane_to_grid
// writes every column (zeros where no output position is), grid_to_plane adds bias[p] to plane p
// (when not null) and clamps at 0 when relu (max(0, v): a NaN stays NaN, as relu does).
void plane_to_grid(float* rows, const float* planes_in, int64_t planes, const ConvShape& g, const ConvGrid& grid);
void grid_to_plane(float* planes_out, const float* rows, int64_t planes, const ConvShape& g, const ConvGrid& grid,
                   const float* bias, bool relu);

// out [cols][rows] = inᵀ, in [rows][cols]: the weight [og, c*kh*kw] as the forward product reads
// it, [taps][og], and the weight gradient back from that layout.
void transpose_rows(float* out, const float* in, int64_t rows, int64_t cols);
// The weight of a stride-1 convolution's input gradient, itself a convolution of the output's
// gradient (og channels) padded by d*(k-1) - p: wt[(o, ki, kj)][ch] = w[o][ch][kh-1-ki][kw-1-kj].
void flip_conv_weight(float* wt, const float* w, int64_t og, const ConvShape& g);
// The shape of that convolution (conv_input_grad_by_forward tells when it is one).
ConvShape input_grad_shape(const ConvShape& g, int64_t og);
bool conv_input_grad_by_forward(const ConvShape& g);

}  // namespace plexus::cpu
