#include "explain/resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/error.h"

namespace plexus::explain {

namespace {

// Where pixel `i` reads in an axis of `cells` cells: the two cells and the second's weight.
struct Tap {
  int64_t lo, hi;
  float weight;
};
Tap bilinear_tap(int64_t i, int64_t cells, const AxisPlacement& axis) {
  const double source = std::clamp((double(i) - axis.offset) / axis.stride, 0.0, double(cells - 1));
  const int64_t lo = std::min(int64_t(source), cells - 1);
  return {lo, std::min(lo + 1, cells - 1), float(source - double(lo))};
}

}  // namespace

AxisPlacement stretched(int64_t cells, int64_t pixels) {
  const double stride = double(pixels) / double(cells);
  return {0.5 * stride - 0.5, stride};
}

Tensor place_bilinear(const Tensor& map, int64_t height, int64_t width, const Placement& placement) {
  if (map.dim() != 2 || height < 1 || width < 1)
    throw ShapeError("place_bilinear: expected a map [h, w] and a size of at least 1x1, got " +
                     plexus::to_string(map.shape()) + " to " + std::to_string(height) + "x" + std::to_string(width));
  if (!(placement.y.stride > 0) || !(placement.x.stride > 0))
    throw ValueError("place_bilinear: the cells' strides must be positive, got " + std::to_string(placement.y.stride) +
                     " and " + std::to_string(placement.x.stride));
  const int64_t h = map.shape()[0], w = map.shape()[1];
  const std::vector<float> in = map.contiguous().to_vector();
  std::vector<float> out(size_t(height * width));
  for (int64_t y = 0; y < height; ++y) {
    const Tap ty = bilinear_tap(y, h, placement.y);
    for (int64_t x = 0; x < width; ++x) {
      const Tap tx = bilinear_tap(x, w, placement.x);
      auto at = [&](int64_t r, int64_t c) { return in[size_t(r * w + c)]; };
      const float top = at(ty.lo, tx.lo) * (1 - tx.weight) + at(ty.lo, tx.hi) * tx.weight;
      const float bottom = at(ty.hi, tx.lo) * (1 - tx.weight) + at(ty.hi, tx.hi) * tx.weight;
      out[size_t(y * width + x)] = top * (1 - ty.weight) + bottom * ty.weight;
    }
  }
  return from_vector(out, {height, width});
}

}  // namespace plexus::explain
