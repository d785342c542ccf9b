#pragma once
// Viridis, the perceptual colour map of the explain views (feature maps, filters, activations):
// its lightness rises evenly from dark violet to yellow, so equal steps of a value look equal,
// in both themes and in grey print.
#include <QImage>
#include <QRgb>
#include <cstdint>

namespace plexus::widgets {

QRgb viridis(double t);  // t in [0, 1], clamped

// An h x w image of `values` (row-major), each value placed on [lo, hi] (all at the bottom of the
// map where hi <= lo: a constant channel).
QImage colourMapped(const float* values, int64_t h, int64_t w, float lo, float hi);

}  // namespace plexus::widgets
