// Resampling images [N, C, H, W]: enlarging by whole factors (nearest, bilinear) and zero
// padding, composed from differentiable ops, so that both backends and the derivatives come
// with them: nearest is a broadcast copy (its gradient sums each block), bilinear two products
// with constant interpolation matrices (its gradient their transposes), padding a concatenation
// with zeros (its gradient the middle slice).
#include <algorithm>
#include <cmath>

#include "ops/ops.h"
#include "util/error.h"

namespace plexus {
namespace {

void check_image(const char* op, const Tensor& x) {
  if (x.dim() != 4) throw ShapeError(std::string(op) + ": expected input [N, C, H, W], got " + to_string(x.shape()));
}

void check_scales(const char* op, int64_t scale_h, int64_t scale_w) {
  if (scale_h < 1 || scale_w < 1)
    throw ValueError(std::string(op) + ": scale factors must be whole numbers >= 1, got " + std::to_string(scale_h) +
                     "x" + std::to_string(scale_w));
}

// [out, in]: row i holds the weights with which output i of an axis reads its two nearest input
// cells, at PyTorch's source coordinate.
Tensor interpolation_matrix(int64_t in, int64_t out, bool align_corners, Device device) {
  std::vector<float> m(size_t(out * in), 0.f);
  for (int64_t i = 0; i < out; ++i) {
    const double src = align_corners ? (out > 1 ? double(i) * double(in - 1) / double(out - 1) : 0.0)
                                     : std::max((double(i) + 0.5) * double(in) / double(out) - 0.5, 0.0);
    const int64_t i0 = std::min(int64_t(src), in - 1), i1 = std::min(i0 + 1, in - 1);
    const double frac = src - double(i0);
    m[size_t(i * in + i0)] += float(1.0 - frac);
    m[size_t(i * in + i1)] += float(frac);
  }
  return from_vector(m, {out, in}).to(device);
}

}  // namespace

Tensor upsample_nearest2d(const Tensor& x, int64_t scale_h, int64_t scale_w) {
  check_image("upsample_nearest2d", x);
  check_scales("upsample_nearest2d", scale_h, scale_w);
  const Shape& s = x.shape();
  const Tensor blocks = expand(reshape(x, {s[0], s[1], s[2], 1, s[3], 1}), {-1, -1, -1, scale_h, -1, scale_w});
  return reshape(blocks, {s[0], s[1], s[2] * scale_h, s[3] * scale_w});
}

Tensor upsample_bilinear2d(const Tensor& x, int64_t scale_h, int64_t scale_w, bool align_corners) {
  check_image("upsample_bilinear2d", x);
  check_scales("upsample_bilinear2d", scale_h, scale_w);
  const int64_t h = x.shape()[2], w = x.shape()[3];
  const Tensor rows = interpolation_matrix(h, h * scale_h, align_corners, x.device());
  const Tensor cols = interpolation_matrix(w, w * scale_w, align_corners, x.device());
  return matmul(rows, matmul(x, transpose(cols, 0, 1)));
}

Tensor zero_pad2d(const Tensor& x, int64_t left, int64_t right, int64_t top, int64_t bottom) {
  check_image("zero_pad2d", x);
  if (left < 0 || right < 0 || top < 0 || bottom < 0)
    throw ValueError("zero_pad2d: padding must be >= 0, got left " + std::to_string(left) + ", right " +
                     std::to_string(right) + ", top " + std::to_string(top) + ", bottom " + std::to_string(bottom));
  // Concatenates zeros of `before` and `after` cells along `dim` (3: columns, 2: rows).
  const auto pad = [](const Tensor& t, int64_t dim, int64_t before, int64_t after) {
    if (!before && !after) return t;
    const auto zeros_of = [&](int64_t n) {
      Shape s = t.shape();
      s[size_t(dim)] = n;
      return zeros(s, t.device());
    };
    std::vector<Tensor> parts;
    if (before) parts.push_back(zeros_of(before));
    parts.push_back(t);
    if (after) parts.push_back(zeros_of(after));
    return concat(parts, dim);
  };
  return pad(pad(x, 3, left, right), 2, top, bottom);
}

}  // namespace plexus
