#pragma once
// What the Try-it panel feeds a model: a drawing turned into one raw example [C, H, W]
// (pixel / 255, as the dataset readers give them) through core's data::image_to_input, and the
// conversions between Qt's and core's pictures. (Image files are converted as the app says:
// TryItPanel::setPictureConverter.)
#include <QImage>

#include <optional>

#include "data/image_file.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace plexus::widgets {

// A model input the panel can feed: [C, H, W] with C 1 (gray) or 3 (RGB).
bool isImageInput(const Shape& shape);
// [1, 28, 28]: MNIST and Fashion-MNIST, whose digits are framed the way MNIST framed them.
bool isMnistInput(const Shape& shape);

// A drawing (white strokes on black, 8-bit gray, any size) -> the model input of shape `chw`,
// or nullopt for an empty drawing. For [1, 28, 28] the drawing is framed as MNIST's digits were
// (LeCun et al.): cropped to the strokes' bounding box, scaled to fit 20 x 20 keeping its aspect,
// and placed in the 28 x 28 field so that its centre of mass is at the field's centre. A model
// trained on MNIST has only seen digits framed that way: a digit drawn small in a corner would
// otherwise be a different input. Any other size takes the whole drawing, scaled.
std::optional<Tensor> drawingToInput(const QImage& drawing, const Shape& chw);

// Conversions between Qt's and core's pictures (8-bit gray or RGB).
data::Image toDataImage(const QImage& image);
QImage toQImage(const data::Image& image);

}  // namespace plexus::widgets
