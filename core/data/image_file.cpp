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

#include "io/atomic_file.h"
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

// ---------------------------------------------------------------------------------------------
// Resizing: each output index along an axis is a weighted sum of input indices ("taps"), the
// weights summing to 1. Both axes are resized separately, so the same rules hold per axis.

using Taps = std::vector<std::vector<std::pair<int64_t, double>>>;

Taps axis_taps(int64_t in, int64_t out) {
  Taps taps(static_cast<size_t>(out));
  for (int64_t j = 0; j < out; ++j) {
    auto& t = taps[size_t(j)];
    if (in == out) {
      t.emplace_back(j, 1.0);
    } else if (out < in) {
      // Area average. In units of 1/(in*out) of the axis, input pixel i spans [i*out, (i+1)*out)
      // and output pixel j spans [j*in, (j+1)*in): the overlaps are whole numbers, so the
      // weights are exact fractions of `in`.
      const int64_t lo = j * in, hi = (j + 1) * in;
      for (int64_t i = lo / out; i * out < hi; ++i) {
        const int64_t overlap = std::min(hi, (i + 1) * out) - std::max(lo, i * out);
        if (overlap > 0) t.emplace_back(i, double(overlap) / double(in));
      }
    } else {
      // Bilinear with pixel centres aligned (output centre j + 1/2 maps to input x + 1/2), the
      // edges clamped: x = ((2j + 1) * in - out) / (2 * out).
      const double x = std::clamp(double((2 * j + 1) * in - out) / double(2 * out), 0.0, double(in - 1));
      const int64_t i0 = int64_t(x);
      const double f = x - double(i0);
      t.emplace_back(i0, 1.0 - f);
      if (f > 0) t.emplace_back(i0 + 1, f);
    }
  }
  return taps;
}

}  // namespace

bool is_image_data(const uint8_t* data, size_t size) { return is_png(data, size) || is_jpeg(data, size); }

Image decode_image(const uint8_t* data, size_t size, const std::string& name) {
  if (size == 0) throw DataError(name + ": empty file; expected a PNG or JPEG image");
  if (is_png(data, size)) return decode_png(data, size, name);
  if (is_jpeg(data, size)) return decode_jpeg(data, size, name);
  const size_t shown = std::min<size_t>(size, 8);
  throw DataError(name + ": not a PNG or JPEG image: it starts with bytes " + hex_bytes(data, shown) +
                  " (a PNG starts with 89 50 4e 47 0d 0a 1a 0a, a JPEG with ff d8 ff)");
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

void write_png(const fs::path& file, const Image& image) {
  check_image(image, file.string());
  PngWrite w;
  w.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w, png_write_fail, png_ignore_warning);
  if (w.png) w.info = png_create_info_struct(w.png);
  if (!w.png || !w.info) throw IoError(file.string() + ": cannot encode the PNG: libpng could not allocate its state");
  if (!run_png_write(w, image)) throw IoError(file.string() + ": cannot encode the PNG: " + w.message);
  io::write_file_atomically(file, w.bytes);
}

Tensor image_to_input(const Image& image, const Shape& chw) {
  if (chw.size() != 3 || (chw[0] != 1 && chw[0] != 3) || chw[1] < 1 || chw[2] < 1)
    throw ShapeError("image_to_input: a picture becomes an input of shape [C, H, W] with C 1 (gray) or 3 (RGB), "
                     "not " + to_string(chw));
  check_image(image, "image_to_input");
  const int64_t channels = chw[0], height = chw[1], width = chw[2];
  const int64_t iw = image.width, ih = image.height, ic = image.channels;
  const uint8_t* px = image.pixels.data();
  // Channel c of the model's input at source pixel i, in pixel units (0 to 255). Luma's weights
  // are whole thousandths, so equal R, G and B give exactly that value.
  auto source = [&](int64_t c, int64_t i) -> double {
    const uint8_t* p = px + i * ic;
    if (ic == 1) return p[0];
    if (channels == 3) return p[c];
    return double(299 * p[0] + 587 * p[1] + 114 * p[2]) / 1000.0;
  };

  const Taps across = axis_taps(iw, width), down = axis_taps(ih, height);
  Tensor out = empty({channels, height, width});
  float* o = out.data();
  std::vector<double> rows(size_t(ih * width));  // one channel resized across, not yet down
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t y = 0; y < ih; ++y)
      for (int64_t x = 0; x < width; ++x) {
        double v = 0;
        for (const auto& [i, w] : across[size_t(x)]) v += w * source(c, y * iw + i);
        rows[size_t(y * width + x)] = v;
      }
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x) {
        double v = 0;
        for (const auto& [i, w] : down[size_t(y)]) v += w * rows[size_t(i * width + x)];
        // The MNIST reader's own arithmetic (float(byte) * (1/255)), so equal pixels give equal floats.
        o[(c * height + y) * width + x] = float(v) * (1.f / 255.f);
      }
  }
  return out;
}

}  // namespace plexus::data
