#pragma once
// A heat map as a picture people can look at (`plexus-cli explain --out`): the map normalised to
// its largest value, coloured with a perceptual colour map (magma: black through purple and
// orange to pale yellow, brightness rising with the value), blended over the input picture, and
// enlarged by a whole factor (nearest) until it is at least `min_size` pixels on its short side.
#include <array>
#include <cstdint>

#include "data/image_file.h"
#include "tensor/tensor.h"

namespace plexus::explain {

// magma at t in [0, 1] (clamped), as 8-bit RGB: matplotlib's colour map, from nine of its stops.
std::array<uint8_t, 3> magma(float t);

// `heat` [H, W] over the raw picture [C, H, W] (values in [0, 1]; 1 or 3 channels), the colour
// taking `opacity` of each pixel. ShapeError when the two do not match.
data::Image heat_over_picture(const Tensor& picture, const Tensor& heat, float opacity = 0.6f, int64_t min_size = 224);
// `heat` [T] as a row of T square cells (a text's characters, a table row's features).
data::Image heat_strip(const Tensor& heat, int64_t cell = 24);
// A map [R, C] (an attention head's weights) as an image of its own, each value a cell.
data::Image heat_grid(const Tensor& map, int64_t min_size = 224);

}  // namespace plexus::explain
