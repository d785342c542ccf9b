#include "explain/heat_image.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/error.h"

namespace plexus::explain {

namespace {

// The values divided by the largest (all zeros stay zeros).
std::vector<float> normalised_heat(const Tensor& heat) {
  std::vector<float> v = heat.contiguous().to_vector();
  const float top = v.empty() ? 0.f : *std::max_element(v.begin(), v.end());
  if (top > 0)
    for (float& x : v) x = std::max(0.f, x / top);
  return v;
}

// `image` with each pixel repeated `factor` times across and down.
data::Image enlarged(const data::Image& image, int64_t factor) {
  data::Image out{image.width * factor, image.height * factor, image.channels, {}};
  out.pixels.resize(size_t(out.width * out.height * out.channels));
  for (int64_t y = 0; y < out.height; ++y)
    for (int64_t x = 0; x < out.width; ++x)
      for (int64_t c = 0; c < out.channels; ++c)
        out.pixels[size_t((y * out.width + x) * out.channels + c)] =
            image.pixels[size_t(((y / factor) * image.width + x / factor) * image.channels + c)];
  return out;
}

// The smallest whole factor that brings `side` to at least `min_size`.
int64_t factor_for(int64_t side, int64_t min_size) { return std::max<int64_t>(1, (min_size + side - 1) / side); }

}  // namespace

std::array<uint8_t, 3> magma(float t) {
  static constexpr uint8_t kStops[9][3] = {{0, 0, 4},      {28, 16, 68},    {79, 18, 123},
                                           {129, 37, 129}, {181, 54, 122},  {229, 80, 100},
                                           {251, 135, 97}, {254, 194, 135}, {252, 253, 191}};
  const float s = std::clamp(std::isfinite(t) ? t : 0.f, 0.f, 1.f) * 8.f;
  const int i = std::min(int(s), 7);
  const float f = s - float(i);
  std::array<uint8_t, 3> rgb{};
  for (int c = 0; c < 3; ++c)
    rgb[size_t(c)] = uint8_t(std::lround(float(kStops[i][c]) * (1 - f) + float(kStops[i + 1][c]) * f));
  return rgb;
}

data::Image heat_over_picture(const Tensor& picture, const Tensor& heat, float opacity, int64_t min_size) {
  const Shape& p = picture.shape();
  if (p.size() != 3 || (p[0] != 1 && p[0] != 3) || heat.shape() != Shape{p[1], p[2]})
    throw ShapeError("heat_over_picture: expected a picture [1 or 3, H, W] and a heat map [H, W], got " +
                     plexus::to_string(p) + " and " + plexus::to_string(heat.shape()));
  const int64_t channels = p[0], h = p[1], w = p[2];
  const std::vector<float> pixels = picture.contiguous().to_vector(), v = normalised_heat(heat);
  data::Image image{w, h, 3, std::vector<uint8_t>(size_t(w * h * 3))};
  for (int64_t i = 0; i < h * w; ++i) {
    const std::array<uint8_t, 3> colour = magma(v[size_t(i)]);
    for (int64_t c = 0; c < 3; ++c) {
      const float under = std::clamp(pixels[size_t((channels == 1 ? 0 : c) * h * w + i)], 0.f, 1.f) * 255.f;
      image.pixels[size_t(i * 3 + c)] =
          uint8_t(std::lround(under * (1 - opacity) + float(colour[size_t(c)]) * opacity));
    }
  }
  return enlarged(image, factor_for(std::min(h, w), min_size));
}

data::Image heat_strip(const Tensor& heat, int64_t cell) {
  if (heat.dim() != 1 || heat.numel() == 0)
    throw ShapeError("heat_strip: expected a heat map [T], T >= 1, got " + plexus::to_string(heat.shape()));
  return heat_grid(heat.unsqueeze(0), cell);
}

data::Image heat_grid(const Tensor& map, int64_t min_size) {
  if (map.dim() != 2 || map.numel() == 0)
    throw ShapeError("heat_grid: expected a map [R, C] with a value at least, got " + plexus::to_string(map.shape()));
  const int64_t rows = map.shape()[0], cols = map.shape()[1];
  const std::vector<float> v = normalised_heat(map);
  data::Image image{cols, rows, 3, std::vector<uint8_t>(size_t(rows * cols * 3))};
  for (size_t i = 0; i < v.size(); ++i) {
    const std::array<uint8_t, 3> colour = magma(v[i]);
    std::copy(colour.begin(), colour.end(), image.pixels.begin() + std::ptrdiff_t(i * 3));
  }
  return enlarged(image, factor_for(std::min(rows, cols), min_size));
}

}  // namespace plexus::explain
