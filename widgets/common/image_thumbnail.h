#pragma once
// Examples as pictures: which input shapes are images, and their pixels as a QImage.
#include <QImage>

#include "tensor/shape.h"

namespace plexus::widgets {

// [1, H, W] or [H, W] (greyscale) or [3, H, W] (RGB): one image per example.
bool isImageShape(const Shape& input);

// Height and width of an image shape (see isImageShape).
QSize imageSize(const Shape& input);

// The example's pixels (row-major, channel after channel) as greyscale or RGB. Values within
// [0, 1] keep their meaning (0 black, 1 full strength), so faint strokes stay faint; anything
// else (standardised data) is stretched from the image's own min..max over all its channels, so
// every sample stays visible and colours keep their balance.
QImage thumbnailImage(const float* pixels, const Shape& input);

}  // namespace plexus::widgets
