#include "data/transforms.h"

#include <cmath>
#include <cstring>
#include <string>

#include "data/sampling.h"
#include "util/error.h"

namespace plexus::data {
uint64_t transform_seed(uint64_t seed, int64_t epoch, int64_t batch) {
  return mix_seed(seed + uint64_t(epoch), uint64_t(batch), 0x7261'6e73'666f'726dull);  // "ransform"
}

Tensor transform_input(const Tensor& t) {
  if (!t.defined()) throw ValueError("transform: undefined tensor in the batch");
  Tensor d = t.detach();
  return d.is_contiguous() ? d : d.contiguous();
}

// ---- Normalize ------------------------------------------------------------------------

Normalize::Normalize(std::vector<float> mean, std::vector<float> std) : mean_(std::move(mean)), std_(std::move(std)) {
  if (mean_.empty() || mean_.size() != std_.size())
    throw ValueError("Normalize: need as many means as stds (at least one), got " + std::to_string(mean_.size()) +
                     " and " + std::to_string(std_.size()));
  for (size_t c = 0; c < std_.size(); ++c)
    if (!(std_[c] > 0) || !std::isfinite(std_[c]) || !std::isfinite(mean_[c]))
      throw ValueError("Normalize: channel " + std::to_string(c) + " has mean " + std::to_string(mean_[c]) +
                       " and std " + std::to_string(std_[c]) + "; the std must be positive and both finite");
}

Example Normalize::apply(const Example& batch, Generator&) const {
  const Tensor x = transform_input(batch.input);
  const int64_t channels = int64_t(mean_.size());
  if (channels > 1 && (x.dim() < 2 || x.size(1) != channels))
    throw ShapeError("Normalize: " + std::to_string(channels) + " channel statistics, but the input batch is " +
                     to_string(x.shape()) + " (channels are dim 1 of [B, C, ...])");
  Tensor y = empty(x.shape());
  const int64_t b = x.dim() >= 1 ? x.size(0) : 1;
  const int64_t c = channels > 1 ? channels : 1;
  const int64_t inner = b * c == 0 ? 0 : x.numel() / (b * c);
  const float* in = x.data();
  float* out = y.data();
  for (int64_t i = 0; i < b; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float m = mean_[size_t(ch)], s = 1.f / std_[size_t(ch)];
      const int64_t base = (i * c + ch) * inner;
      for (int64_t k = 0; k < inner; ++k) out[base + k] = (in[base + k] - m) * s;
    }
  return {y, batch.target};
}

// ---- OneHot -----------------------------------------------------------------------------

OneHot::OneHot(int64_t num_classes, float on, float off) : k_(num_classes), on_(on), off_(off) {
  if (num_classes < 1) throw ValueError("OneHot: num_classes must be >= 1, got " + std::to_string(num_classes));
}

Example OneHot::apply(const Example& batch, Generator&) const {
  const Tensor t = transform_input(batch.target);
  Shape shape = t.shape();
  shape.push_back(k_);
  Tensor y = full(shape, off_);
  const float* in = t.data();
  float* out = y.data();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = in[i];
    if (!(v >= 0) || v >= float(k_) || v != std::floor(v))
      throw ValueError("OneHot: target " + std::to_string(i) + " is " + std::to_string(v) +
                       ", not a class index in [0, " + std::to_string(k_ - 1) + "]");
    out[i * k_ + int64_t(v)] = on_;
  }
  return {batch.input, y};
}

// ---- RandomShift -------------------------------------------------------------------------

RandomShift::RandomShift(int64_t max_shift) : k_(max_shift) {
  if (max_shift < 0) throw ValueError("RandomShift: max_shift must be >= 0, got " + std::to_string(max_shift));
}

Example RandomShift::apply(const Example& batch, Generator& gen) const {
  const Tensor x = transform_input(batch.input);
  if (x.dim() < 3)
    throw ShapeError("RandomShift: input batch must be [B, ..., H, W], got " + to_string(x.shape()));
  const int64_t b = x.size(0), h = x.size(-2), w = x.size(-1);
  const int64_t planes = (b * h * w) == 0 ? 0 : x.numel() / (b * h * w);  // images per example
  Tensor y = zeros(x.shape());
  const float* in = x.data();
  float* out = y.data();
  for (int64_t i = 0; i < b; ++i) {
    const int64_t dy = int64_t(uniform_index(gen, uint64_t(2 * k_ + 1))) - k_;
    const int64_t dx = int64_t(uniform_index(gen, uint64_t(2 * k_ + 1))) - k_;
    // out[r][c] = in[r - dy][c - dx] where that lies inside the image.
    const int64_t r0 = std::max<int64_t>(0, dy), r1 = std::min<int64_t>(h, h + dy);
    const int64_t c0 = std::max<int64_t>(0, dx), c1 = std::min<int64_t>(w, w + dx);
    if (r0 >= r1 || c0 >= c1) continue;
    for (int64_t p = 0; p < planes; ++p) {
      const int64_t base = (i * planes + p) * h * w;
      for (int64_t r = r0; r < r1; ++r)
        std::memcpy(out + base + r * w + c0, in + base + (r - dy) * w + (c0 - dx), size_t(c1 - c0) * sizeof(float));
    }
  }
  return {y, batch.target};
}

// ---- Compose / Lambda ----------------------------------------------------------------------

Compose::Compose(std::vector<TransformPtr> transforms) : ts_(std::move(transforms)) {
  for (const auto& t : ts_)
    if (!t) throw ValueError("Compose: null transform");
}

Example Compose::apply(const Example& batch, Generator& gen) const {
  Example e = batch;
  for (const auto& t : ts_) e = t->apply(e, gen);
  return e;
}

LambdaTransform::LambdaTransform(std::function<Example(const Example&, Generator&)> fn) : fn_(std::move(fn)) {
  if (!fn_) throw ValueError("LambdaTransform: empty function");
}

TransformPtr normalize(std::vector<float> mean, std::vector<float> std) {
  return std::make_shared<Normalize>(std::move(mean), std::move(std));
}
TransformPtr one_hot(int64_t num_classes) { return std::make_shared<OneHot>(num_classes); }
TransformPtr random_shift(int64_t max_shift) { return std::make_shared<RandomShift>(max_shift); }
TransformPtr compose(std::vector<TransformPtr> transforms) { return std::make_shared<Compose>(std::move(transforms)); }

}  // namespace plexus::data
