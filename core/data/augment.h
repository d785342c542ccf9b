#pragma once
// Image augmentation for training batches: random flips, rotations, and brightness and
// contrast jitter, plus `augmentation`, which composes them (with RandomShift) from options.
//
// Each takes a batch of images, input [B, C, H, W] in raw units (values in [0, 1], so apply
// them before Normalize), and returns a new batch with the target unchanged. Any other input
// shape is a ShapeError naming the transform: a batch of single-channel images is
// [B, 1, H, W], as the image datasets give it. Geometry is drawn once per image and applied
// alike to all of its channels. They follow the Transform contract (data/transforms.h): all
// randomness comes from the generator passed in, drawn in the order each class states, so a
// batch is reproducible from its seed.
//
// Random crops: padding an image by k zeros on every side and cropping it back to H×W at a
// random offset is exactly RandomShift(k) (data/transforms.h), so that is the crop.
#include <cstdint>

#include "data/transforms.h"

namespace plexus::data {

// Rotates one image, src [C, H, W] to dst [C, H, W] (distinct buffers), by `degrees`
// counter-clockwise as displayed (rows running down) about the image's centre
// ((W - 1) / 2, (H - 1) / 2), sampling bilinearly; what comes from outside the image is 0.
// Multiples of 90° rotate exactly: pixels move unblurred.
void rotate_image(const float* src, float* dst, int64_t channels, int64_t height, int64_t width, double degrees);

// Mirrors each image left-right with probability p. One draw per image, in batch order: the
// image is flipped when Generator::uniform() < p.
class RandomHorizontalFlip final : public Transform {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  Example apply(const Example& batch, Generator& gen) const override;

 private:
  double p_;
};

// Rotates each image by an angle uniform in [-max_degrees, max_degrees) (rotate_image).
// One draw per image, in batch order: angle = max_degrees * (2 u - 1). max_degrees in [0, 180].
class RandomRotation final : public Transform {
 public:
  explicit RandomRotation(double max_degrees);
  Example apply(const Example& batch, Generator& gen) const override;

 private:
  double max_degrees_;
};

// Per image, torchvision's brightness then contrast adjustment, each clamped to [0, 1]:
//   x' = clamp(b x),  x'' = clamp((x' - m) c + m)
// with b uniform in [1 - brightness, 1 + brightness), c uniform in [1 - contrast, 1 + contrast)
// and m the mean gray level of x' (the luma 0.299 R + 0.587 G + 0.114 B for 3 channels, else
// the mean of all its values). Two draws per image, b then c, in batch order (both even when a
// range is 0). brightness and contrast in [0, 1).
class ColorJitter final : public Transform {
 public:
  ColorJitter(double brightness, double contrast);
  Example apply(const Example& batch, Generator& gen) const override;

 private:
  double brightness_, contrast_;
};

// Which augmentations to apply (0 / false = none of that kind).
struct AugmentOptions {
  int64_t shift = 0;       // RandomShift(shift): the random crop, in pixels
  bool flip = false;       // RandomHorizontalFlip(0.5)
  double rotation = 0;     // RandomRotation(rotation), in degrees
  double brightness = 0;   // ColorJitter(brightness, contrast)
  double contrast = 0;
  bool any() const { return shift != 0 || flip || rotation != 0 || brightness != 0 || contrast != 0; }
};

// The augmentations `options` asks for, in this order: rotation, shift, flip, jitter; nullptr
// when it asks for none. Rotation comes first so that it turns the image about its own centre,
// jitter last so that its mean gray level is that of the image the model sees. Each step draws
// for the whole batch before the next (see each class for its draws): B rotation angles, then
// B (dy, dx) shifts, then B flips, then B (b, c) jitters. Invalid values are ValueErrors from
// the transforms' constructors, naming the parameter.
TransformPtr augmentation(const AugmentOptions& options);

}  // namespace plexus::data
