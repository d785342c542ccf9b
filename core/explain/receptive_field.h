#pragma once
// Where a node's feature-map cells look in the input picture: along each axis, cell j's receptive
// field is centred on pixel offset + stride · j. Grad-CAM places its map there (explain/resize.h),
// not stretched over the whole picture: an unpadded convolution's cells see only the picture's
// middle (LeNet's conv2: pixels 6.5 to 20.5 of 28), and stretching would put the heat beside what
// the cells responded to.
#include <optional>
#include <string>

#include "explain/resize.h"
#include "graph/graph.h"

namespace plexus::explain {

// The placement of `node`'s output cells, composed along the wires from the Input: Conv2d,
// MaxPool2d and AvgPool2d move and scale it (kernel k, stride s, padding p, dilation d: the offset
// grows by stride_in · (d · (k - 1) / 2 - p), the stride is multiplied by s); activations,
// normalisations, dropouts and elementwise merges of inputs placed alike keep it. nullopt where
// the path holds anything else that changes or may change positions (adaptive pooling,
// upsampling, a reshape, ...), merges inputs placed differently, or for an unknown node.
std::optional<Placement> cell_placement(const graph::Graph& graph, const std::string& node);

}  // namespace plexus::explain
