#pragma once
// Batch transforms applied by the DataLoader after a batch is assembled (on its prefetch
// threads): normalisation, one-hot targets, random image shifts, and composition (more image
// augmentation: data/augment.h).
//
// A transform maps a batch {input [B, ...], target [B, ...]} to a new one. It must not
// modify the tensors it is given (it returns new ones), must be safe to call from several
// threads at once (const, no shared mutable state) and takes all its randomness from the
// Generator passed in. The DataLoader seeds that generator from (seed, epoch, batch index)
// with transform_seed, so augmentation is reproducible and independent of thread timing.
// Transforms record no autograd history.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "data/dataset.h"
#include "tensor/generator.h"

namespace plexus::data {

class Transform {
 public:
  virtual ~Transform() = default;
  virtual Example apply(const Example& batch, Generator& gen) const = 0;
  Example operator()(const Example& batch, Generator& gen) const { return apply(batch, gen); }
};

using TransformPtr = std::shared_ptr<const Transform>;

// The seed of the generator for batch `batch` of epoch `epoch` of a loader seeded `seed`.
uint64_t transform_seed(uint64_t seed, int64_t epoch, int64_t batch);

// A batch tensor as a transform reads it: contiguous, without history, sharing `t`'s storage
// when it can (so only read from it). ValueError when `t` is undefined.
Tensor transform_input(const Tensor& t);

// input = (input - mean[c]) / std[c] for channel c = dim 1 of input [B, C, ...] (features
// of [B, F]). A single mean/std applies to every channel. std must be positive.
class Normalize final : public Transform {
 public:
  Normalize(std::vector<float> mean, std::vector<float> std);
  Example apply(const Example& batch, Generator& gen) const override;

 private:
  std::vector<float> mean_, std_;
};

// Class-index targets [B] (whole numbers in [0, K)) become one-hot rows [B, K] with
// `on` at the class and `off` elsewhere (on = 1 - s + s/K, off = s/K gives label smoothing s).
class OneHot final : public Transform {
 public:
  explicit OneHot(int64_t num_classes, float on = 1.f, float off = 0.f);
  Example apply(const Example& batch, Generator& gen) const override;

 private:
  int64_t k_;
  float on_, off_;
};

// Shifts every image of input [B, ..., H, W] by its own random (dy, dx), each uniform in
// [-max_shift, max_shift], filling the uncovered border with zeros. Two draws per example,
// dy then dx, in batch order. This is also the random crop: padding by max_shift zeros and
// cropping back to H×W at a random offset shifts the image by the same amounts.
class RandomShift final : public Transform {
 public:
  explicit RandomShift(int64_t max_shift);
  Example apply(const Example& batch, Generator& gen) const override;

 private:
  int64_t k_;
};

// Applies transforms in order, all drawing from the same generator.
class Compose final : public Transform {
 public:
  explicit Compose(std::vector<TransformPtr> transforms);
  Example apply(const Example& batch, Generator& gen) const override;

 private:
  std::vector<TransformPtr> ts_;
};

// A transform from a function (must follow the rules above).
class LambdaTransform final : public Transform {
 public:
  explicit LambdaTransform(std::function<Example(const Example&, Generator&)> fn);
  Example apply(const Example& batch, Generator& gen) const override { return fn_(batch, gen); }

 private:
  std::function<Example(const Example&, Generator&)> fn_;
};

// Shorthands.
TransformPtr normalize(std::vector<float> mean, std::vector<float> std);
TransformPtr one_hot(int64_t num_classes);
TransformPtr random_shift(int64_t max_shift);
TransformPtr compose(std::vector<TransformPtr> transforms);

}  // namespace plexus::data
