#include "data/image_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csetjmp>
#include <cstdio>  // before jpeglib.h, which uses FILE
#include <cstring>
#include <new>
#include <string_view>
#include <utility>

#include <jpeglib.h>
#include <jerror.h>  // after jpeglib.h: the message codes (JWRN_*)
#include <png.h>

#include "data/stb_bmp.h"
#include "io/atomic_file.h"
#include "util/bytes.h"
#include "util/error.h"

namespace plexus::data {
namespace {

namespace fs = std::filesystem;

// A file this large is no picture anyone means to feed a model; refusing it up front keeps
// read_image from reading gigabytes before the header check could say so.
constexpr int64_t kMaxFileBytes = int64_t(1) << 29;  // 512 MiB

constexpr uint8_t kPngMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
constexpr uint8_t kJpegMagic[3] = {0xff, 0xd8, 0xff};

// A progressive JPEG may have any number of scans, each a pass over the whole image; a small
// file with thousands of them would take minutes. Real encoders write about ten.
constexpr int kMaxJpegScans = 1000;

bool is_png(const uint8_t* data, size_t size) {
  return size >= sizeof kPngMagic && std::memcmp(data, kPngMagic, sizeof kPngMagic) == 0;
}

bool is_jpeg(const uint8_t* data, size_t size) {
  return size >= sizeof kJpegMagic && std::memcmp(data, kJpegMagic, sizeof kJpegMagic) == 0;
}

// The sizes of the BMP info headers: OS/2 1.x (12), Windows 3 (40), Adobe's (56), V4 (108), V5 (124).
bool is_bmp_header_size(uint32_t n) { return n == 12 || n == 40 || n == 56 || n == 108 || n == 124; }

// "BM" alone is too weak a magic (a CSV's header may start "BMI,"): the info header's size must be known too.
bool is_bmp(const uint8_t* data, size_t size) {
  return size >= 18 && data[0] == 'B' && data[1] == 'M' && is_bmp_header_size(load_le32(data + 14));
}

std::string hex_bytes(const uint8_t* data, size_t n) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%s%02x", i ? " " : "", data[i]);
    s += buf;
  }
  return s;
}

bool exceeds_pixel_limit(uint64_t width, uint64_t height) {
  return width * height > uint64_t(kImageMaxPixels);  // both < 2^32: no overflow
}

[[noreturn]] void throw_too_large(const std::string& name, const char* format, uint64_t width, uint64_t height) {
  throw DataError(name + ": the " + format + " header declares " + std::to_string(width) + " x " +
                  std::to_string(height) + " pixels, more than the limit of " + std::to_string(kImageMaxPixels) +
                  " pixels (2^26, e.g. 8192 x 8192)");
}

// ---------------------------------------------------------------------------------------------
// PNG. libpng reports an error by calling our error function, which must not return: it
// longjmps back to the setjmp in run_png_read. Everything that lives across that jump is in
// PngRead, owned by the caller's frame (which the jump does not cross), and run_png_read holds
// no object with a destructor, so the jump skips none. The destructor frees libpng's state on
// every path.

struct PngRead {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;          // bytes handed to libpng so far
  bool truncated = false;  // the error was our read function finding the end of the data
  char message[256] = {};
  char warning[256] = {};  // the last one: libpng says what is wrong in a warning before some errors
  png_structp png = nullptr;
  png_infop info = nullptr;
  uint32_t width = 0, height = 0;
  int channels = 0;                  // after libpng's transformations: 1 to 4, 8 bits each
  std::vector<uint8_t> decoded;      // rows of `channels`-byte pixels
  std::vector<png_bytep> rows;

  ~PngRead() { png_destroy_read_struct(&png, &info, nullptr); }
};

void png_fail(png_structp png, png_const_charp message) {
  auto* r = static_cast<PngRead*>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof r->message, "%s", message);
  png_longjmp(png, 1);
}

void png_keep_warning(png_structp png, png_const_charp message) {
  auto* r = static_cast<PngRead*>(png_get_error_ptr(png));
  std::snprintf(r->warning, sizeof r->warning, "%s", message);
}

void png_ignore_warning(png_structp, png_const_charp) {}

void png_read_from_memory(png_structp png, png_bytep out, size_t n) {
  auto* r = static_cast<PngRead*>(png_get_io_ptr(png));
  if (n > r->size - r->pos) {
    r->truncated = true;
    png_error(png, "truncated");
  }
  std::memcpy(out, r->data + r->pos, n);
  r->pos += n;
}

enum class PngOutcome { Decoded, Failed, TooLarge };

PngOutcome run_png_read(PngRead& r) {
  if (setjmp(png_jmpbuf(r.png))) return PngOutcome::Failed;
  png_set_read_fn(r.png, &r, png_read_from_memory);
  // Our own pixel limit decides, with its own message, so libpng's (1e6 x 1e6) must not come first.
  png_set_user_limits(r.png, 0x7fffffff, 0x7fffffff);
  // A damaged ancillary chunk means a damaged file: refuse it rather than guess.
  png_set_crc_action(r.png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
  png_read_info(r.png, r.info);
  r.width = png_get_image_width(r.png, r.info);
  r.height = png_get_image_height(r.png, r.info);
  if (exceeds_pixel_limit(r.width, r.height)) return PngOutcome::TooLarge;
  // Palette -> RGB, gray below 8 bits -> 8 bits, tRNS -> alpha, 16 bits -> 8 (rounded). No gamma
  // correction: the stored values are what a dataset of PNGs would have been read as.
  png_set_expand(r.png);
  png_set_scale_16(r.png);
  png_set_interlace_handling(r.png);
  png_read_update_info(r.png, r.info);
  r.channels = png_get_channels(r.png, r.info);
  const size_t row_bytes = png_get_rowbytes(r.png, r.info);
  // The compositing below assumes `channels` bytes per pixel; the buffer is sized from row_bytes.
  if (row_bytes != size_t(r.channels) * r.width) png_error(r.png, "unexpected pixel layout after expansion to 8 bits");
  r.decoded.resize(row_bytes * r.height);
  r.rows.resize(r.height);
  for (uint32_t y = 0; y < r.height; ++y) r.rows[y] = r.decoded.data() + size_t(y) * row_bytes;
  png_read_image(r.png, r.rows.data());
  png_read_end(r.png, nullptr);  // the chunks after the pixels, to the end (CRCs, truncation)
  return PngOutcome::Decoded;
}

Image decode_png(const uint8_t* data, size_t size, const std::string& name) {
  PngRead r;
  r.data = data;
  r.size = size;
  r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r, png_fail, png_keep_warning);
  if (r.png) r.info = png_create_info_struct(r.png);
  if (!r.png || !r.info) throw DataError(name + ": cannot decode the PNG: libpng could not allocate its state");

  switch (run_png_read(r)) {
    case PngOutcome::Decoded:
      break;
    case PngOutcome::TooLarge:
      throw_too_large(name, "PNG", r.width, r.height);
    case PngOutcome::Failed:
      if (r.truncated)
        throw DataError(name + ": truncated PNG: the file ends at byte offset " + std::to_string(size) +
                        " before the image is complete");
      throw DataError(name + ": corrupt PNG at byte offset " + std::to_string(r.pos) + ": " + r.message +
                      (r.warning[0] ? std::string(" (after the warning: ") + r.warning + ")" : ""));
  }

  // Gray (+alpha) stays one channel, RGB (+alpha) three; alpha is composited on black, the
  // background of MNIST-style digits: value * alpha / 255, rounded.
  const bool alpha = r.channels == 2 || r.channels == 4;
  Image image;
  image.width = r.width;
  image.height = r.height;
  image.channels = r.channels <= 2 ? 1 : 3;
  const size_t n = size_t(image.width) * size_t(image.height);
  image.pixels.resize(n * size_t(image.channels));
  const uint8_t* in = r.decoded.data();
  uint8_t* out = image.pixels.data();
  for (size_t i = 0; i < n; ++i, in += r.channels)
    for (int c = 0; c < image.channels; ++c)
      *out++ = alpha ? uint8_t((unsigned(in[c]) * in[image.channels] + 127) / 255) : in[c];
  return image;
}

// ---------------------------------------------------------------------------------------------
// JPEG, the same way: libjpeg's error_exit longjmps back to run_jpeg_read's setjmp; JpegRead
// lives in the caller's frame and its destructor frees libjpeg's memory pools.

struct JpegRead {
  jpeg_decompress_struct cinfo{};
  jpeg_error_mgr errors{};
  jpeg_progress_mgr progress{};
  std::jmp_buf jump{};
  char message[JMSG_LENGTH_MAX] = {};
  bool created = false;
  bool truncated = false;  // libjpeg ran out of data
  bool too_many_scans = false;
  Image image;

  ~JpegRead() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

[[noreturn]] void jpeg_fail(j_common_ptr cinfo) {
  auto* r = static_cast<JpegRead*>(cinfo->client_data);
  (*cinfo->err->format_message)(cinfo, r->message);
  r->truncated = cinfo->err->msg_code == JWRN_JPEG_EOF;
  std::longjmp(r->jump, 1);
}

// libjpeg reports a truncated file (it pads it with an end marker) and damaged entropy-coded
// data as warnings and decodes on with gray blocks; a model would then see made-up pixels, so
// those are errors here. Warnings about metadata alone (junk between markers, an unknown JFIF
// or Adobe version, a bad ICC profile) leave the pixels intact and are ignored, as are traces.
void jpeg_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  switch (cinfo->err->msg_code) {
    case JWRN_EXTRANEOUS_DATA:
    case JWRN_JFIF_MAJOR:
    case JWRN_ADOBE_XFORM:
    case JWRN_BOGUS_ICC:
      return;
    default:
      jpeg_fail(cinfo);
  }
}

void jpeg_count_scans(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number <= kMaxJpegScans) return;
  auto* r = static_cast<JpegRead*>(cinfo->client_data);
  r->too_many_scans = true;
  std::longjmp(r->jump, 1);
}

enum class JpegOutcome { Decoded, Failed, TooLarge, Cmyk };

JpegOutcome run_jpeg_read(JpegRead& r, const uint8_t* data, size_t size) {
  if (setjmp(r.jump)) return JpegOutcome::Failed;
  jpeg_create_decompress(&r.cinfo);
  r.created = true;
  r.cinfo.client_data = &r;
  r.cinfo.progress = &r.progress;
  jpeg_mem_src(&r.cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&r.cinfo, TRUE);
  if (exceeds_pixel_limit(r.cinfo.image_width, r.cinfo.image_height)) return JpegOutcome::TooLarge;
  if (r.cinfo.jpeg_color_space == JCS_CMYK || r.cinfo.jpeg_color_space == JCS_YCCK) return JpegOutcome::Cmyk;
  r.cinfo.out_color_space = r.cinfo.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&r.cinfo);
  r.image.width = r.cinfo.output_width;
  r.image.height = r.cinfo.output_height;
  r.image.channels = r.cinfo.output_components;  // 1 or 3, as asked
  const size_t row_bytes = size_t(r.image.width) * size_t(r.image.channels);
  r.image.pixels.resize(row_bytes * size_t(r.image.height));
  while (r.cinfo.output_scanline < r.cinfo.output_height) {
    JSAMPROW row = r.image.pixels.data() + size_t(r.cinfo.output_scanline) * row_bytes;
    jpeg_read_scanlines(&r.cinfo, &row, 1);
  }
  jpeg_finish_decompress(&r.cinfo);  // reads to the end marker: a cut-off tail is an error too
  return JpegOutcome::Decoded;
}

Image decode_jpeg(const uint8_t* data, size_t size, const std::string& name) {
  JpegRead r;
  r.cinfo.err = jpeg_std_error(&r.errors);
  r.errors.error_exit = jpeg_fail;
  r.errors.emit_message = jpeg_message;
  r.progress.progress_monitor = jpeg_count_scans;
  switch (run_jpeg_read(r, data, size)) {
    case JpegOutcome::Decoded:
      return std::move(r.image);
    case JpegOutcome::TooLarge:
      throw_too_large(name, "JPEG", r.cinfo.image_width, r.cinfo.image_height);
    case JpegOutcome::Cmyk:
      throw DataError(name + ": a CMYK JPEG; only gray and color (YCbCr or RGB) JPEGs can be read");
    case JpegOutcome::Failed:
      break;
  }
  if (r.too_many_scans)
    throw DataError(name + ": a progressive JPEG with more than " + std::to_string(kMaxJpegScans) + " scans, the limit");
  if (r.truncated)
    throw DataError(name + ": truncated JPEG: the file ends at byte offset " + std::to_string(size) +
                    " before the image is complete");
  const size_t left = r.cinfo.src ? r.cinfo.src->bytes_in_buffer : 0;
  throw DataError(name + ": corrupt JPEG at byte offset " + std::to_string(size - left) + ": " + r.message);
}

// ---------------------------------------------------------------------------------------------
// BMP. stb_image unpacks the pixels, but it reads past the end of its data as zeros and indexes
// a palette with any byte, so everything it takes on trust is checked here first: the header
// fields, that the file holds every row, and that every palette index names an entry.

struct BmpHeader {
  uint32_t header_size = 0;  // the info header's
  uint32_t offset = 0;       // of the pixels
  int64_t width = 0, height = 0;
  int bits = 0;              // per pixel
  uint32_t compression = 0;  // 0 none, 3 bit fields
  int64_t palette = 0;       // entries, for 8 bits and fewer
  int64_t stride = 0;        // bytes per stored row, padded to 4
};

[[noreturn]] void throw_corrupt_bmp(const std::string& name, size_t offset, const std::string& what) {
  throw DataError(name + ": corrupt BMP at byte offset " + std::to_string(offset) + ": " + what);
}

[[noreturn]] void throw_truncated(const std::string& name, const char* format, size_t size) {
  throw DataError(name + ": truncated " + format + ": the file ends at byte offset " + std::to_string(size) +
                  " before the image is complete");
}

BmpHeader read_bmp_header(const uint8_t* data, size_t size, const std::string& name) {
  BmpHeader h;
  h.header_size = load_le32(data + 14);
  if (h.header_size == 12)
    throw DataError(name + ": an OS/2 1.x BMP (12-byte header); only Windows BMPs (40-, 56-, 108- or 124-byte "
                    "headers) can be read");
  if (size < 14 + size_t(h.header_size)) throw_truncated(name, "BMP", size);
  h.offset = load_le32(data + 10);
  const int32_t width = int32_t(load_le32(data + 18)), height = int32_t(load_le32(data + 22));
  if (load_le16(data + 26) != 1) throw_corrupt_bmp(name, 26, "the number of planes is " + std::to_string(load_le16(data + 26)) + ", not 1");
  h.bits = load_le16(data + 28);
  h.compression = load_le32(data + 30);
  if (width <= 0 || height == 0 || height == INT32_MIN)
    throw_corrupt_bmp(name, 18, "a width of " + std::to_string(width) + " and a height of " + std::to_string(height));
  h.width = width;
  h.height = height < 0 ? -int64_t(height) : height;  // negative: rows stored top-down
  if (exceeds_pixel_limit(uint64_t(h.width), uint64_t(h.height))) throw_too_large(name, "BMP", uint64_t(h.width), uint64_t(h.height));
  if (h.bits != 1 && h.bits != 4 && h.bits != 8 && h.bits != 16 && h.bits != 24 && h.bits != 32)
    throw_corrupt_bmp(name, 28, std::to_string(h.bits) + " bits per pixel (1, 4, 8, 16, 24 or 32 are possible)");
  if (h.compression == 1 || h.compression == 2)
    throw DataError(name + ": a run-length encoded BMP; only uncompressed BMPs can be read");
  if (h.compression == 4 || h.compression == 5)
    throw DataError(name + ": a BMP holding a JPEG or PNG; only uncompressed BMPs can be read");
  if (h.compression != 0 && !(h.compression == 3 && (h.bits == 16 || h.bits == 32)))
    throw_corrupt_bmp(name, 30, "compression " + std::to_string(h.compression) + " with " + std::to_string(h.bits) +
                                    " bits per pixel");
  // What precedes the pixels: the info header, a 40-byte one's three bit-field masks, or a palette.
  const uint64_t header_end = 14 + uint64_t(h.header_size) + (h.header_size == 40 && h.compression == 3 ? 12 : 0);
  if (h.bits <= 8) {
    h.palette = h.offset >= header_end ? int64_t((h.offset - header_end) / 4) : 0;
    if (h.palette < 1 || h.palette > 256)
      throw_corrupt_bmp(name, 10, "the pixels start at byte offset " + std::to_string(h.offset) + ", leaving room for " +
                                      std::to_string(h.palette) + " palette entries; a " + std::to_string(h.bits) +
                                      "-bit BMP has 1 to 256");
  } else if (h.offset != header_end) {
    throw_corrupt_bmp(name, 10, "the pixels start at byte offset " + std::to_string(h.offset) +
                                    " instead of right after the header, at " + std::to_string(header_end));
  }
  h.stride = (h.width * h.bits + 31) / 32 * 4;
  if (uint64_t(h.offset) + uint64_t(h.stride) * uint64_t(h.height) > size) throw_truncated(name, "BMP", size);
  return h;
}

// Every pixel's palette index must name an entry (stb_image would read whatever lies beyond).
void check_bmp_palette_indices(const uint8_t* data, const BmpHeader& h, const std::string& name) {
  const int per_byte = 8 / h.bits, mask = (1 << h.bits) - 1;
  for (int64_t y = 0; y < h.height; ++y) {
    const uint8_t* row = data + h.offset + y * h.stride;
    for (int64_t x = 0; x < h.width; ++x) {
      const int shift = 8 - h.bits * int(x % per_byte + 1);
      const int index = row[x / per_byte] >> shift & mask;
      if (index >= h.palette)
        throw_corrupt_bmp(name, size_t(h.offset + y * h.stride + x / per_byte),
                          "palette index " + std::to_string(index) + " of a palette of " + std::to_string(h.palette) +
                              " entries");
    }
  }
}

// A palette all of gray (R = G = B), the only way a BMP stores a gray picture.
bool bmp_palette_is_gray(const uint8_t* data, const BmpHeader& h) {
  const uint8_t* entry = data + 14 + h.header_size;  // where stb_image reads it: blue, green, red, reserved
  for (int64_t i = 0; i < h.palette; ++i, entry += 4)
    if (entry[0] != entry[1] || entry[1] != entry[2]) return false;
  return true;
}

Image decode_bmp(const uint8_t* data, size_t size, const std::string& name) {
  const BmpHeader h = read_bmp_header(data, size, name);
  if (h.bits <= 8) check_bmp_palette_indices(data, h, name);
  // The checks above bound what stb_image reads to `size` bytes, itself at most kMaxFileBytes.
  int width = 0, height = 0, channels = 0;
  std::string failure;
  const stb::Pixels decoded = stb::load_bmp(data, size, width, height, channels, failure);
  if (!decoded) throw DataError(name + ": corrupt BMP: " + failure);
  if (width != h.width || height != h.height || (channels != 3 && channels != 4))
    throw DataError(name + ": corrupt BMP: decoded as " + std::to_string(width) + " x " + std::to_string(height) + " x " +
                    std::to_string(channels) + " against its header's " + std::to_string(h.width) + " x " +
                    std::to_string(h.height));
  Image image;
  image.width = width;
  image.height = height;
  image.channels = h.bits <= 8 && bmp_palette_is_gray(data, h) ? 1 : 3;
  const size_t n = size_t(width) * size_t(height);
  image.pixels.resize(n * size_t(image.channels));
  const uint8_t* in = decoded.get();
  uint8_t* out = image.pixels.data();
  // Alpha (32-bit BMPs that use it) is composited on black as for PNGs; stb_image reports an
  // alpha channel that is all 0 as all 255 (such files leave it unused).
  for (size_t i = 0; i < n; ++i, in += channels)
    for (int c = 0; c < image.channels; ++c)
      *out++ = channels == 4 ? uint8_t((unsigned(in[c]) * in[3] + 127) / 255) : in[c];
  return image;
}

// The dimensions a JPEG's frame header (SOFn) declares, found by walking the marker segments
// before it; false when it does not lie within `size` bytes.
bool jpeg_frame_size(const uint8_t* data, size_t size, uint32_t& width, uint32_t& height) {
  size_t at = 2;
  while (at + 4 <= size && data[at] == 0xff) {
    const uint8_t marker = data[at + 1];
    if (marker == 0xff) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {  // TEM, RSTn, SOI: no length follows
      at += 2;
      continue;
    }
    if (marker == 0xd9) return false;  // EOI
    const bool frame = marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc;
    if (frame) {
      if (at + 9 > size) return false;
      height = load_be16(data + at + 5);
      width = load_be16(data + at + 7);
      return true;
    }
    if (marker == 0xda) return false;  // scan data before any frame: decoding will say so
    at += 2 + size_t(load_be16(data + at + 2));
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// JPEG writing into memory (libjpeg's own buffer), errors as in reading.

struct JpegWrite {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr errors{};
  std::jmp_buf jump{};
  char message[JMSG_LENGTH_MAX] = {};
  bool created = false;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;

  ~JpegWrite() {
    if (created) jpeg_destroy_compress(&cinfo);
    std::free(buffer);
  }
};

[[noreturn]] void jpeg_write_fail(j_common_ptr cinfo) {
  auto* w = static_cast<JpegWrite*>(cinfo->client_data);
  (*cinfo->err->format_message)(cinfo, w->message);
  std::longjmp(w->jump, 1);
}

bool run_jpeg_write(JpegWrite& w, const Image& image, int quality) {
  if (setjmp(w.jump)) return false;
  jpeg_create_compress(&w.cinfo);
  w.created = true;
  w.cinfo.client_data = &w;
  jpeg_mem_dest(&w.cinfo, &w.buffer, &w.size);
  w.cinfo.image_width = JDIMENSION(image.width);
  w.cinfo.image_height = JDIMENSION(image.height);
  w.cinfo.input_components = int(image.channels);
  w.cinfo.in_color_space = image.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&w.cinfo);
  jpeg_set_quality(&w.cinfo, quality, TRUE);
  for (int i = 0; i < w.cinfo.num_components; ++i) w.cinfo.comp_info[i].h_samp_factor = w.cinfo.comp_info[i].v_samp_factor = 1;
  jpeg_start_compress(&w.cinfo, TRUE);
  const size_t row_bytes = size_t(image.width) * size_t(image.channels);
  while (w.cinfo.next_scanline < w.cinfo.image_height) {
    // libjpeg takes rows as non-const pointers but only reads them.
    JSAMPROW row = const_cast<uint8_t*>(image.pixels.data()) + size_t(w.cinfo.next_scanline) * row_bytes;
    jpeg_write_scanlines(&w.cinfo, &row, 1);
  }
  jpeg_finish_compress(&w.cinfo);
  return true;
}

// ---------------------------------------------------------------------------------------------
// PNG writing into memory (then one atomic file write); libpng's errors as in reading.

struct PngWrite {
  png_structp png = nullptr;
  png_infop info = nullptr;
  std::string bytes;
  bool out_of_memory = false;
  char message[256] = {};

  ~PngWrite() { png_destroy_write_struct(&png, &info); }
};

void png_write_fail(png_structp png, png_const_charp message) {
  auto* w = static_cast<PngWrite*>(png_get_error_ptr(png));
  std::snprintf(w->message, sizeof w->message, "%s", message);
  png_longjmp(png, 1);
}

void png_append(png_structp png, png_bytep data, size_t n) {
  auto* w = static_cast<PngWrite*>(png_get_io_ptr(png));
  // No C++ exception may cross libpng's C frames: turn one into a libpng error, after the
  // handler (a longjmp out of a handler would skip the exception's destruction).
  try {
    w->bytes.append(reinterpret_cast<const char*>(data), n);
  } catch (const std::bad_alloc&) {
    w->out_of_memory = true;
  }
  if (w->out_of_memory) png_error(png, "out of memory");
}

void png_no_flush(png_structp) {}

bool run_png_write(PngWrite& w, const Image& image) {
  if (setjmp(png_jmpbuf(w.png))) return false;
  png_set_write_fn(w.png, &w, png_append, png_no_flush);
  png_set_IHDR(w.png, w.info, uint32_t(image.width), uint32_t(image.height), 8,
               image.channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(w.png, w.info);
  const size_t row_bytes = size_t(image.width) * size_t(image.channels);
  for (int64_t y = 0; y < image.height; ++y) png_write_row(w.png, image.pixels.data() + size_t(y) * row_bytes);
  png_write_end(w.png, nullptr);
  return true;
}

// The encoders, `where` naming the image or its file in messages.
std::string png_bytes(const Image& image, const std::string& where) {
  check_image(image, where);
  PngWrite w;
  w.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w, png_write_fail, png_ignore_warning);
  if (w.png) w.info = png_create_info_struct(w.png);
  if (!w.png || !w.info) throw IoError(where + ": cannot encode the PNG: libpng could not allocate its state");
  if (!run_png_write(w, image)) throw IoError(where + ": cannot encode the PNG: " + w.message);
  return std::move(w.bytes);
}

std::string jpeg_bytes(const Image& image, int quality, const std::string& where) {
  check_image(image, where);
  if (quality < 1 || quality > 100)
    throw ValueError(where + ": JPEG quality " + std::to_string(quality) + "; expected 1 to 100");
  if (image.width > JPEG_MAX_DIMENSION || image.height > JPEG_MAX_DIMENSION)
    throw ValueError(where + ": an image of " + std::to_string(image.width) + " x " + std::to_string(image.height) +
                     " pixels; a JPEG has at most " + std::to_string(JPEG_MAX_DIMENSION) + " per side");
  JpegWrite w;
  w.cinfo.err = jpeg_std_error(&w.errors);
  w.errors.error_exit = jpeg_write_fail;
  if (!run_jpeg_write(w, image, quality)) throw IoError(where + ": cannot encode the JPEG: " + w.message);
  return std::string(reinterpret_cast<const char*>(w.buffer), w.size);
}

}  // namespace

bool is_image_data(const uint8_t* data, size_t size) {
  return is_png(data, size) || is_jpeg(data, size) || is_bmp(data, size);
}

Image decode_image(const uint8_t* data, size_t size, const std::string& name) {
  if (size == 0) throw DataError(name + ": empty file; expected a PNG, JPEG or BMP image");
  if (is_png(data, size)) return decode_png(data, size, name);
  if (is_jpeg(data, size)) return decode_jpeg(data, size, name);
  if (is_bmp(data, size)) return decode_bmp(data, size, name);
  const size_t shown = std::min<size_t>(size, 8);
  throw DataError(name + ": not a PNG, JPEG or BMP image: it starts with bytes " + hex_bytes(data, shown) +
                  " (a PNG starts with 89 50 4e 47 0d 0a 1a 0a, a JPEG with ff d8 ff, a BMP with 42 4d)");
}

void check_image_header(const uint8_t* data, size_t size, const std::string& name) {
  if (size == 0 || !is_image_data(data, size)) decode_image(data, size, name);  // throws its message
  // PNG: the IHDR chunk comes first, its width and height at bytes 16 to 23.
  if (is_png(data, size) && size >= 24 && std::memcmp(data + 12, "IHDR", 4) == 0 &&
      exceeds_pixel_limit(load_be32(data + 16), load_be32(data + 20)))
    throw_too_large(name, "PNG", load_be32(data + 16), load_be32(data + 20));
  uint32_t width = 0, height = 0;
  if (is_jpeg(data, size) && jpeg_frame_size(data, size, width, height) && exceeds_pixel_limit(width, height))
    throw_too_large(name, "JPEG", width, height);
  if (is_bmp(data, size) && size >= 26) {
    const int64_t w = int32_t(load_le32(data + 18)), h = std::abs(int64_t(int32_t(load_le32(data + 22))));
    if (w > 0 && exceeds_pixel_limit(uint64_t(w), uint64_t(h))) throw_too_large(name, "BMP", uint64_t(w), uint64_t(h));
  }
}

// The fields of an Image must agree before anything indexes its pixels.
void check_image(const Image& image, const std::string& where) {
  if (image.channels != 1 && image.channels != 3)
    throw ValueError(where + ": an image has 1 (gray) or 3 (RGB) channels, got " + std::to_string(image.channels));
  if (image.width < 1 || image.height < 1 || image.width > kImageMaxPixels || image.height > kImageMaxPixels ||
      image.width * image.height > kImageMaxPixels)
    throw ValueError(where + ": an image of " + std::to_string(image.width) + " x " + std::to_string(image.height) +
                     " pixels; expected 1 to " + std::to_string(kImageMaxPixels) + " pixels");
  const int64_t want = image.width * image.height * image.channels;
  if (int64_t(image.pixels.size()) != want)
    throw ValueError(where + ": the image holds " + std::to_string(image.pixels.size()) + " bytes of pixels, expected " +
                     std::to_string(image.width) + " x " + std::to_string(image.height) + " x " +
                     std::to_string(image.channels) + " = " + std::to_string(want));
}

Image read_image(const fs::path& file) {
  const std::string name = file.string();
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError(name + ": cannot open: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw DataError(name + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw DataError(name + ": is a directory, not an image file");
  if (S_ISREG(st.st_mode) && st.st_size > kMaxFileBytes)
    throw DataError(name + ": " + std::to_string(st.st_size) + " bytes; an image file may have at most " +
                    std::to_string(kMaxFileBytes) + " (512 MiB)");
  std::vector<uint8_t> bytes;
  if (S_ISREG(st.st_mode)) bytes.reserve(size_t(st.st_size));
  uint8_t buf[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw DataError(name + ": read error at byte offset " + std::to_string(bytes.size()) + ": " +
                      std::strerror(errno));
    }
    if (got == 0) break;
    bytes.insert(bytes.end(), buf, buf + got);
    if (int64_t(bytes.size()) > kMaxFileBytes)
      throw DataError(name + ": more than " + std::to_string(kMaxFileBytes) +
                      " bytes (512 MiB), the most an image file may have");
  }
  return decode_image(bytes.data(), bytes.size(), name);
}

std::string encode_bmp(const Image& image) {
  check_image(image, "encode_bmp");
  const bool gray = image.channels == 1;
  const uint32_t palette_bytes = gray ? 256 * 4 : 0, offset = 14 + 40 + palette_bytes;
  const size_t row_bytes = size_t(image.width) * size_t(image.channels);
  const size_t stride = (row_bytes + 3) / 4 * 4;
  const uint64_t file_size = offset + uint64_t(stride) * uint64_t(image.height);  // < 2^32 within the pixel limit
  std::string out(size_t(file_size), '\0');
  auto put = [&](size_t at, uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out[at + size_t(i)] = char(v >> (8 * i));
  };
  out[0] = 'B';
  out[1] = 'M';
  put(2, uint32_t(file_size), 4);
  put(10, offset, 4);
  put(14, 40, 4);  // BITMAPINFOHEADER
  put(18, uint32_t(image.width), 4);
  put(22, uint32_t(image.height), 4);  // positive: rows bottom-up, as most writers store them
  put(26, 1, 2);
  put(28, gray ? 8 : 24, 2);
  put(34, uint32_t(stride * size_t(image.height)), 4);
  put(38, 2835, 4);  // 72 dpi, in pixels per metre
  put(42, 2835, 4);
  if (gray) {
    put(46, 256, 4);
    for (uint32_t i = 0; i < 256; ++i) put(54 + 4 * i, i * 0x010101u, 4);
  }
  for (int64_t y = 0; y < image.height; ++y) {
    const uint8_t* in = image.pixels.data() + size_t(image.height - 1 - y) * row_bytes;
    char* row = out.data() + offset + size_t(y) * stride;
    if (gray) {
      std::memcpy(row, in, row_bytes);
    } else {
      for (int64_t x = 0; x < image.width; ++x, in += 3, row += 3) {  // stored blue, green, red
        row[0] = char(in[2]);
        row[1] = char(in[1]);
        row[2] = char(in[0]);
      }
    }
  }
  return out;
}

std::string encode_png(const Image& image) { return png_bytes(image, "encode_png"); }

std::string encode_jpeg(const Image& image, int quality) { return jpeg_bytes(image, quality, "encode_jpeg"); }

void write_png(const fs::path& file, const Image& image) {
  io::write_file_atomically(file, png_bytes(image, file.string()));
}

void write_jpeg(const fs::path& file, const Image& image, int quality) {
  io::write_file_atomically(file, jpeg_bytes(image, quality, file.string()));
}

}  // namespace plexus::data
