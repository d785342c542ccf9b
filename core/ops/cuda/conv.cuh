#pragma once
// The data-movement kernels of the batched convolution lowering (backend.cu runs the GEMMs).
// For a chunk of nb images the columns matrix is [c*kh*kw, nb*plane] (plane = oh*ow): row
// (ci, ki, kj), column b*plane + (y*ow + x); group g owns the rows [g*kdim, (g+1)*kdim).
//
// These kernels are bound by index arithmetic as much as by memory, so they run on 2-D grids
// (blockIdx.y walks the rows / planes, threads walk the columns / pixels) and divide with
// FastDiv; the host guarantees that a row (nb*plane) and a plane (h*w) have fewer than 2^31
// elements. Included by backend.cu only.
#include <cstdint>

#include "ops/backend.h"
#include "ops/cuda/strided.cuh"

namespace plexus::cuda {
namespace {

using ConvGeometry = Backend::ConvGeometry;

// Divisors of one launch (see the kernels for which is which).
struct ConvDivisors {
  FastDiv a, b, c, d;
};

// cols[(ci*kh + ki)*kw + kj, b*plane + y*ow + x] = x[b, ci, y*sh - ph + ki*dh, x*sw - pw + kj*dw]
// (0 in the padding); g.c is every channel of the image here. Divisors: kw, kh, plane, ow.
// Adjacent threads write adjacent columns and read adjacent pixels.
__global__ void im2col_kernel(float* cols, const float* x, ConvGeometry g, int64_t nb, ConvDivisors dv) {
  const uint32_t plane = uint32_t(g.oh * g.ow), width = uint32_t(nb) * plane;
  const uint32_t rows = uint32_t(g.c * g.kh * g.kw);
  const int64_t image = g.c * g.h * g.w;
  for (uint32_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const uint32_t t = dv.a.div(row), kj = row - t * uint32_t(g.kw);
    const uint32_t ci = dv.b.div(t), ki = t - ci * uint32_t(g.kh);
    const int64_t dy = int64_t(ki) * g.dh - g.ph, dx = int64_t(kj) * g.dw - g.pw;
    const float* src = x + int64_t(ci) * g.h * g.w;
    float* dst = cols + int64_t(row) * width;
    for (uint32_t col = blockIdx.x * blockDim.x + threadIdx.x; col < width; col += gridDim.x * blockDim.x) {
      const uint32_t b = dv.c.div(col), p = col - b * plane;
      const uint32_t y = dv.d.div(p), xo = p - y * uint32_t(g.ow);
      const int64_t iy = int64_t(y) * g.sh + dy, ix = int64_t(xo) * g.sw + dx;
      dst[col] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? src[b * image + iy * g.w + ix] : 0.f;
    }
  }
}

// The adjoint of im2col as a gather: each pixel of the chunk sums the column entries that read
// it, in (ki, kj) order like the CPU's col2im, and adds the sum to grad_x (no atomics).
// blockIdx.y walks the nb*c planes; divisors: w, sh, sw.
__global__ void col2im_kernel(float* grad_x, const float* cols, ConvGeometry g, int64_t nb, ConvDivisors dv) {
  const int64_t plane = g.oh * g.ow, width = nb * plane, planes = nb * g.c;
  const uint32_t hw = uint32_t(g.h * g.w);
  for (int64_t pc = blockIdx.y; pc < planes; pc += gridDim.y) {
    const int64_t b = div_nonneg(pc, g.c), ci = pc - b * g.c;
    const float* base = cols + b * plane + ci * g.kh * g.kw * width;
    float* dst = grad_x + pc * hw;
    for (uint32_t pix = blockIdx.x * blockDim.x + threadIdx.x; pix < hw; pix += gridDim.x * blockDim.x) {
      const uint32_t iy = dv.a.div(pix), ix = pix - iy * uint32_t(g.w);
      float acc = 0.f;
      for (int64_t ki = 0; ki < g.kh; ++ki) {
        const int64_t ty = iy + g.ph - ki * g.dh;  // = y * sh for the window row y that reads iy
        if (ty < 0) break;                         // only decreases with ki
        const int64_t y = dv.b.div(uint32_t(ty));
        if (y * g.sh != ty || y >= g.oh) continue;
        for (int64_t kj = 0; kj < g.kw; ++kj) {
          const int64_t tx = ix + g.pw - kj * g.dw;
          if (tx < 0) break;
          const int64_t xo = dv.c.div(uint32_t(tx));
          if (xo * g.sw != tx || xo >= g.ow) continue;
          acc += base[(ki * g.kw + kj) * width + y * g.ow + xo];
        }
      }
      dst[pix] += acc;
    }
  }
}

// dst[o, b*plane + p] = src[b, o, p] for o < channels: grad_out of a chunk as one matrix
// [channels, nb*plane], so the weight gradient is one GEMM per group. blockIdx.y walks the
// channels; divisor a: plane.
__global__ void channels_first_kernel(float* dst, const float* src, int64_t channels, int64_t nb, int64_t plane,
                                      ConvDivisors dv) {
  const uint32_t width = uint32_t(nb * plane);
  for (int64_t o = blockIdx.y; o < channels; o += gridDim.y) {
    float* row = dst + o * width;
    for (uint32_t col = blockIdx.x * blockDim.x + threadIdx.x; col < width; col += gridDim.x * blockDim.x) {
      const uint32_t b = dv.a.div(col), p = col - b * uint32_t(plane);
      row[col] = src[(b * channels + o) * plane + p];
    }
  }
}

}  // namespace
}  // namespace plexus::cuda
