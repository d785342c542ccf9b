#pragma once
// Image files, for training on a folder of one's own pictures (data/image_folder.h) and for
// using a trained model on them (`plexus-cli predict`, the GUI's Try-it panel): PNG (libpng),
// JPEG (libjpeg-turbo) and BMP (stb_image) decoding, PNG, JPEG and BMP encoding, and the
// conversion of a picture of any size into a model's input, so that training, the command line
// and the GUI feed a model the same numbers.
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

// Decodes a PNG, JPEG or BMP file, recognised by its content (not its extension); palette,
// 16-bit and gray+alpha PNGs become 8-bit gray or RGB, alpha composited on black (MNIST's
// background). BMPs: uncompressed or bit-field Windows BMPs of 1, 4, 8, 16, 24 or 32 bits, rows
// stored bottom-up or top-down; one with a palette that is all gray becomes a gray image, any
// other an RGB one. Throws DataError naming the file and what is wrong: not a PNG, JPEG or BMP,
// truncated, corrupt, or larger than the limit (checked from the header, before decoding).
Image read_image(const std::filesystem::path& file);
// The same from bytes in memory; `name` stands for the file in messages.
Image decode_image(const uint8_t* data, size_t size, const std::string& name);

// Whether `data` starts as a PNG, JPEG or BMP file does: the magic bytes decode_image goes by
// (for a BMP, "BM" and a known header size at bytes 14 to 17, so a text starting "BM" is none).
bool is_image_data(const uint8_t* data, size_t size);

// The leading bytes of a file that check_image_header looks at.
inline constexpr size_t kImageHeaderBytes = 4096;
// What the first bytes of an image file can tell without decoding, for looking over many files
// quickly: DataError (as decode_image words it) when `data` is empty, is not a PNG, JPEG or BMP,
// or its header declares more pixels than the limit. A JPEG whose frame header lies beyond
// `size` bytes (after a large Exif block) passes; decode_image checks its size.
void check_image_header(const uint8_t* data, size_t size, const std::string& name);

// ValueError naming `where` unless the image's fields agree: 1 or 3 channels, 1 to
// kImageMaxPixels pixels, width x height x channels bytes of them.
void check_image(const Image& image, const std::string& where);

// Encodings of an 8-bit gray or RGB image into a file's bytes: PNG; JPEG at `quality` 1 to
// 100 (4:4:4, no chroma subsampling, so small pictures keep their colors); BMP (a gray image
// as 8 bits with a gray palette, RGB as 24 bits, rows bottom-up). ValueError for an image
// whose fields disagree or a quality outside 1 to 100; IoError when the encoder fails.
std::string encode_png(const Image& image);
std::string encode_jpeg(const Image& image, int quality = 95);
std::string encode_bmp(const Image& image);

// Write those atomically (temp file, fsync, rename). IoError on failure; ValueError as above.
void write_png(const std::filesystem::path& file, const Image& image);
void write_jpeg(const std::filesystem::path& file, const Image& image, int quality = 95);

// ---- model inputs ----------------------------------------------------------------------------

// How a picture of another aspect ratio is fitted into a model's H x W:
//  Stretch  each axis resized on its own (the aspect ratio changes);
//  Crop     scaled (both axes alike) to cover H x W, then the middle cut out;
//  Pad      scaled to fit inside H x W, centred on black (0), MNIST's background.
// A picture of exactly H x W is taken as it is by all three.
enum class ImageFit { Stretch, Crop, Pad };
// "stretch", "crop", "pad"; ValueError naming the accepted ones otherwise.
ImageFit parse_image_fit(const std::string& name);
const char* image_fit_name(ImageFit fit);

// The pictures a model takes: C channels (1 gray, 3 RGB) of H x W pixels.
struct ImageFormat {
  int64_t channels = 1;
  int64_t height = 28, width = 28;
  ImageFit fit = ImageFit::Crop;
};
// ValueError naming `where` unless channels is 1 or 3 and H x W is 1 to kImageMaxPixels pixels.
void check_image_format(const ImageFormat& format, const std::string& where);

// A picture prepared for a model: an 8-bit image of exactly format's size and channels, so a
// dataset can keep it small and training, predict and Try-it feed the same pixels. Channels as
// image_to_input converts them (luma, or gray replicated); resized per axis as image_to_input
// does (area averaging when shrinking, bilinear when enlarging), fitted by format.fit, each
// value rounded to the nearest whole level. ValueError for a bad image or format.
Image prepare_image(const Image& image, const ImageFormat& format);
// A prepared image as a model input [C, H, W] in raw units (pixel / 255, the MNIST reader's
// floats); the overload writes the C x H x W values to `out` (a dataset's batch row).
// ValueError for an image whose fields disagree.
Tensor prepared_to_input(const Image& prepared);
void prepared_to_input(const Image& prepared, float* out);
// The way back: a raw input [C, H, W] or [H, W] (values clamped to [0, 1]) as 8-bit pixels, to
// show or open a dataset's example as a picture.
Image input_to_image(const Tensor& raw);  // ShapeError for another rank

// One example of a model input [C, H, W] in raw units (pixel / 255, as the MNIST reader reads
// them): converted to C channels (C = 1: luma; C = 3: RGB, gray replicated) and resized to H x W
// (area averaging when shrinking, bilinear when enlarging; an image of that size already is
// taken as it is). Luma is ITU-R BT.601's 0.299 R + 0.587 G + 0.114 B on the stored values (no
// gamma decoding), so a gray picture saved as RGB gives the same input as saved as gray. Each
// axis is resized on its own: a picture of 56 x 14 becomes 28 x 28 by averaging pairs of
// columns and interpolating rows. That is prepare_image with ImageFit::Stretch, without its
// rounding to whole levels. ShapeError when `chw` is not [C, H, W] with C 1 or 3; ValueError
// for an image whose fields disagree.
Tensor image_to_input(const Image& image, const Shape& chw);

}  // namespace plexus::data
