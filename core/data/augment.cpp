#include "data/augment.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace plexus::data {
namespace {

// The batch's input as [B, C, H, W] floats to read; a ShapeError naming `who` otherwise.
Tensor image_batch(const Tensor& input, const char* who) {
  Tensor x = transform_input(input);
  if (x.dim() != 4)
    throw ShapeError(std::string(who) + ": input batch must be images [B, C, H, W], got " + to_string(x.shape()));
  return x;
}

// cos and sin of an angle in degrees, exact at multiples of 90° (where std::cos of the angle in
// radians is off by ~1e-16, which would blend every pixel of a quarter turn with its neighbour).
std::pair<double, double> cos_sin_degrees(double degrees) {
  double quarter = std::fmod(degrees / 90.0, 4.0);
  if (quarter == std::floor(quarter)) {
    if (quarter < 0) quarter += 4;
    constexpr std::pair<double, double> exact[4] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    return exact[int(quarter)];
  }
  const double radians = degrees * (std::numbers::pi / 180.0);
  return {std::cos(radians), std::sin(radians)};
}

void check_range(double value, double lo, double hi, bool hi_included, const char* who, const char* name) {
  if (value >= lo && (value < hi || (hi_included && value == hi))) return;
  throw ValueError(std::string(who) + ": " + name + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                   (hi_included ? "]" : ")") + ", got " + std::to_string(value));
}

float clamp01(float v) { return std::min(std::max(v, 0.f), 1.f); }

}  // namespace

// ---- rotate_image --------------------------------------------------------------------------

void rotate_image(const float* src, float* dst, int64_t channels, int64_t height, int64_t width, double degrees) {
  if (!std::isfinite(degrees)) throw ValueError("rotate_image: the angle must be finite, got " + std::to_string(degrees));
  const auto [cos_t, sin_t] = cos_sin_degrees(degrees);
  const double cx = 0.5 * double(width - 1), cy = 0.5 * double(height - 1);
  const int64_t plane = height * width;
  for (int64_t r = 0; r < height; ++r) {
    const double dy = double(r) - cy;
    for (int64_t c = 0; c < width; ++c) {
      // Output (r, c) samples the source where the inverse rotation takes it (rows run down,
      // so counter-clockwise on screen is clockwise in these coordinates).
      const double dx = double(c) - cx;
      const double sx = cx + dx * cos_t - dy * sin_t, sy = cy + dx * sin_t + dy * cos_t;
      const double fx = std::floor(sx), fy = std::floor(sy);
      float* out = dst + r * width + c;
      if (fx < -1 || fx >= double(width) || fy < -1 || fy >= double(height)) {
        for (int64_t ch = 0; ch < channels; ++ch) out[ch * plane] = 0.f;
        continue;
      }
      // The four neighbours (x0|x1, y0|y1) and their bilinear weights; one outside weighs 0.
      const int64_t x0 = int64_t(fx), y0 = int64_t(fy), x1 = x0 + 1, y1 = y0 + 1;
      const float ax = float(sx - fx), ay = float(sy - fy);
      const bool in_x0 = x0 >= 0, in_x1 = x1 < width, in_y0 = y0 >= 0, in_y1 = y1 < height;
      const float w00 = in_y0 && in_x0 ? (1 - ax) * (1 - ay) : 0.f, w01 = in_y0 && in_x1 ? ax * (1 - ay) : 0.f;
      const float w10 = in_y1 && in_x0 ? (1 - ax) * ay : 0.f, w11 = in_y1 && in_x1 ? ax * ay : 0.f;
      const int64_t o00 = w00 != 0 ? y0 * width + x0 : 0, o01 = w01 != 0 ? y0 * width + x1 : 0;
      const int64_t o10 = w10 != 0 ? y1 * width + x0 : 0, o11 = w11 != 0 ? y1 * width + x1 : 0;
      for (int64_t ch = 0; ch < channels; ++ch) {
        const float* s = src + ch * plane;
        out[ch * plane] = w00 * s[o00] + w01 * s[o01] + w10 * s[o10] + w11 * s[o11];
      }
    }
  }
}

// ---- RandomHorizontalFlip ------------------------------------------------------------------

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  check_range(p, 0, 1, true, "RandomHorizontalFlip", "p");
}

Example RandomHorizontalFlip::apply(const Example& batch, Generator& gen) const {
  const Tensor x = image_batch(batch.input, "RandomHorizontalFlip");
  const int64_t b = x.size(0), rows = x.size(1) * x.size(2), w = x.size(3), image = rows * w;
  Tensor y = empty(x.shape());
  for (int64_t i = 0; i < b; ++i) {
    const float* in = x.data() + i * image;
    float* out = y.data() + i * image;
    if (!(double(gen.uniform()) < p_)) {
      std::memcpy(out, in, size_t(image) * sizeof(float));
      continue;
    }
    for (int64_t r = 0; r < rows; ++r) std::reverse_copy(in + r * w, in + (r + 1) * w, out + r * w);
  }
  return {y, batch.target};
}

// ---- RandomRotation ------------------------------------------------------------------------

RandomRotation::RandomRotation(double max_degrees) : max_degrees_(max_degrees) {
  check_range(max_degrees, 0, 180, true, "RandomRotation", "max_degrees");
}

Example RandomRotation::apply(const Example& batch, Generator& gen) const {
  const Tensor x = image_batch(batch.input, "RandomRotation");
  const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3), image = c * h * w;
  Tensor y = empty(x.shape());
  for (int64_t i = 0; i < b; ++i) {
    const double degrees = max_degrees_ * (2.0 * double(gen.uniform()) - 1.0);
    rotate_image(x.data() + i * image, y.data() + i * image, c, h, w, degrees);
  }
  return {y, batch.target};
}

// ---- ColorJitter ---------------------------------------------------------------------------

ColorJitter::ColorJitter(double brightness, double contrast) : brightness_(brightness), contrast_(contrast) {
  check_range(brightness, 0, 1, false, "ColorJitter", "brightness");
  check_range(contrast, 0, 1, false, "ColorJitter", "contrast");
}

Example ColorJitter::apply(const Example& batch, Generator& gen) const {
  const Tensor x = image_batch(batch.input, "ColorJitter");
  const int64_t b = x.size(0), c = x.size(1), plane = x.size(2) * x.size(3), image = c * plane;
  Tensor y = empty(x.shape());
  for (int64_t i = 0; i < b; ++i) {
    const auto bright = float(1.0 + brightness_ * (2.0 * double(gen.uniform()) - 1.0));
    const auto contrast = float(1.0 + contrast_ * (2.0 * double(gen.uniform()) - 1.0));
    const float* in = x.data() + i * image;
    float* out = y.data() + i * image;
    for (int64_t k = 0; k < image; ++k) out[k] = clamp01(in[k] * bright);
    if (contrast == 1.f) continue;  // the identity: skipped, exact and cheaper
    double sum = 0;  // of the gray level
    if (c == 3) {
      for (int64_t k = 0; k < plane; ++k)
        sum += 0.299 * double(out[k]) + 0.587 * double(out[plane + k]) + 0.114 * double(out[2 * plane + k]);
    } else {
      for (int64_t k = 0; k < image; ++k) sum += double(out[k]);
    }
    const int64_t gray_count = c == 3 ? plane : image;
    const float mean = gray_count ? float(sum / double(gray_count)) : 0.f;
    for (int64_t k = 0; k < image; ++k) out[k] = clamp01((out[k] - mean) * contrast + mean);
  }
  return {y, batch.target};
}

// ---- augmentation ----------------------------------------------------------------------------

TransformPtr augmentation(const AugmentOptions& options) {
  std::vector<TransformPtr> steps;
  if (options.rotation != 0) steps.push_back(std::make_shared<RandomRotation>(options.rotation));
  if (options.shift != 0) steps.push_back(random_shift(options.shift));
  if (options.flip) steps.push_back(std::make_shared<RandomHorizontalFlip>(0.5));
  if (options.brightness != 0 || options.contrast != 0)
    steps.push_back(std::make_shared<ColorJitter>(options.brightness, options.contrast));
  if (steps.empty()) return nullptr;
  return steps.size() == 1 ? steps.front() : compose(std::move(steps));
}

}  // namespace plexus::data
