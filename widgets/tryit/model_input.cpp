#include "tryit/model_input.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace plexus::widgets {

namespace {

constexpr int64_t kMnistSide = 28;
constexpr double kMnistBox = 20;  // the digit's bounding box fits this, inside the 28 x 28 field

}  // namespace

bool isImageInput(const Shape& shape) {
  return shape.size() == 3 && (shape[0] == 1 || shape[0] == 3) && shape[1] > 0 && shape[2] > 0;
}

bool isMnistInput(const Shape& shape) { return shape == Shape{1, kMnistSide, kMnistSide}; }

std::optional<Tensor> drawingToInput(const QImage& drawing, const Shape& chw) {
  const QImage gray = drawing.convertToFormat(QImage::Format_Grayscale8);
  int left = gray.width(), top = gray.height(), right = -1, bottom = -1;
  double mass = 0, mx = 0, my = 0;  // centre of mass, in continuous coordinates
  for (int y = 0; y < gray.height(); ++y) {
    const uchar* row = gray.constScanLine(y);
    for (int x = 0; x < gray.width(); ++x) {
      if (!row[x]) continue;
      left = std::min(left, x);
      right = std::max(right, x);
      top = std::min(top, y);
      bottom = std::max(bottom, y);
      mass += row[x];
      mx += row[x] * (x + 0.5);
      my += row[x] * (y + 0.5);
    }
  }
  if (mass == 0) return std::nullopt;
  if (!isMnistInput(chw)) return data::image_to_input(toDataImage(gray), chw);

  // The square of the drawing that becomes the 28 x 28 field: its side makes the bounding box's
  // longer side 20 pixels, its centre is the centre of mass. image_to_input then scales it down
  // (area averaging) or up.
  const double box = std::max(right - left + 1, bottom - top + 1);
  const int side = std::max(1, int(std::lround(box * double(kMnistSide) / kMnistBox)));
  const int x0 = int(std::lround(mx / mass - side / 2.0)), y0 = int(std::lround(my / mass - side / 2.0));
  data::Image field{side, side, 1, std::vector<uint8_t>(size_t(side) * size_t(side), 0)};
  for (int y = std::max(0, y0); y < std::min(gray.height(), y0 + side); ++y) {
    const int from = std::max(0, x0), to = std::min(gray.width(), x0 + side);
    if (from < to)
      std::memcpy(&field.pixels[size_t(y - y0) * size_t(side) + size_t(from - x0)], gray.constScanLine(y) + from,
                  size_t(to - from));
  }
  return data::image_to_input(field, chw);
}

data::Image toDataImage(const QImage& image) {
  const bool gray = image.isGrayscale();
  const QImage converted = image.convertToFormat(gray ? QImage::Format_Grayscale8 : QImage::Format_RGB888);
  data::Image out{converted.width(), converted.height(), gray ? 1 : 3, {}};
  const size_t row_bytes = size_t(out.width * out.channels);
  out.pixels.resize(row_bytes * size_t(out.height));
  for (int y = 0; y < converted.height(); ++y)
    std::memcpy(&out.pixels[size_t(y) * row_bytes], converted.constScanLine(y), row_bytes);
  return out;
}

QImage toQImage(const data::Image& image) {
  const QImage::Format format = image.channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB888;
  const auto row_bytes = qsizetype(image.width * image.channels);
  // A view of the pixels, copied so the result owns its memory.
  return QImage(image.pixels.data(), int(image.width), int(image.height), row_bytes, format).copy();
}

}  // namespace plexus::widgets
