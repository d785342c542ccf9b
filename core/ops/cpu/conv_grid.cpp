// The grid layout of conv_grid.h: its shape, offsets and weights, plain loops over a weight
// once per call. The copies into and out of grids, once per image, are AVX-512 (sgemm_avx512.cpp).
#include "ops/cpu/conv_grid.h"

namespace plexus::cpu {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr int64_t kPanel = 32;  // columns of the product's register tile

}  // namespace

bool conv_by_grid(const ConvShape& g) { return g.ph != 0 || g.pw != 0 || g.sh != 1 || g.sw != 1; }

ConvGrid conv_grid(const ConvShape& g) {
  ConvGrid grid{};
  grid.rows = ceil_div(g.h + 2 * g.ph, g.sh);
  grid.cols = ceil_div(g.w + 2 * g.pw, g.sw);
  grid.columns = ceil_div(g.oh * grid.cols, kPanel) * kPanel;
  // A tap's offset is at most the last phase plane's end, and the product reads `columns` on.
  grid.floats = g.c * g.sh * g.sw * grid.rows * grid.cols + grid.columns;
  grid.taps = g.c * g.kh * g.kw;
  return grid;
}

void conv_grid_offsets(int64_t* offsets, const ConvShape& g, const ConvGrid& grid) {
  const int64_t plane = grid.rows * grid.cols;
  for (int64_t ch = 0; ch < g.c; ++ch)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const int64_t y = ki * g.dh, x = kj * g.dw;  // the tap in the padded image
        const int64_t phase = (ch * g.sh + y % g.sh) * g.sw + x % g.sw;
        *offsets++ = phase * plane + y / g.sh * grid.cols + x / g.sw;
      }
}

void transpose_rows(float* out, const float* in, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

void flip_conv_weight(float* wt, const float* w, int64_t og, const ConvShape& g) {
  for (int64_t o = 0; o < og; ++o)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj)
        for (int64_t ch = 0; ch < g.c; ++ch)
          wt[((o * g.kh + ki) * g.kw + kj) * g.c + ch] =
              w[((o * g.c + ch) * g.kh + (g.kh - 1 - ki)) * g.kw + (g.kw - 1 - kj)];
}

ConvShape input_grad_shape(const ConvShape& g, int64_t og) {
  return {og, g.oh, g.ow, g.kh, g.kw, g.h, g.w, 1, 1, g.dh * (g.kh - 1) - g.ph, g.dw * (g.kw - 1) - g.pw, g.dh, g.dw};
}

bool conv_input_grad_by_forward(const ConvShape& g) {
  return g.sh == 1 && g.sw == 1 && g.ph <= g.dh * (g.kh - 1) && g.pw <= g.dw * (g.kw - 1);
}

}  // namespace plexus::cpu
