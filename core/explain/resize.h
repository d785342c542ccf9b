#pragma once
// A map [h, w] resized to [H, W] bilinearly, as PyTorch's F.interpolate(mode="bilinear",
// align_corners=False) does (half-pixel source coordinates, edges clamped): Grad-CAM's map
// brought to its input's size, which need not be a whole multiple of it.
#include <cstdint>

#include "tensor/tensor.h"

namespace plexus::explain {

Tensor resize_bilinear(const Tensor& map, int64_t height, int64_t width);

}  // namespace plexus::explain
