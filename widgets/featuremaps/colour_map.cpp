#include "featuremaps/colour_map.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace plexus::widgets {

QRgb viridis(double t) {
  // Matplotlib's viridis at t = 0, 0.1, ..., 1; linear between them is within a shade of it.
  static constexpr std::array<QRgb, 11> kStops = {0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
                                                  0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725};
  const double x = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * double(kStops.size() - 1);
  const size_t i = std::min(size_t(x), kStops.size() - 2);
  const double f = x - double(i);
  const auto mix = [f](int a, int b) { return int(std::lround(a + (b - a) * f)); };
  const QRgb a = kStops[i], b = kStops[i + 1];
  return qRgb(mix(qRed(a), qRed(b)), mix(qGreen(a), qGreen(b)), mix(qBlue(a), qBlue(b)));
}

QImage colourMapped(const float* values, int64_t h, int64_t w, float lo, float hi) {
  QImage image(int(w), int(h), QImage::Format_RGB32);
  const float range = hi - lo;
  for (int64_t y = 0; y < h; ++y) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(int(y)));
    for (int64_t x = 0; x < w; ++x) line[x] = viridis(range > 0 ? (values[y * w + x] - lo) / range : 0.0);
  }
  return image;
}

}  // namespace plexus::widgets
