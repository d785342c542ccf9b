#include "explain/resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/error.h"

namespace plexus::explain {

namespace {

// Where output cell `i` of `out` reads in an axis of `in` cells: the two cells and the second's weight.
struct Tap {
  int64_t lo, hi;
  float weight;
};
Tap bilinear_tap(int64_t i, int64_t in, int64_t out) {
  const float source = std::max(0.f, (float(i) + 0.5f) * float(in) / float(out) - 0.5f);
  const int64_t lo = std::min(int64_t(source), in - 1);
  return {lo, std::min(lo + 1, in - 1), source - float(lo)};
}

}  // namespace

Tensor resize_bilinear(const Tensor& map, int64_t height, int64_t width) {
  if (map.dim() != 2 || height < 1 || width < 1)
    throw ShapeError("resize_bilinear: expected a map [h, w] and a size of at least 1x1, got " +
                     plexus::to_string(map.shape()) + " to " + std::to_string(height) + "x" + std::to_string(width));
  const int64_t h = map.shape()[0], w = map.shape()[1];
  const std::vector<float> in = map.contiguous().to_vector();
  std::vector<float> out(size_t(height * width));
  for (int64_t y = 0; y < height; ++y) {
    const Tap ty = bilinear_tap(y, h, height);
    for (int64_t x = 0; x < width; ++x) {
      const Tap tx = bilinear_tap(x, w, width);
      auto at = [&](int64_t r, int64_t c) { return in[size_t(r * w + c)]; };
      const float top = at(ty.lo, tx.lo) * (1 - tx.weight) + at(ty.lo, tx.hi) * tx.weight;
      const float bottom = at(ty.hi, tx.lo) * (1 - tx.weight) + at(ty.hi, tx.hi) * tx.weight;
      out[size_t(y * width + x)] = top * (1 - ty.weight) + bottom * ty.weight;
    }
  }
  return from_vector(out, {height, width});
}

}  // namespace plexus::explain
