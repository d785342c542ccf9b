// Image augmentation (data/augment.h): flips, exact quarter-turn rotations and bilinear ones,
// brightness and contrast jitter with clamping, the documented draw order, reproducibility,
// inputs left alone, shape and parameter errors, and how long each takes on an MNIST batch.
#include "support/check.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "data/augment.h"
#include "data/transforms.h"
#include "ops/ops.h"
#include "tensor/tensor.h"
#include "util/error.h"
#include "support/test_support.h"

using namespace plexus;
using namespace plexus::data;

namespace {

using plexus::testing::contains;
using plexus::testing::message_of;


// Images [B, C, H, W] with values 1, 2, 3, ... (all distinct and nonzero).
Tensor counting_images(int64_t b, int64_t c, int64_t h, int64_t w) {
  return arange(b * c * h * w).reshape({b, c, h, w}) + 1.f;
}

// Images [B, C, H, W] uniform in [lo, hi).
Tensor random_images(const Shape& shape, float lo, float hi, uint64_t seed) {
  Generator gen(seed);
  return rand(shape, &gen) * (hi - lo) + lo;
}

Example batch_of(const Tensor& x) { return {x, arange(x.size(0))}; }

// Image i of a [B, C, H, W] tensor, channel ch, as H*W values.
std::vector<float> plane(const Tensor& x, int64_t i, int64_t ch) {
  return x.narrow(0, i, 1).narrow(1, ch, 1).contiguous().to_vector();
}

std::vector<float> rotated(const std::vector<float>& src, int64_t c, int64_t h, int64_t w, double degrees) {
  std::vector<float> dst(src.size(), -1.f);
  rotate_image(src.data(), dst.data(), c, h, w, degrees);
  return dst;
}

double mean_of(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s / double(v.size());
}

}  // namespace

// ---- flips -----------------------------------------------------------------------------------
TEST(flipMirrorsEachRow) {
  const Tensor x = counting_images(2, 1, 2, 3);  // rows 1 2 3 / 4 5 6, then 7 8 9 / 10 11 12
  Generator gen(1);
  const Example always = RandomHorizontalFlip(1.0).apply(batch_of(x), gen);
  COMPARE(always.input.to_vector(), (std::vector<float>{3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10}));
  COMPARE(always.target.to_vector(), batch_of(x).target.to_vector());
  const Example never = RandomHorizontalFlip(0.0).apply(batch_of(x), gen);
  COMPARE(never.input.to_vector(), x.to_vector());
}

TEST(flipTurnsAllChannelsOfAnImageTogether) {
  const Tensor x = counting_images(64, 3, 4, 5);
  Generator gen(7), replay(7);
  const Tensor y = RandomHorizontalFlip(0.5).apply(batch_of(x), gen).input;
  const Tensor mirrored = RandomHorizontalFlip(1.0).apply(batch_of(x), replay).input;
  Generator draws(7);
  int flipped = 0;
  for (int64_t i = 0; i < 64; ++i) {
    const bool flip = draws.uniform() < 0.5f;  // one draw per image, in batch order
    flipped += flip;
    for (int64_t ch = 0; ch < 3; ++ch) COMPARE(plane(y, i, ch), plane(flip ? mirrored : x, i, ch));
  }
  VERIFY2(flipped > 16 && flipped < 48, std::to_string(flipped) + " of 64 flipped");
}

// ---- rotations -------------------------------------------------------------------------------
TEST(quarterTurnsMovePixelsExactly) {
  const std::vector<float> src = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // 3x3, one channel
  COMPARE(rotated(src, 1, 3, 3, 0), src);
  COMPARE(rotated(src, 1, 3, 3, 90), (std::vector<float>{3, 6, 9, 2, 5, 8, 1, 4, 7}));  // counter-clockwise
  COMPARE(rotated(src, 1, 3, 3, 180), (std::vector<float>{9, 8, 7, 6, 5, 4, 3, 2, 1}));
  COMPARE(rotated(src, 1, 3, 3, -90), (std::vector<float>{7, 4, 1, 8, 5, 2, 9, 6, 3}));
  COMPARE(rotated(src, 1, 3, 3, 270), rotated(src, 1, 3, 3, -90));
  COMPARE(rotated(src, 1, 3, 3, 450), rotated(src, 1, 3, 3, 90));
}

TEST(aQuarterTurnOfAWideImageFillsWithZeros) {
  // 3 rows of 5, two channels: a quarter turn about the centre pixel (row 1, column 2) keeps
  // columns 1 to 3 (out(r, c) = src(c - 1, 3 - r)) and leaves columns 0 and 4 empty.
  const std::vector<float> src = counting_images(1, 2, 3, 5).to_vector();
  const std::vector<float> out = rotated(src, 2, 3, 5, 90);
  for (int64_t ch = 0; ch < 2; ++ch)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 5; ++c) {
        const float got = out[size_t(ch * 15 + r * 5 + c)];
        const float expected = c == 0 || c == 4 ? 0.f : src[size_t(ch * 15 + (c - 1) * 5 + (3 - r))];
        VERIFY2(got == expected, "channel " + std::to_string(ch) + " (" + std::to_string(r) + ", " + std::to_string(c) +
                                    "): got " + check::show(got) + ", expected " + check::show(expected));
      }
}

TEST(bilinearSamplingKeepsARampLinear) {
  // f = column index: bilinear sampling reproduces a linear function, so out(r, c) is the
  // source column it samples, cx + dx cos t - dy sin t, wherever that lies inside.
  const int64_t n = 9;
  std::vector<float> ramp(size_t(n * n));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < n; ++c) ramp[size_t(r * n + c)] = float(c);
  const double t = 30 * std::numbers::pi / 180, centre = 4;
  const std::vector<float> out = rotated(ramp, 1, n, n, 30);
  int inside = 0;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const double dx = double(c) - centre, dy = double(r) - centre;
      const double sx = centre + dx * std::cos(t) - dy * std::sin(t), sy = centre + dx * std::sin(t) + dy * std::cos(t);
      const float got = out[size_t(r * n + c)];
      if (sx >= 0 && sx <= n - 1 && sy >= 0 && sy <= n - 1) {
        ++inside;
        VERIFY2(std::abs(got - float(sx)) < 1e-4f,
                "(" + std::to_string(r) + ", " + std::to_string(c) + "): " + check::show(got) + " vs " + check::show(sx));
      } else if (sx <= -1 || sx >= n || sy <= -1 || sy >= n) {
        COMPARE(got, 0.f);  // wholly outside
      }
    }
  VERIFY(inside > n * n / 2);
  COMPARE(out[size_t(4 * n + 4)], 4.f);  // the centre stays
  VERIFY_CONTAINS(message_of<ValueError>([&] { rotated(ramp, 1, n, n, std::nan("")); }), "angle");
}

TEST(randomRotationDrawsOneAnglePerImage) {
  const Tensor x = random_images({5, 2, 7, 6}, 0, 1, 3);
  Generator gen(11), draws(11);
  const Tensor y = RandomRotation(25).apply(batch_of(x), gen).input;
  for (int64_t i = 0; i < 5; ++i) {
    const double degrees = 25 * (2.0 * double(draws.uniform()) - 1.0);
    const std::vector<float> src = x.narrow(0, i, 1).contiguous().to_vector();
    COMPARE(y.narrow(0, i, 1).contiguous().to_vector(), rotated(src, 2, 7, 6, degrees));
    VERIFY(std::abs(degrees) <= 25);
  }
  Generator still(1);
  COMPARE(RandomRotation(0).apply(batch_of(x), still).input.to_vector(), x.to_vector());
}

// ---- jitter ----------------------------------------------------------------------------------
TEST(brightnessScalesEachImage) {
  const Tensor x = random_images({6, 1, 4, 4}, 0, 0.4f, 5);  // no factor in [0.5, 1.5) clips these
  Generator gen(2), draws(2);
  const Tensor y = ColorJitter(0.5, 0).apply(batch_of(x), gen).input;
  for (int64_t i = 0; i < 6; ++i) {
    const auto b = float(1.0 + 0.5 * (2.0 * double(draws.uniform()) - 1.0));
    draws.uniform();  // the contrast draw, made even for a range of 0
    const std::vector<float> in = plane(x, i, 0), out = plane(y, i, 0);
    for (size_t k = 0; k < in.size(); ++k) COMPARE(out[k], in[k] * b);
  }
}

TEST(contrastKeepsTheMeanGray) {
  const Tensor gray = random_images({6, 1, 5, 5}, 0.3f, 0.7f, 6);  // no factor in [0.5, 1.5) clips these
  Generator gen(4), draws(4);
  const Tensor y = ColorJitter(0, 0.5).apply(batch_of(gray), gen).input;
  bool changed = false;
  for (int64_t i = 0; i < 6; ++i) {
    draws.uniform();  // brightness
    const double c = 1.0 + 0.5 * (2.0 * double(draws.uniform()) - 1.0);
    const std::vector<float> in = plane(gray, i, 0), out = plane(y, i, 0);
    const double m = mean_of(in);
    VERIFY(std::abs(mean_of(out) - m) < 1e-5);
    for (size_t k = 0; k < in.size(); ++k) VERIFY(std::abs(out[k] - ((in[k] - m) * c + m)) < 1e-5);
    changed |= out != in;
  }
  VERIFY(changed);

  // Colour images blend towards the mean luma, 0.299 R + 0.587 G + 0.114 B, which stays.
  const Tensor rgb = random_images({4, 3, 5, 5}, 0.3f, 0.7f, 8);
  Generator gen_rgb(9);
  const Tensor z = ColorJitter(0, 0.5).apply(batch_of(rgb), gen_rgb).input;
  const auto mean_luma = [](const Tensor& t, int64_t i) {
    const std::vector<float> r = plane(t, i, 0), g = plane(t, i, 1), b = plane(t, i, 2);
    double s = 0;
    for (size_t k = 0; k < r.size(); ++k) s += 0.299 * r[k] + 0.587 * g[k] + 0.114 * b[k];
    return s / double(r.size());
  };
  for (int64_t i = 0; i < 4; ++i) {
    VERIFY(std::abs(mean_luma(z, i) - mean_luma(rgb, i)) < 1e-5);
    VERIFY(plane(z, i, 0) != plane(rgb, i, 0));
  }
}

TEST(jitterClampsToTheUnitRange) {
  const Tensor x = random_images({32, 3, 4, 4}, 0, 1, 10);
  Generator gen(3);
  const Tensor y = ColorJitter(0.9, 0.9).apply(batch_of(x), gen).input;
  for (float v : y.to_vector()) VERIFY2(v >= 0.f && v <= 1.f, check::show(v));
  // Brightness alone: a bright pixel pushed past 1 stops at 1.
  const Tensor bright = full({8, 1, 2, 2}, 0.9f);
  Generator gen_b(5);
  const Tensor yb = ColorJitter(0.9, 0).apply(batch_of(bright), gen_b).input;
  Generator draws_b(5);
  int clipped = 0;
  for (int64_t i = 0; i < 8; ++i) {
    const auto b = float(1.0 + 0.9 * (2.0 * double(draws_b.uniform()) - 1.0));
    draws_b.uniform();
    const float expected = std::min(0.9f * b, 1.f);
    clipped += expected == 1.f;
    for (float v : plane(yb, i, 0)) COMPARE(v, expected);
  }
  VERIFY(clipped > 0 && clipped < 8);
}

// ---- the composition -------------------------------------------------------------------------
TEST(augmentationComposesInItsDocumentedOrder) {
  VERIFY(!AugmentOptions{}.any());
  VERIFY(augmentation({}) == nullptr);
  const AugmentOptions all{.shift = 2, .flip = true, .rotation = 15, .brightness = 0.2, .contrast = 0.3};
  VERIFY(all.any());
  const Tensor x = random_images({8, 3, 10, 10}, 0, 1, 12);
  Generator a(21), b(21);
  const Tensor got = augmentation(all)->apply(batch_of(x), a).input;
  const Tensor expected = compose({std::make_shared<RandomRotation>(15), random_shift(2),
                                   std::make_shared<RandomHorizontalFlip>(0.5), std::make_shared<ColorJitter>(0.2, 0.3)})
                              ->apply(batch_of(x), b)
                              .input;
  COMPARE(got.to_vector(), expected.to_vector());
  // One kind alone is that transform.
  Generator c(4), d(4);
  COMPARE(augmentation({.flip = true})->apply(batch_of(x), c).input.to_vector(),
           RandomHorizontalFlip(0.5).apply(batch_of(x), d).input.to_vector());
}

TEST(sameSeedSameBatchOtherBatchesDiffer) {
  const TransformPtr aug = augmentation({.shift = 1, .flip = true, .rotation = 20, .brightness = 0.3, .contrast = 0.3});
  const Tensor x = random_images({16, 1, 12, 12}, 0, 1, 13);
  const Tensor before = x.clone();
  Generator g1(transform_seed(0, 0, 0)), g2(transform_seed(0, 0, 0)), g3(transform_seed(0, 0, 1));
  const Tensor y1 = aug->apply(batch_of(x), g1).input, y2 = aug->apply(batch_of(x), g2).input;
  const Tensor y3 = aug->apply(batch_of(x), g3).input;
  COMPARE(y1.to_vector(), y2.to_vector());
  VERIFY(y1.to_vector() != y3.to_vector());
  COMPARE(y1.shape(), x.shape());
  COMPARE(x.to_vector(), before.to_vector());  // the input is left alone
}

TEST(noTransformModifiesItsInput) {
  const Tensor x = random_images({4, 3, 6, 6}, 0, 1, 14);
  const std::vector<float> before = x.to_vector();
  const std::vector<TransformPtr> all = {std::make_shared<RandomHorizontalFlip>(1.0),
                                         std::make_shared<RandomRotation>(90),
                                         std::make_shared<ColorJitter>(0.5, 0.5)};
  for (const TransformPtr& t : all) {
    Generator gen(1);
    const Tensor y = t->apply(batch_of(x), gen).input;
    VERIFY(y.data() != x.data());
    COMPARE(x.to_vector(), before);
  }
}

// ---- errors ----------------------------------------------------------------------------------
TEST(inputsThatAreNotImageBatchesAreRefused) {
  Generator gen(1);
  const std::vector<std::pair<TransformPtr, std::string>> all = {
      {std::make_shared<RandomHorizontalFlip>(0.5), "RandomHorizontalFlip"},
      {std::make_shared<RandomRotation>(10), "RandomRotation"},
      {std::make_shared<ColorJitter>(0.1, 0.1), "ColorJitter"}};
  for (const auto& [transform, name] : all) {
    const auto& t = transform;  // a lambda may not capture a structured binding before clang 16
    for (const Shape& shape : {Shape{4, 6, 6}, Shape{4, 36}, Shape{2, 1, 1, 6, 6}}) {
      const std::string message = message_of<ShapeError>([&] { t->apply(batch_of(zeros(shape)), gen); });
      VERIFY_CONTAINS(message, name);
      VERIFY_CONTAINS(message, "[B, C, H, W]");
    }
    VERIFY_CONTAINS(message_of<ValueError>([&] { t->apply(Example{}, gen); }), "undefined");
  }
}

TEST(parametersAreChecked) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  VERIFY_CONTAINS(message_of<ValueError>([] { RandomHorizontalFlip(-0.1); }), "RandomHorizontalFlip: p must be in [0");
  VERIFY_CONTAINS(message_of<ValueError>([] { RandomHorizontalFlip(1.5); }), "p must be");
  VERIFY_CONTAINS(message_of<ValueError>([] { RandomRotation(-1); }), "RandomRotation: max_degrees");
  VERIFY_CONTAINS(message_of<ValueError>([] { RandomRotation(181); }), "max_degrees");
  VERIFY_CONTAINS(message_of<ValueError>([&] { RandomRotation{nan}; }), "max_degrees");
  VERIFY_CONTAINS(message_of<ValueError>([] { ColorJitter(1.0, 0); }), "ColorJitter: brightness");
  VERIFY_CONTAINS(message_of<ValueError>([] { ColorJitter(-0.1, 0); }), "brightness");
  VERIFY_CONTAINS(message_of<ValueError>([] { ColorJitter(0, 1.0); }), "contrast");
  VERIFY_CONTAINS(message_of<ValueError>([] { ColorJitter(0, -0.5); }), "contrast");
  RandomRotation(180);  // the ends of the ranges are fine
  RandomHorizontalFlip(0);
  RandomHorizontalFlip(1);
  VERIFY_CONTAINS(message_of<ValueError>([] { augmentation({.shift = -1}); }), "max_shift");
  VERIFY_CONTAINS(message_of<ValueError>([] { augmentation({.rotation = 200}); }), "max_degrees");
  VERIFY_CONTAINS(message_of<ValueError>([] { augmentation({.brightness = -0.2}); }), "brightness");
  VERIFY_CONTAINS(message_of<ValueError>([] { augmentation({.contrast = 2}); }), "contrast");
}

// ---- speed -----------------------------------------------------------------------------------
TEST(timeOnAnMnistBatch) {
  // Reported, not asserted (sanitizer builds are slower): the best of 20 runs on 100 28x28 images.
  const Tensor x = random_images({100, 1, 28, 28}, 0, 1, 15);
  const std::vector<std::pair<std::string, TransformPtr>> all = {
      {"flip", std::make_shared<RandomHorizontalFlip>(0.5)},
      {"shift", random_shift(2)},
      {"rotation", std::make_shared<RandomRotation>(15)},
      {"jitter", std::make_shared<ColorJitter>(0.3, 0.3)}};
  for (const auto& [name, t] : all) {
    Generator gen(1);
    auto best = std::chrono::steady_clock::duration::max();
    for (int run = 0; run < 20; ++run) {
      const auto start = std::chrono::steady_clock::now();
      const Example y = t->apply(batch_of(x), gen);
      best = std::min(best, std::chrono::steady_clock::now() - start);
      COMPARE(y.input.shape(), x.shape());
    }
    std::printf("INFO   : %s of 100x1x28x28: %.3f ms\n", name.c_str(),
                std::chrono::duration<double, std::milli>(best).count());
  }
}

