#include "common/image_thumbnail.h"

#include <algorithm>
#include <cmath>

namespace plexus::widgets {

bool isImageShape(const Shape& input) {
  if (input.size() == 3) return (input[0] == 1 || input[0] == 3) && input[1] > 0 && input[2] > 0;
  return input.size() == 2 && input[0] > 0 && input[1] > 0;
}

QSize imageSize(const Shape& input) {
  const size_t h = input.size() - 2;
  return {int(input[h + 1]), int(input[h])};
}

QImage thumbnailImage(const float* pixels, const Shape& input) {
  const QSize size = imageSize(input);
  const int64_t plane = int64_t(size.width()) * size.height();
  const bool rgb = input.size() == 3 && input[0] == 3;
  const auto [lo_it, hi_it] = std::minmax_element(pixels, pixels + plane * (rgb ? 3 : 1));
  const bool unit = *lo_it >= 0.f && *hi_it <= 1.f;
  const float lo = unit ? 0.f : *lo_it;
  const float span = unit ? 1.f : std::max(*hi_it - *lo_it, 1e-12f);
  const auto level = [&](float v) { return uchar(std::lround(std::clamp((v - lo) / span, 0.f, 1.f) * 255.f)); };

  QImage image(size, rgb ? QImage::Format_RGB888 : QImage::Format_Grayscale8);
  for (int y = 0; y < size.height(); ++y) {
    uchar* line = image.scanLine(y);
    const float* row = pixels + int64_t(y) * size.width();
    for (int x = 0; x < size.width(); ++x) {
      if (!rgb) {
        line[x] = level(row[x]);
        continue;
      }
      for (int c = 0; c < 3; ++c) line[3 * x + c] = level(row[c * plane + x]);
    }
  }
  return image;
}

}  // namespace plexus::widgets
