// The model-input half of data/image_file.h: fitting a picture into a model's C x H x W, either
// as a prepared 8-bit image (prepare_image) or as floats (image_to_input). Both go through one
// resampler, so they differ only in prepare_image rounding to whole levels.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "data/image_file.h"
#include "util/error.h"

namespace plexus::data {
namespace {

// Resizing one axis of `in` pixels to `out`: each output index is a weighted sum of input
// indices ("taps"), the weights summing to 1. The taps are worked out when needed rather than
// stored: a picture of extreme aspect ratio (1 x 2^26 pixels) would need gigabytes of them.
struct Axis {
  int64_t in, out;

  // Calls f(i, weight) for each tap of output index j, in increasing i.
  template <typename F>
  void taps(int64_t j, F f) const {
    if (in == out) {
      f(j, 1.0);
    } else if (out < in) {
      // Area average. In units of 1/(in*out) of the axis, input pixel i spans [i*out, (i+1)*out)
      // and output pixel j spans [j*in, (j+1)*in): the overlaps are whole numbers, so the
      // weights are exact fractions of `in`.
      const int64_t lo = j * in, hi = (j + 1) * in;
      for (int64_t i = lo / out; i * out < hi; ++i) {
        const int64_t overlap = std::min(hi, (i + 1) * out) - std::max(lo, i * out);
        if (overlap > 0) f(i, double(overlap) / double(in));
      }
    } else {
      // Bilinear with pixel centres aligned (output centre j + 1/2 maps to input x + 1/2), the
      // edges clamped: x = ((2j + 1) * in - out) / (2 * out).
      const double x = std::clamp(double((2 * j + 1) * in - out) / double(2 * out), 0.0, double(in - 1));
      const int64_t i0 = int64_t(x);
      const double w = x - double(i0);
      f(i0, 1.0 - w);
      if (w > 0) f(i0 + 1, w);
    }
  }
};

// Where the picture lands along one axis of an output of `out` pixels, once resized to
// `resized`: positions first .. first + count - 1 of it appear at output positions at .. at +
// count - 1, the rest of the output is background. A crop keeps the middle, a pad centres it.
struct AxisPlacement {
  int64_t first, count, at;
};

AxisPlacement place(int64_t resized, int64_t out) {
  if (resized >= out) return {(resized - out) / 2, out, 0};
  return {0, resized, (out - resized) / 2};
}

// a * b / c rounded to the nearest whole number, at least 1 (the products stay below 2^63:
// a and c are at most kImageMaxPixels, b at most kImageMaxPixels).
int64_t scaled(int64_t a, int64_t b, int64_t c) { return std::max<int64_t>(1, (2 * a * b + c) / (2 * c)); }

// Fits `image` into `channels` x `height` x `width` and hands every output value, in pixel units
// (0 to 255, unrounded), to emit(c, y, x, value); background (Pad) is emitted as 0. Channels:
// gray replicated, or BT.601 luma (weights in whole thousandths, so R = G = B gives exactly that
// value), converted before resizing; each axis resized on its own.
template <typename Emit>
void resample(const Image& image, int64_t channels, int64_t height, int64_t width, ImageFit fit, Emit emit) {
  const int64_t iw = image.width, ih = image.height, ic = image.channels;
  // The resized size: Stretch takes the output's; Crop scales both axes alike to cover it, Pad to
  // fit inside it (the axis that decides gets the output's length exactly).
  int64_t rw = width, rh = height;
  if (fit != ImageFit::Stretch) {
    const bool width_decides = (width * ih >= height * iw) == (fit == ImageFit::Crop);
    if (width_decides) rh = scaled(ih, width, iw);
    else rw = scaled(iw, height, ih);
  }
  const AxisPlacement px = place(rw, width), py = place(rh, height);
  const Axis across{iw, rw}, down{ih, rh};

  const uint8_t* pixels = image.pixels.data();
  auto source = [&](int64_t c, int64_t i) -> double {
    const uint8_t* p = pixels + i * ic;
    if (ic == 1) return p[0];
    if (channels == 3) return p[c];
    return double(299 * p[0] + 587 * p[1] + 114 * p[2]) / 1000.0;
  };
  // Each output value is sum over its down taps of weight x (sum over its across taps of weight x
  // source), both sums in increasing index order; one output row at a time, so the only buffer
  // is a row.
  std::vector<double> row(size_t(px.count));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t y = 0; y < height; ++y) {
      const int64_t sy = y - py.at;
      const bool inside = sy >= 0 && sy < py.count;
      if (inside) {
        std::fill(row.begin(), row.end(), 0.0);
        down.taps(py.first + sy, [&](int64_t i, double wd) {
          for (int64_t x = 0; x < px.count; ++x) {
            double v = 0;
            across.taps(px.first + x, [&](int64_t k, double wa) { v += wa * source(c, i * iw + k); });
            row[size_t(x)] += wd * v;
          }
        });
      }
      for (int64_t x = 0; x < width; ++x) {
        const int64_t sx = x - px.at;
        emit(c, y, x, inside && sx >= 0 && sx < px.count ? row[size_t(sx)] : 0.0);
      }
    }
}

}  // namespace

ImageFit parse_image_fit(const std::string& name) {
  for (ImageFit fit : {ImageFit::Stretch, ImageFit::Crop, ImageFit::Pad})
    if (name == image_fit_name(fit)) return fit;
  throw ValueError("unknown image fit '" + name + "'; expected crop, pad or stretch");
}

const char* image_fit_name(ImageFit fit) {
  switch (fit) {
    case ImageFit::Stretch:
      return "stretch";
    case ImageFit::Crop:
      return "crop";
    case ImageFit::Pad:
      return "pad";
  }
  return "?";
}

void check_image_format(const ImageFormat& format, const std::string& where) {
  if (format.channels != 1 && format.channels != 3)
    throw ValueError(where + ": a model's pictures have 1 (gray) or 3 (RGB) channels, not " +
                     std::to_string(format.channels));
  if (format.height < 1 || format.width < 1 || format.height > kImageMaxPixels || format.width > kImageMaxPixels ||
      format.height * format.width > kImageMaxPixels)
    throw ValueError(where + ": pictures of " + std::to_string(format.height) + " x " + std::to_string(format.width) +
                     " pixels (height x width); expected 1 to " + std::to_string(kImageMaxPixels) + " pixels");
  if (format.fit != ImageFit::Stretch && format.fit != ImageFit::Crop && format.fit != ImageFit::Pad)
    throw ValueError(where + ": unknown image fit " + std::to_string(int(format.fit)));
}

Image prepare_image(const Image& image, const ImageFormat& format) {
  check_image(image, "prepare_image");
  check_image_format(format, "prepare_image");
  if (image.width == format.width && image.height == format.height && image.channels == format.channels)
    return image;
  Image out;
  out.width = format.width;
  out.height = format.height;
  out.channels = format.channels;
  out.pixels.resize(size_t(out.width * out.height * out.channels));
  uint8_t* o = out.pixels.data();
  const int64_t w = out.width, c = out.channels;
  resample(image, format.channels, format.height, format.width, format.fit, [&](int64_t ch, int64_t y, int64_t x, double v) {
    o[(y * w + x) * c + ch] = uint8_t(std::lround(std::clamp(v, 0.0, 255.0)));
  });
  return out;
}

void prepared_to_input(const Image& prepared, float* out) {
  check_image(prepared, "prepared_to_input");
  const int64_t c = prepared.channels, n = prepared.width * prepared.height;
  const uint8_t* p = prepared.pixels.data();
  // The MNIST reader's own arithmetic (float(byte) * (1/255)), so equal pixels give equal floats.
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t i = 0; i < n; ++i) out[ch * n + i] = float(p[i * c + ch]) * (1.f / 255.f);
}

Tensor prepared_to_input(const Image& prepared) {
  check_image(prepared, "prepared_to_input");
  Tensor out = empty({prepared.channels, prepared.height, prepared.width});
  prepared_to_input(prepared, out.data());
  return out;
}

Image input_to_image(const Tensor& raw) {
  const Shape& s = raw.shape();
  if (s.size() != 2 && s.size() != 3)
    throw ShapeError("input_to_image: a picture is [C, H, W] or [H, W], not " + to_string(s));
  Image image;
  image.channels = s.size() == 3 ? s[0] : 1;
  image.height = s[s.size() - 2];
  image.width = s[s.size() - 1];
  const std::vector<float> v = raw.contiguous().to_vector();
  image.pixels.resize(v.size());
  const int64_t plane = image.height * image.width;
  for (int64_t c = 0; c < image.channels; ++c)  // channel-first floats to interleaved bytes
    for (int64_t i = 0; i < plane; ++i)
      image.pixels[size_t(i * image.channels + c)] =
          uint8_t(std::lround(std::clamp(v[size_t(c * plane + i)], 0.f, 1.f) * 255.f));
  return image;
}

Tensor image_to_input(const Image& image, const Shape& chw) {
  if (chw.size() != 3 || (chw[0] != 1 && chw[0] != 3) || chw[1] < 1 || chw[2] < 1)
    throw ShapeError("image_to_input: a picture becomes an input of shape [C, H, W] with C 1 (gray) or 3 (RGB), "
                     "not " + to_string(chw));
  check_image(image, "image_to_input");
  const int64_t channels = chw[0], height = chw[1], width = chw[2];
  Tensor out = empty({channels, height, width});
  float* o = out.data();
  resample(image, channels, height, width, ImageFit::Stretch, [&](int64_t c, int64_t y, int64_t x, double v) {
    o[(c * height + y) * width + x] = float(v) * (1.f / 255.f);
  });
  return out;
}

}  // namespace plexus::data
