#pragma once
// Image files for using a trained model on one's own pictures (`plexus-cli predict`, the
// GUI's Try-it panel): PNG (libpng) and JPEG (libjpeg-turbo) decoding, PNG writing, and the
// one conversion of a picture of any size into a model's input, so the command line and the
// GUI feed a model the same numbers.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace plexus::data {

// The most pixels (width x height) an image may have, checked from the file's header before
// anything is allocated: 2^26, e.g. 8192 x 8192. A model's input is far smaller; the limit keeps
// a file that merely claims huge dimensions from exhausting memory.
inline constexpr int64_t kImageMaxPixels = int64_t(1) << 26;

// 8-bit pixels, rows top to bottom, channels interleaved: 1 (gray) or 3 (RGB).
struct Image {
  int64_t width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;  // width * height * channels
};

// Decodes a PNG or JPEG file, recognised by its content (not its extension); palette, 16-bit
// and gray+alpha PNGs become 8-bit gray or RGB, alpha composited on black (MNIST's background).
// Throws DataError naming the file and what is wrong: not a PNG or JPEG, truncated, corrupt, or
// larger than the limit (checked from the header, before decoding).
Image read_image(const std::filesystem::path& file);
// The same from bytes in memory; `name` stands for the file in messages.
Image decode_image(const uint8_t* data, size_t size, const std::string& name);

// Whether `data` starts as a PNG or JPEG file does: the magic bytes decode_image goes by.
bool is_image_data(const uint8_t* data, size_t size);

// Writes an 8-bit gray or RGB PNG atomically (temp file, fsync, rename). IoError on failure;
// ValueError for an image whose fields disagree (channels, pixel count, more than the limit).
void write_png(const std::filesystem::path& file, const Image& image);

// One example of a model input [C, H, W] in raw units (pixel / 255, as the MNIST reader reads
// them): converted to C channels (C = 1: luma; C = 3: RGB, gray replicated) and resized to H x W
// (area averaging when shrinking, bilinear when enlarging; an image of that size already is
// taken as it is). Luma is ITU-R BT.601's 0.299 R + 0.587 G + 0.114 B on the stored values (no
// gamma decoding), so a gray picture saved as RGB gives the same input as saved as gray. Each
// axis is resized on its own: a picture of 56 x 14 becomes 28 x 28 by averaging pairs of
// columns and interpolating rows. ShapeError when `chw` is not [C, H, W] with C 1 or 3;
// ValueError for an image whose fields disagree.
Tensor image_to_input(const Image& image, const Shape& chw);

}  // namespace plexus::data
