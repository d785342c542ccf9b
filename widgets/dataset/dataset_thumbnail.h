#pragma once
// Examples as pictures: which input shapes are images, and their pixels as a greyscale QImage.
#include <QImage>

#include "tensor/shape.h"

namespace plexus::widgets {

// [1, H, W] or [H, W]: one greyscale image per example.
bool isImageShape(const Shape& input);

// Height and width of an image shape (see isImageShape).
QSize imageSize(const Shape& input);

// H*W row-major floats as greyscale. Values within [0, 1] keep their meaning (0 black, 1 white),
// so faint strokes stay faint; anything else (standardised data) is stretched from the image's
// own min..max, so every sample stays visible.
QImage greyscaleImage(const float* pixels, QSize size);

}  // namespace plexus::widgets
