// data/image_file.h: PNG and JPEG decoding (fixtures written here with libpng and libjpeg
// themselves, so the reader is checked against the reference encoders), PNG writing, the
// conversion of a picture into a model input, and malformed files: every one a DataError
// naming the file and what is wrong, none a crash (the sanitizer build and fuzz_image check that).
#include "support/check.h"

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "data/idx.h"
#include "data/image_file.h"
#include "data/mnist.h"
#include "tensor/generator.h"
#include "util/error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using namespace plexus;
using namespace plexus::data;
using plexus::testing::contains;
using plexus::testing::message_of;

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// ---- fixtures: PNGs written by libpng ----------------------------------------------------

struct PngFixture {
  uint32_t width = 0, height = 0;
  int color_type = PNG_COLOR_TYPE_GRAY;
  int bit_depth = 8;
  bool interlaced = false;
  Bytes rows;  // as stored: rows of (width * samples * bit_depth + 7) / 8 bytes, 16-bit big-endian
  std::vector<png_color> palette;
  Bytes transparency;  // a palette's tRNS alphas
  std::string comment;  // a tEXt chunk before the pixels
};

PngFixture png_fixture(uint32_t width, uint32_t height, int color_type = PNG_COLOR_TYPE_GRAY, int bit_depth = 8,
                       bool interlaced = false) {
  PngFixture f;
  f.width = width;
  f.height = height;
  f.color_type = color_type;
  f.bit_depth = bit_depth;
  f.interlaced = interlaced;
  return f;
}

std::string encode_png(const PngFixture& f) {
  std::string out;
  png_structp png = png_create_write_struct(
      PNG_LIBPNG_VER_STRING, nullptr,
      [](png_structp, png_const_charp m) {
        std::fprintf(stderr, "libpng (fixture): %s\n", m);
        std::abort();
      },
      nullptr);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(
      png, &out,
      [](png_structp p, png_bytep d, size_t n) {
        static_cast<std::string*>(png_get_io_ptr(p))->append(reinterpret_cast<const char*>(d), n);
      },
      nullptr);
  png_set_IHDR(png, info, f.width, f.height, f.bit_depth, f.color_type,
               f.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!f.palette.empty()) png_set_PLTE(png, info, f.palette.data(), int(f.palette.size()));
  if (!f.transparency.empty()) png_set_tRNS(png, info, f.transparency.data(), int(f.transparency.size()), nullptr);
  png_text text{};
  std::string key = "Comment", value = f.comment;
  if (!f.comment.empty()) {
    text.compression = PNG_TEXT_COMPRESSION_NONE;
    text.key = key.data();
    text.text = value.data();
    png_set_text(png, info, &text, 1);
  }
  const size_t stride = f.rows.size() / f.height;
  std::vector<png_bytep> rows(f.height);
  Bytes pixels = f.rows;
  for (uint32_t y = 0; y < f.height; ++y) rows[y] = pixels.data() + y * stride;
  png_set_rows(png, info, rows.data());
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

uint32_t be32(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = v << 8 | uint8_t(bytes[at + size_t(i)]);
  return v;
}

// The byte offset of the first chunk of `type` (its length field).
size_t chunk_at(const std::string& png, const char* type) {
  for (size_t at = 8; at + 12 <= png.size(); at += 12 + be32(png, at))
    if (png.compare(at + 4, 4, type) == 0) return at;
  std::fprintf(stderr, "fixture has no %s chunk\n", type);
  std::abort();
}

void put_be32(std::string& bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + size_t(i)] = char(v >> (24 - 8 * i));
}

// Recomputes the CRC of the chunk at `at` after a test changed its data on purpose.
void fix_crc(std::string& png, size_t at) {
  const uint32_t length = be32(png, at);
  const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(png.data() + at + 4), uInt(4 + length));
  put_be32(png, at + 8 + length, uint32_t(crc));
}

PngFixture gray8(uint32_t width, uint32_t height) {
  PngFixture f = png_fixture(width, height);
  for (uint32_t i = 0; i < width * height; ++i) f.rows.push_back(uint8_t(i * 37 + 11));
  return f;
}

// ---- fixtures: JPEGs written by libjpeg --------------------------------------------------

// `scans`: a progressive scan script of one's own (else libjpeg's, when `progressive`).
std::string encode_jpeg(int width, int height, J_COLOR_SPACE space, int components, const Bytes& pixels,
                        bool progressive = false, const std::vector<jpeg_scan_info>& scans = {}) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);  // its error_exit ends the process: fixtures are always valid
  jpeg_create_compress(&c);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buffer, &size);
  c.image_width = JDIMENSION(width);
  c.image_height = JDIMENSION(height);
  c.input_components = components;
  c.in_color_space = space;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  for (int i = 0; i < c.num_components; ++i) c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
  if (progressive) jpeg_simple_progression(&c);
  if (!scans.empty()) {
    c.scan_info = scans.data();
    c.num_scans = int(scans.size());
  }
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels.data()) + size_t(c.next_scanline) * size_t(width * components);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  return out;
}

// A smooth picture (JPEG is lossy; at quality 100 without chroma subsampling a smooth one comes
// back within a few levels).
Bytes smooth(int width, int height, int components) {
  Bytes b;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < components; ++c) b.push_back(uint8_t(40 + 6 * x + 4 * y + 30 * c));
  return b;
}

int max_difference(const Bytes& a, const Bytes& b) {
  int d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(int(a[i]) - int(b[i])));
  return d;
}

// ---- helpers ----------------------------------------------------------------------------

Image decode(const std::string& bytes, const std::string& name = "mem.img") {
  return decode_image(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), name);
}

std::string decode_error(const std::string& bytes, const std::string& name = "pic.png") {
  return message_of<DataError>([&] { decode(bytes, name); });
}

void verify_all(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& p : parts)
    VERIFY2(contains(message, p), "message\n  " + message + "\ndoes not contain\n  " + p);
}

Image image_of(int64_t width, int64_t height, int64_t channels, Bytes pixels) {
  Image im;
  im.width = width;
  im.height = height;
  im.channels = channels;
  im.pixels = std::move(pixels);
  return im;
}

// The input's values times 255, to compare with hand-computed pixel averages.
std::vector<float> in_pixel_units(const Tensor& t) {
  std::vector<float> v = t.to_vector();
  for (float& x : v) x *= 255.f;
  return v;
}

void compare(const std::vector<float>& got, const std::vector<float>& want, float tolerance) {
  COMPARE(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    VERIFY2(std::abs(got[i] - want[i]) <= tolerance, "element " + std::to_string(i) + ": got " +
                                                          check::show(got[i]) + ", expected " + check::show(want[i]));
}

// The suite's folder, for the files the tests write and read back.
const plexus::testing::TempDir& dir() {
  static const plexus::testing::TempDir d;
  return d;
}
std::string path(const char* name) { return dir().file(name).string(); }
void write_raw_file(const char* name, const std::string& bytes) { plexus::testing::write_raw(path(name), bytes); }

}  // namespace

// ---- PNG decoding --------------------------------------------------------------------

TEST(gray8_is_read_as_stored) {
  const PngFixture f = gray8(5, 3);
  const Image im = decode(encode_png(f));
  COMPARE(im.width, 5);
  COMPARE(im.height, 3);
  COMPARE(im.channels, 1);
  VERIFY(im.pixels == f.rows);
}

TEST(rgb8_and_interlaced_rgb8_are_read_as_stored) {
  for (bool interlaced : {false, true}) {
    PngFixture f = png_fixture(9, 7, PNG_COLOR_TYPE_RGB, 8, interlaced);
    for (int i = 0; i < 9 * 7 * 3; ++i) f.rows.push_back(uint8_t(i * 13 + 5));
    const Image im = decode(encode_png(f));
    COMPARE(im.channels, 3);
    COMPARE(im.width, 9);
    VERIFY2(im.pixels == f.rows, interlaced ? "interlaced" : "not interlaced");
  }
}

// value * alpha / 255, rounded: composited on black.
TEST(alpha_is_composited_on_black) {
  PngFixture ga = png_fixture(4, 1, PNG_COLOR_TYPE_GRAY_ALPHA);
  ga.rows = {200, 128, 255, 255, 255, 0, 100, 51};
  VERIFY(decode(encode_png(ga)).pixels == Bytes({100, 255, 0, 20}));

  PngFixture rgba = png_fixture(2, 1, PNG_COLOR_TYPE_RGB_ALPHA);
  rgba.rows = {10, 20, 30, 255, 255, 100, 50, 51};
  const Image im = decode(encode_png(rgba));
  COMPARE(im.channels, 3);
  VERIFY(im.pixels == Bytes({10, 20, 30, 51, 20, 10}));
}

TEST(palette_becomes_rgb_with_transparency_composited) {
  PngFixture f = png_fixture(3, 2, PNG_COLOR_TYPE_PALETTE, 8);
  f.palette = {{255, 0, 0}, {0, 128, 255}, {10, 20, 30}};
  f.transparency = {255, 255, 0};  // entry 2 fully transparent -> black
  f.rows = {0, 1, 2, 2, 1, 0};
  const Image im = decode(encode_png(f));
  COMPARE(im.channels, 3);
  VERIFY(im.pixels == Bytes({255, 0, 0, 0, 128, 255, 0, 0, 0, 0, 0, 0, 0, 128, 255, 255, 0, 0}));

  PngFixture four_bit = f;  // two pixels a byte
  four_bit.bit_depth = 4;
  four_bit.transparency.clear();
  four_bit.rows = {0x01, 0x20, 0x21, 0x00};
  VERIFY(decode(encode_png(four_bit)).pixels ==
          Bytes({255, 0, 0, 0, 128, 255, 10, 20, 30, 10, 20, 30, 0, 128, 255, 255, 0, 0}));
}

// 16-bit samples become 8 bits rounded (v * 255 / 65535): 257 k is exactly k.
TEST(sixteen_bit_is_scaled_to_eight) {
  PngFixture f = png_fixture(4, 1, PNG_COLOR_TYPE_GRAY, 16);
  const std::vector<uint16_t> samples = {0, 257 * 128, 65535, 257 * 7 + 100};
  for (uint16_t s : samples) f.rows.insert(f.rows.end(), {uint8_t(s >> 8), uint8_t(s & 0xff)});
  VERIFY(decode(encode_png(f)).pixels == Bytes({0, 128, 255, 7}));

  PngFixture rgb = png_fixture(1, 1, PNG_COLOR_TYPE_RGB, 16);
  rgb.rows = {0xff, 0xff, 0x80, 0x80, 0x00, 0x00};
  VERIFY(decode(encode_png(rgb)).pixels == Bytes({255, 128, 0}));
}

TEST(one_bit_gray_becomes_0_and_255) {
  PngFixture f = png_fixture(10, 1, PNG_COLOR_TYPE_GRAY, 1);
  f.rows = {0b10110000, 0b01000000};
  VERIFY(decode(encode_png(f)).pixels == Bytes({255, 0, 255, 255, 0, 0, 0, 0, 0, 255}));
}

// ---- PNG writing ------------------------------------------------------------------------

TEST(write_png_round_trips_gray_and_rgb) {
  const Image gray = image_of(6, 4, 1, gray8(6, 4).rows);
  write_png(path("gray.png"), gray);
  const Image back = read_image(path("gray.png"));
  COMPARE(back.width, 6);
  COMPARE(back.height, 4);
  COMPARE(back.channels, 1);
  VERIFY(back.pixels == gray.pixels);

  const Image rgb = image_of(3, 5, 3, smooth(3, 5, 3));
  write_png(path("rgb.png"), rgb);
  const Image back_rgb = read_image(path("rgb.png"));
  COMPARE(back_rgb.channels, 3);
  VERIFY(back_rgb.pixels == rgb.pixels);

  write_png(path("rgb.png"), gray);  // replaces the file whole
  VERIFY(read_image(path("rgb.png")).pixels == gray.pixels);
}

TEST(write_png_refuses_inconsistent_images_and_unwritable_paths) {
  const std::string bad_channels = message_of<ValueError>([&] { write_png(path("x.png"), image_of(2, 2, 2, Bytes(8))); });
  verify_all(bad_channels, {"x.png", "1 (gray) or 3 (RGB) channels, got 2"});
  const std::string short_pixels = message_of<ValueError>([&] { write_png(path("x.png"), image_of(2, 2, 3, Bytes(11))); });
  verify_all(short_pixels, {"x.png", "11 bytes of pixels, expected 2 x 2 x 3 = 12"});
  VERIFY(!fs::exists(path("x.png")));

  const std::string missing_dir = path("no-such-dir/out.png");
  const std::string err = message_of<IoError>([&] { write_png(missing_dir, image_of(1, 1, 1, Bytes{7})); });
  verify_all(err, {missing_dir});
}

// ---- JPEG decoding -------------------------------------------------------------------

TEST(jpeg_gray_and_color_decode_close_to_the_original) {
  const Bytes gray = smooth(16, 16, 1);
  const Image g = decode(encode_jpeg(16, 16, JCS_GRAYSCALE, 1, gray));
  COMPARE(g.width, 16);
  COMPARE(g.height, 16);
  COMPARE(g.channels, 1);
  VERIFY2(max_difference(g.pixels, gray) <= 2, std::to_string(max_difference(g.pixels, gray)));

  const Bytes rgb = smooth(24, 8, 3);
  for (bool progressive : {false, true}) {
    const Image c = decode(encode_jpeg(24, 8, JCS_RGB, 3, rgb, progressive));
    COMPARE(c.width, 24);
    COMPARE(c.height, 8);
    COMPARE(c.channels, 3);
    VERIFY2(max_difference(c.pixels, rgb) <= 4, std::to_string(max_difference(c.pixels, rgb)));
  }
}

TEST(cmyk_jpeg_is_refused_by_name) {
  const std::string cmyk = encode_jpeg(8, 8, JCS_CMYK, 4, Bytes(8 * 8 * 4, 90));
  verify_all(decode_error(cmyk, "print.jpg"), {"print.jpg: ", "CMYK JPEG"});
}

// ---- picture -> model input ----------------------------------------------------------

// The promise that makes predict agree with eval: a 28 x 28 gray PNG of an MNIST image is
// exactly the tensor the MNIST reader makes of the same bytes (every byte value occurs).
TEST(mnist_sized_gray_png_gives_the_mnist_readers_floats) {
  Bytes digit(28 * 28);
  for (size_t i = 0; i < digit.size(); ++i) digit[i] = uint8_t((i * 7) % 256);
  const fs::path folder = path("mnist");
  fs::create_directories(folder);
  write_idx((folder / "t10k-images-idx3-ubyte").string(), IdxType::UInt8, {1, 28, 28}, digit);
  write_idx((folder / "t10k-labels-idx1-ubyte").string(), IdxType::UInt8, {1}, {3});
  const MnistDataset mnist(folder.string(), Split::Test);

  write_png(path("digit.png"), image_of(28, 28, 1, digit));
  const Tensor input = image_to_input(read_image(path("digit.png")), {1, 28, 28});
  VERIFY(input.shape() == Shape({1, 28, 28}));
  VERIFY(input.to_vector() == mnist.get(0).input.to_vector());

  // The same digit saved as RGB (R = G = B) gives the same floats through the luma.
  Bytes rgb;
  for (uint8_t p : digit) rgb.insert(rgb.end(), {p, p, p});
  VERIFY(image_to_input(image_of(28, 28, 3, rgb), {1, 28, 28}).to_vector() == input.to_vector());
}

TEST(luma_uses_bt601_weights_and_gray_fills_rgb) {
  const Image rgb = image_of(2, 1, 3, {255, 0, 0, 10, 20, 30});
  compare(image_to_input(rgb, {1, 1, 2}).to_vector(), {0.299f, (2.99f + 11.74f + 3.42f) / 255.f}, 1e-6f);
  compare(image_to_input(rgb, {3, 1, 2}).to_vector(), {1.f, 10 / 255.f, 0.f, 20 / 255.f, 0.f, 30 / 255.f}, 1e-7f);
  const Image gray = image_of(2, 1, 1, {51, 102});
  compare(image_to_input(gray, {3, 1, 2}).to_vector(), {0.2f, 0.4f, 0.2f, 0.4f, 0.2f, 0.4f}, 1e-7f);
}

// Reference values worked out by hand (in pixel units).
TEST(shrinking_averages_areas) {
  const Image four = image_of(4, 4, 1, {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150});
  compare(in_pixel_units(image_to_input(four, {1, 2, 2})), {25, 45, 105, 125}, 1e-4f);
  // 3 -> 2: output 0 covers [0, 1.5): (0 + 90 / 2) / 1.5 = 30; output 1 covers [1.5, 3): (45 + 180) / 1.5 = 150.
  compare(in_pixel_units(image_to_input(image_of(3, 1, 1, {0, 90, 180}), {1, 1, 2})), {30, 150}, 1e-4f);
  // 5 -> 1: the mean.
  compare(in_pixel_units(image_to_input(image_of(1, 5, 1, {0, 10, 20, 30, 45}), {1, 1, 1})), {21}, 1e-4f);
}

TEST(enlarging_interpolates_between_pixel_centres) {
  // 2 -> 4: output centres fall at input x = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
  compare(in_pixel_units(image_to_input(image_of(2, 1, 1, {0, 100}), {1, 1, 4})), {0, 25, 75, 100}, 1e-4f);
  // 2 x 2 -> 3 x 3: centres at 0, 0.5 and 1 on both axes.
  compare(in_pixel_units(image_to_input(image_of(2, 2, 1, {0, 30, 60, 90}), {1, 3, 3})),
          {0, 15, 30, 30, 45, 60, 60, 75, 90}, 1e-4f);
}

TEST(each_axis_is_resized_on_its_own) {
  // 4 wide, 1 high -> 2 x 2: columns averaged in pairs, the one row repeated.
  compare(in_pixel_units(image_to_input(image_of(4, 1, 1, {0, 10, 20, 30}), {1, 2, 2})), {5, 25, 5, 25}, 1e-4f);
}

TEST(halving_a_random_picture_gives_its_block_means) {
  Generator gen(7);
  const std::vector<float> noise = rand({56 * 56 * 3}, &gen).to_vector();
  Bytes px;
  for (float v : noise) px.push_back(uint8_t(v * 255.f));
  std::vector<float> want;
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x) {
        float sum = 0;
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx) sum += px[size_t(((2 * y + dy) * 56 + 2 * x + dx) * 3 + c)];
        want.push_back(sum / 4);
      }
  compare(in_pixel_units(image_to_input(image_of(56, 56, 3, px), {3, 28, 28})), want, 1e-3f);
}

TEST(bad_input_shapes_and_images_are_refused) {
  const Image im = image_of(2, 2, 1, Bytes(4));
  for (const Shape& s : {Shape{28, 28}, Shape{2, 28, 28}, Shape{1, 0, 28}, Shape{1, 1, 28, 28}}) {
    const std::string err = message_of<ShapeError>([&] { image_to_input(im, s); });
    verify_all(err, {"[C, H, W] with C 1 (gray) or 3 (RGB)", to_string(s)});
  }
  verify_all(message_of<ValueError>([&] { image_to_input(image_of(2, 2, 1, Bytes(3)), {1, 2, 2}); }),
             {"3 bytes of pixels, expected 2 x 2 x 1 = 4"});
}

// ---- malformed files ---------------------------------------------------------------------

TEST(content_not_name_decides_the_format) {
  const std::string png = encode_png(gray8(2, 2)), jpeg = encode_jpeg(8, 8, JCS_GRAYSCALE, 1, Bytes(64, 9));
  const auto is_image = [](const std::string& b) {
    return is_image_data(reinterpret_cast<const uint8_t*>(b.data()), b.size());
  };
  VERIFY(is_image(png) && is_image(jpeg) && is_image(png.substr(0, 8)) && is_image(jpeg.substr(0, 3)));
  VERIFY(!is_image(png.substr(0, 7)) && !is_image(jpeg.substr(0, 2)) && !is_image("") && !is_image("a,b\n1,2\n"));
  write_raw_file("photo.csv", jpeg);  // the name says CSV, the bytes say JPEG
  COMPARE(read_image(path("photo.csv")).width, 8);
}

TEST(empty_file_and_wrong_magic) {
  write_raw_file("empty.png", "");
  verify_all(message_of<DataError>([&] { read_image(path("empty.png")); }),
             {path("empty.png") + ": empty file; expected a PNG, JPEG or BMP image"});
  verify_all(decode_error(std::string("GIF89a\x01\x00\x01\x00", 10), "anim.gif"),
             {"anim.gif: not a PNG, JPEG or BMP image: it starts with bytes 47 49 46 38 39 61 01 00"});
  verify_all(decode_error("P", "one.png"), {"one.png: not a PNG, JPEG or BMP image: it starts with bytes 50 ("});
}

TEST(missing_file_and_directory) {
  verify_all(message_of<DataError>([&] { read_image(path("nope.png")); }),
             {path("nope.png") + ": cannot open: No such file or directory"});
  verify_all(message_of<DataError>([&] { read_image(dir().path().string()); }),
             {dir().path().string() + ": is a directory, not an image file"});
}

// Every proper prefix of a valid file fails, naming the file: the magic is incomplete below
// its length, otherwise the file is truncated.
TEST(truncated_at_every_offset) {
  PngFixture f = gray8(12, 9);
  f.comment = "a comment";
  const std::string png = encode_png(f);
  const std::string jpeg = encode_jpeg(16, 16, JCS_RGB, 3, smooth(16, 16, 3), true);
  for (const auto& [bytes, magic, what] : {std::tuple{png, size_t(8), "truncated PNG: the file ends at byte offset "},
                                           std::tuple{jpeg, size_t(3), "truncated JPEG: the file ends at byte offset "}}) {
    for (size_t n = 1; n < bytes.size(); ++n) {
      const std::string err = decode_error(bytes.substr(0, n), "cut.img");
      const char* expected = n < magic ? "not a PNG, JPEG or BMP image" : what;
      VERIFY2(contains(err, "cut.img: ") && contains(err, expected),
               "cut at " + std::to_string(n) + " of " + std::to_string(bytes.size()) + ": " + err);
    }
  }
  // From a file on disk the message names the path and where the data ended.
  write_raw_file("half.png", png.substr(0, png.size() / 2));
  verify_all(message_of<DataError>([&] { read_image(path("half.png")); }),
             {path("half.png") + ": truncated PNG: the file ends at byte offset " + std::to_string(png.size() / 2)});
}

TEST(corrupt_chunk_crcs) {
  PngFixture f = gray8(8, 8);
  f.comment = "ancillary";
  const std::string png = encode_png(f);
  for (const char* type : {"IHDR", "tEXt", "IDAT", "IEND"}) {
    std::string bad = png;
    const size_t at = chunk_at(bad, type);
    bad[at + 8 + be32(bad, at)] ^= 0x5a;  // first byte of the CRC
    const std::string err = decode_error(bad, "crc.png");
    verify_all(err, {"crc.png: corrupt PNG at byte offset ", std::string(type) + ": CRC error"});
  }
}

void corrupt_compressed_data() {
  std::string png = encode_png(gray8(8, 8));
  const size_t at = chunk_at(png, "IDAT");
  png[at + 8] = 0x00;  // the zlib header's first byte: compression method 0 does not exist
  fix_crc(png, at);
  verify_all(decode_error(png, "zlib.png"), {"zlib.png: corrupt PNG at byte offset ", "IDAT"});
}

TEST(absurd_dimensions_fail_before_allocating) {
  std::string png = encode_png(gray8(4, 4));
  const size_t ihdr = chunk_at(png, "IHDR");
  put_be32(png, ihdr + 8, 100000);
  put_be32(png, ihdr + 12, 100000);
  fix_crc(png, ihdr);
  verify_all(decode_error(png, "huge.png"),
             {"huge.png: the PNG header declares 100000 x 100000 pixels, more than the limit of 67108864 pixels"});

  put_be32(png, ihdr + 8, 0);
  fix_crc(png, ihdr);
  verify_all(decode_error(png, "zero.png"), {"zero.png: corrupt PNG at byte offset 33: Invalid IHDR data", "Image width is zero"});

  put_be32(png, ihdr + 8, 0x80000000u);
  fix_crc(png, ihdr);
  verify_all(decode_error(png, "sign.png"), {"sign.png: corrupt PNG at byte offset "});

  std::string jpeg = encode_jpeg(8, 8, JCS_GRAYSCALE, 1, Bytes(64, 100));
  const size_t sof = jpeg.find("\xff\xc0");
  VERIFY(sof != std::string::npos);
  for (size_t i : {sof + 5, sof + 7}) jpeg[i] = char(0xea), jpeg[i + 1] = char(0x60);  // 60000
  verify_all(decode_error(jpeg, "huge.jpg"),
             {"huge.jpg: the JPEG header declares 60000 x 60000 pixels, more than the limit of 67108864"});
}

TEST(corrupt_jpeg_headers) {
  std::string jpeg = encode_jpeg(8, 8, JCS_GRAYSCALE, 1, Bytes(64, 100));
  const size_t sof = jpeg.find("\xff\xc0");
  jpeg[sof + 4] = 3;  // sample precision
  verify_all(decode_error(jpeg, "bits.jpg"), {"bits.jpg: corrupt JPEG at byte offset ", "precision 3"});

  std::string no_frame = encode_jpeg(8, 8, JCS_GRAYSCALE, 1, Bytes(64, 100));
  no_frame[no_frame.find("\xff\xc0") + 1] = char(0xcc);  // SOF0 -> DAC: scan data without a frame
  verify_all(decode_error(no_frame, "frame.jpg"), {"frame.jpg: corrupt JPEG at byte offset "});
}

// A valid progression of 2 080 scans (each AC coefficient of each channel refined bit by bit):
// refused at scan 1 001 instead of being decoded pass after pass.
TEST(progressive_jpeg_with_too_many_scans) {
  std::vector<jpeg_scan_info> scans;
  scans.push_back({3, {0, 1, 2, 0}, 0, 0, 0, 0});
  for (int component = 0; component < 3; ++component)
    for (int k = 1; k < 64; ++k) {
      scans.push_back({1, {component, 0, 0, 0}, k, k, 0, 10});
      for (int al = 9; al >= 0; --al) scans.push_back({1, {component, 0, 0, 0}, k, k, al + 1, al});
    }
  const std::string jpeg = encode_jpeg(8, 8, JCS_RGB, 3, smooth(8, 8, 3), false, scans);
  verify_all(decode_error(jpeg, "scans.jpg"), {"scans.jpg: a progressive JPEG with more than 1000 scans, the limit"});
}

// input_to_image is prepared_to_input's way back: interleaved bytes from channel-first values,
// clamped to [0, 1]; [H, W] is one gray channel; other ranks are refused.
TEST(input_to_image_undoes_prepared_to_input) {
  const Image rgb = image_of(3, 2, 3, Bytes{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160, 170});
  const Image back = input_to_image(prepared_to_input(rgb));
  COMPARE(back.width, 3);
  COMPARE(back.height, 2);
  COMPARE(back.channels, 3);
  VERIFY(back.pixels == rgb.pixels);
  const Image gray = input_to_image(from_vector({-0.5f, 0.f, 0.5f, 2.f}, {2, 2}));
  COMPARE(gray.channels, 1);
  VERIFY(gray.pixels == (Bytes{0, 0, 128, 255}));
  VERIFY(contains(message_of<ShapeError>([] { input_to_image(zeros({4})); }), "[C, H, W] or [H, W], not [4]"));
}
