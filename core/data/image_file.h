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

// Writes an 8-bit gray or RGB PNG atomically (temp file, fsync, rename). IoError on failure.
void write_png(const std::filesystem::path& file, const Image& image);

// One example of a model input [C, H, W] in raw units (pixel / 255, as the MNIST reader reads
// them): converted to C channels (C = 1: luma; C = 3: RGB, gray replicated) and resized to H x W
// (area averaging when shrinking, bilinear when enlarging; an image of that size already is
// taken as it is). ShapeError when `chw` is not [C, H, W] with C 1 or 3.
Tensor image_to_input(const Image& image, const Shape& chw);

}  // namespace plexus::data
