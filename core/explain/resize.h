#pragma once
// A map [h, w] sampled bilinearly over a picture [H, W]: Grad-CAM's map brought to its input.
// Where each cell sits over the picture is a Placement: cell j's centre at pixel offset + stride · j
// along each axis. A map stretched over the whole picture, as PyTorch's
// F.interpolate(mode="bilinear", align_corners=False) does, is the placement `stretched` gives;
// a node's receptive fields give another (explain/receptive_field.h).
#include <cstdint>

#include "tensor/tensor.h"

namespace plexus::explain {

struct AxisPlacement {
  double offset = 0;  // the pixel coordinate of cell 0's centre
  double stride = 1;  // pixels from one cell's centre to the next's
  bool operator==(const AxisPlacement&) const = default;
};
struct Placement {
  AxisPlacement y, x;
  bool operator==(const Placement&) const = default;
};

// `cells` spread evenly over `pixels`, their centres at (j + 0.5) · pixels / cells - 0.5.
AxisPlacement stretched(int64_t cells, int64_t pixels);

// heat[y, x] = the map at grid coordinates ((y - offset_y) / stride_y, (x - offset_x) / stride_x),
// bilinearly, clamped to the outermost cells (the border beyond their centres takes their values).
Tensor place_bilinear(const Tensor& map, int64_t height, int64_t width, const Placement& placement);

}  // namespace plexus::explain
