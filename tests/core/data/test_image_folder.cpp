// data/image_folder.h and what it stands on: BMP decoding (checked against BMPs written byte
// by byte here), JPEG writing, prepare_image's three fits against hand-computed pixels, the
// folder scan (order, classes, splits), the dataset's values and targets, its decoded-image
// cache (hits, the byte bound, several threads at once), and every kind of bad input in both
// strict and skip mode: a DataError naming the file or folder, or a listed skip, never a crash.
#include "support/check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "data/dataset.h"
#include "data/image_cache.h"
#include "data/image_file.h"
#include "data/image_folder.h"
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


Image image_of(int64_t width, int64_t height, int64_t channels, Bytes pixels) {
  Image im;
  im.width = width;
  im.height = height;
  im.channels = channels;
  im.pixels = std::move(pixels);
  return im;
}

// A gray picture whose pixels all hold `value`, so each file of a folder is told apart by it.
Image flat(int64_t side, uint8_t value, int64_t channels = 1) {
  return image_of(side, side, channels, Bytes(size_t(side * side * channels), value));
}

Image decode(const std::string& bytes, const std::string& name = "mem.bmp") {
  return decode_image(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), name);
}

std::string decode_error(const std::string& bytes, const std::string& name = "pic.bmp") {
  return message_of<DataError>([&] { decode(bytes, name); });
}

// ---- BMPs written byte by byte -------------------------------------------------------------

void put_le(std::string& s, size_t at, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[at + size_t(i)] = char(v >> (8 * i));
}

// A BITMAPINFOHEADER BMP. `rows` are the stored bytes of each row top to bottom as the picture
// shows it (without padding); they are stored bottom-up unless `top_down`. `palette`: BGRA
// entries for 8 bits and fewer.
std::string bmp(int32_t width, int32_t height, int bits, const std::vector<Bytes>& rows, const Bytes& palette = {},
                bool top_down = false) {
  const size_t stride = (size_t(width) * size_t(bits) + 31) / 32 * 4;
  const size_t offset = 54 + palette.size();
  std::string s(offset + stride * size_t(height), '\0');
  s[0] = 'B';
  s[1] = 'M';
  put_le(s, 2, uint32_t(s.size()), 4);
  put_le(s, 10, uint32_t(offset), 4);
  put_le(s, 14, 40, 4);
  put_le(s, 18, uint32_t(width), 4);
  put_le(s, 22, uint32_t(top_down ? -height : height), 4);
  put_le(s, 26, 1, 2);
  put_le(s, 28, uint32_t(bits), 2);
  std::copy(palette.begin(), palette.end(), s.begin() + 54);
  for (int32_t y = 0; y < height; ++y) {
    const Bytes& row = rows[size_t(top_down ? y : height - 1 - y)];
    std::copy(row.begin(), row.end(), s.begin() + std::ptrdiff_t(offset + size_t(y) * stride));
  }
  return s;
}

// The 3 x 2 RGB picture most BMP tests use, as rows of RGB pixels.
const std::vector<Bytes> kRgbRows = {{255, 0, 0, 0, 255, 0, 0, 0, 255}, {10, 20, 30, 40, 50, 60, 70, 80, 90}};

std::vector<Bytes> bgr(const std::vector<Bytes>& rgb_rows) {
  std::vector<Bytes> rows = rgb_rows;
  for (Bytes& r : rows)
    for (size_t i = 0; i + 2 < r.size(); i += 3) std::swap(r[i], r[i + 2]);
  return rows;
}

Bytes flatten(const std::vector<Bytes>& rows) {
  Bytes all;
  for (const Bytes& r : rows) all.insert(all.end(), r.begin(), r.end());
  return all;
}

// ---- folders --------------------------------------------------------------------------------

void make_dirs(const fs::path& p) { fs::create_directories(p); }

std::string write_raw(const fs::path& p, const std::string& bytes) {
  make_dirs(p.parent_path());
  plexus::testing::write_raw(p, bytes);
  return p.string();
}

// `count` 4x4 gray pictures in `dir`, 0.png .. (count-1).png, picture k all of value base + k.
// Written plainly: write_png's fsync per file would make the suite slow.
void fill_class(const fs::path& dir, int count, uint8_t base) {
  make_dirs(dir);
  for (int k = 0; k < count; ++k) write_raw(dir / (std::to_string(k) + ".png"), encode_png(flat(4, uint8_t(base + k))));
}

ImageFolderOptions options(int64_t side = 4, int64_t channels = 1, BadFiles bad = BadFiles::Strict,
                           int64_t cache_bytes = 1 << 20) {
  ImageFolderOptions o;
  o.format.height = o.format.width = side;
  o.format.channels = channels;
  o.bad_files = bad;
  o.cache_bytes = cache_bytes;
  return o;
}

std::vector<int64_t> all_indices(int64_t n) {
  std::vector<int64_t> v{};
  v.resize(size_t(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<std::string> names_of(const std::vector<std::string>& paths) {
  std::vector<std::string> names;
  for (const std::string& p : paths) names.push_back(fs::path(p).parent_path().filename().string() + "/" +
                                                     fs::path(p).filename().string());
  return names;
}

bool skipped_has(const std::vector<SkippedFile>& skipped, const std::string& path, const std::string& reason) {
  return std::any_of(skipped.begin(), skipped.end(),
                     [&](const SkippedFile& s) { return s.path == path && contains(s.reason, reason); });
}

std::string describe(const std::vector<SkippedFile>& skipped) {
  std::string s;
  for (const SkippedFile& f : skipped) s += "\n  " + f.path + ": " + f.reason;
  return s;
}

#define VERIFY_SKIPPED(list, path, reason)                                                                \
  VERIFY2(skipped_has((list), (path), (reason)),                                                          \
          std::string("no skip of ") + (path) + " for '" + (reason) + "' in" + describe(list))

// A fresh folder for each use, in the suite's temporary folder.
fs::path fresh() {
  static const plexus::testing::TempDir tmp;
  static int folders = 0;
  return tmp.file("f" + std::to_string(folders++));
}

}  // namespace

// ---- BMP --------------------------------------------------------------------------------

TEST(bmp_24_bit_bottom_up_and_top_down_equal_the_png_of_the_same_pixels) {
  const fs::path dir = fresh();
  make_dirs(dir);
  write_png(dir / "rgb.png", image_of(3, 2, 3, flatten(kRgbRows)));
  const Image png = read_image(dir / "rgb.png");
  for (bool top_down : {false, true}) {
    const std::string path = write_raw(dir / (top_down ? "td.bmp" : "bu.bmp"), bmp(3, 2, 24, bgr(kRgbRows), {}, top_down));
    const Image im = read_image(path);
    COMPARE(im.width, 3);
    COMPARE(im.height, 2);
    COMPARE(im.channels, 3);
    VERIFY(im.pixels == png.pixels);
  }
}

TEST(bmp_8_bit_gray_palette_is_gray_and_color_palette_is_rgb) {
  const fs::path dir = fresh();
  make_dirs(dir);
  Bytes gray_palette;
  for (int i = 0; i < 256; ++i) gray_palette.insert(gray_palette.end(), {uint8_t(i), uint8_t(i), uint8_t(i), 0});
  const std::vector<Bytes> indices = {{0, 100, 255, 7, 9}, {1, 2, 3, 4, 5}};
  write_png(dir / "gray.png", image_of(5, 2, 1, flatten(indices)));
  const Image gray = decode(bmp(5, 2, 8, indices, gray_palette));
  COMPARE(gray.channels, 1);
  VERIFY(gray.pixels == read_image(dir / "gray.png").pixels);

  // Two gray entries and two stray bytes before the pixels: still a 2-entry gray palette.
  const Image padded = decode(bmp(2, 1, 8, {{1, 0}}, {10, 10, 10, 0, 200, 200, 200, 0, 1, 2}));
  COMPARE(padded.channels, 1);
  COMPARE(padded.pixels, Bytes({200, 10}));

  // Three colors (blue, green, red, reserved), indices into them.
  const Bytes colors = {0, 0, 255, 0, 0, 255, 0, 0, 30, 20, 10, 0};
  const Image color = decode(bmp(2, 2, 8, {{0, 1}, {2, 0}}, colors));
  COMPARE(color.channels, 3);
  VERIFY(color.pixels == Bytes({255, 0, 0, 0, 255, 0, 10, 20, 30, 255, 0, 0}));
  // 4 bits per pixel: two pixels a byte, high nibble first.
  const Image nibbles = decode(bmp(3, 1, 4, {{0x12, 0x00}}, colors));
  VERIFY(nibbles.pixels == Bytes({0, 255, 0, 10, 20, 30, 255, 0, 0}));
}

TEST(bmp_32_bit_ignores_an_unused_alpha) {
  std::vector<Bytes> rows;
  for (const Bytes& r : bgr(kRgbRows)) {
    Bytes with_alpha;
    for (size_t i = 0; i < r.size(); i += 3) with_alpha.insert(with_alpha.end(), {r[i], r[i + 1], r[i + 2], 0});
    rows.push_back(with_alpha);
  }
  const Image im = decode(bmp(3, 2, 32, rows));
  COMPARE(im.channels, 3);
  VERIFY(im.pixels == flatten(kRgbRows));
}

TEST(encode_bmp_round_trips_gray_and_rgb) {
  const Image gray = image_of(5, 3, 1, Bytes{0, 1, 2, 3, 4, 50, 60, 70, 80, 90, 200, 210, 220, 230, 255});
  const Image back = decode(encode_bmp(gray));
  COMPARE(back.channels, 1);
  VERIFY(back.pixels == gray.pixels);
  const Image rgb = image_of(3, 2, 3, flatten(kRgbRows));
  VERIFY(decode(encode_bmp(rgb)).pixels == rgb.pixels);
}

TEST(bmp_magic_needs_a_known_header_size) {
  const auto is_image = [](const std::string& b) {
    return is_image_data(reinterpret_cast<const uint8_t*>(b.data()), b.size());
  };
  const std::string good = bmp(3, 2, 24, bgr(kRgbRows));
  VERIFY(is_image(good) && is_image(good.substr(0, 18)));
  VERIFY(!is_image(good.substr(0, 17)) && !is_image("BM") && !is_image("BMI,age,weight\n25.1,40,80\n"));
}

TEST(malformed_bmps_are_data_errors_naming_the_file) {
  const std::string good = bmp(3, 2, 24, bgr(kRgbRows));
  for (size_t n = 18; n < good.size(); ++n)
    VERIFY_CONTAINS(decode_error(good.substr(0, n), "cut.bmp"), "cut.bmp: truncated BMP: the file ends at byte offset");
  std::string rle = good;
  put_le(rle, 30, 1, 4);
  VERIFY_CONTAINS(decode_error(rle), "pic.bmp: a run-length encoded BMP");
  std::string huge = good;
  put_le(huge, 18, 100000, 4);
  put_le(huge, 22, 100000, 4);
  VERIFY_CONTAINS(decode_error(huge), "pic.bmp: the BMP header declares 100000 x 100000 pixels, more than the limit");
  std::string zero = good;
  put_le(zero, 18, 0, 4);
  VERIFY_CONTAINS(decode_error(zero), "pic.bmp: corrupt BMP at byte offset 18");
  std::string bits = good;
  put_le(bits, 28, 7, 2);
  VERIFY_CONTAINS(decode_error(bits), "7 bits per pixel");
  std::string os2 = good;
  put_le(os2, 14, 12, 4);
  VERIFY_CONTAINS(decode_error(os2), "pic.bmp: an OS/2 1.x BMP");
  // An index past a 3-entry palette.
  const std::string index = bmp(2, 1, 8, {{0, 3}}, Bytes(12, 9));
  VERIFY_CONTAINS(decode_error(index), "pic.bmp: corrupt BMP at byte offset 67: palette index 3 of a palette of 3");
  const std::string no_palette = bmp(2, 1, 8, {{0, 0}});
  VERIFY_CONTAINS(decode_error(no_palette), "room for 0 palette entries");
}

TEST(check_image_header_reads_dimensions_without_decoding) {
  const auto check = [](const std::string& b) {
    return message_of<DataError>(
        [&] { check_image_header(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "h.img"); });
  };
  std::string png = encode_png(flat(4, 1));
  COMPARE(check(png.substr(0, 30)), std::string("<no exception>"));
  png[16] = char(0x7f);  // width 2^30 (the CRC is not checked here)
  VERIFY_CONTAINS(check(png), "h.img: the PNG header declares");
  std::string jpeg = encode_jpeg(flat(8, 1));
  const size_t sof = jpeg.find("\xff\xc0");
  for (size_t i : {sof + 5, sof + 7}) jpeg[i] = char(0xea), jpeg[i + 1] = char(0x60);
  VERIFY_CONTAINS(check(jpeg), "h.img: the JPEG header declares 60000 x 60000 pixels");
  // Markers without a length (TEM) and fill bytes before the frame are stepped over.
  VERIFY_CONTAINS(check(jpeg.substr(0, 2) + "\xff\x01\xff" + jpeg.substr(2)), "60000 x 60000 pixels");
  VERIFY_CONTAINS(check("hello"), "h.img: not a PNG, JPEG or BMP image");
  VERIFY_CONTAINS(check(""), "h.img: empty file");
}

// ---- JPEG writing ---------------------------------------------------------------------------

TEST(write_jpeg_round_trips_close_to_the_original) {
  const fs::path dir = fresh();
  make_dirs(dir);
  for (int64_t channels : {1, 3}) {
    Bytes px;
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 16; ++x)
        for (int64_t c = 0; c < channels; ++c) px.push_back(uint8_t(40 + 6 * x + 4 * y + 30 * c));
    const Image im = image_of(16, 16, channels, px);
    const fs::path file = dir / ("smooth" + std::to_string(channels) + ".jpg");
    write_jpeg(file, im);
    const Image back = read_image(file);
    COMPARE(back.channels, channels);
    int worst = 0;
    for (size_t i = 0; i < px.size(); ++i) worst = std::max(worst, std::abs(int(back.pixels[i]) - int(px[i])));
    VERIFY2(worst <= 4, "differs by " + std::to_string(worst));
  }
  VERIFY_CONTAINS(message_of<ValueError>([&] { write_jpeg(dir / "q.jpg", flat(2, 0), 0); }), "quality 0");
  VERIFY_CONTAINS(message_of<ValueError>([&] { write_jpeg(dir / "c.jpg", image_of(2, 2, 2, Bytes(8))); }),
                  "c.jpg: an image has 1 (gray) or 3 (RGB) channels, got 2");
  VERIFY(!fs::exists(dir / "q.jpg"));
}

// ---- prepare_image ----------------------------------------------------------------------------

// A 4 x 2 picture: rows {0, 40, 80, 120} and {40, 80, 120, 160}.
TEST(fits_give_hand_computed_pixels) {
  const Image wide = image_of(4, 2, 1, {0, 40, 80, 120, 40, 80, 120, 160});
  auto prepared = [&](int64_t h, int64_t w, ImageFit fit) {
    ImageFormat f;
    f.height = h;
    f.width = w;
    f.fit = fit;
    const Image out = prepare_image(wide, f);
    [&] { COMPARE(out.width, w); COMPARE(out.height, h); COMPARE(out.channels, 1); }();
    return out.pixels;
  };
  // Stretch to 2 x 2: columns averaged in pairs, rows kept.
  COMPARE(prepared(2, 2, ImageFit::Stretch), Bytes({20, 100, 60, 140}));
  // Pad into 4 x 4: already 4 wide, so 2 rows of it centred between black rows.
  COMPARE(prepared(4, 4, ImageFit::Pad), Bytes({0, 0, 0, 0, 0, 40, 80, 120, 40, 80, 120, 160, 0, 0, 0, 0}));
  // Crop to 4 x 4: scaled 2x to 8 x 4 (bilinear: columns at x = -0.25, 0.25, 0.75, ...), the
  // middle 4 columns (x = 0.75, 1.25, 1.75, 2.25) kept; rows at y = 0 (clamped), 0.25, 0.75, 1.
  COMPARE(prepared(4, 4, ImageFit::Crop),
           Bytes({30, 50, 70, 90, 40, 60, 80, 100, 60, 80, 100, 120, 70, 90, 110, 130}));
  // Crop to 2 x 2: already 2 high, the middle 2 columns.
  COMPARE(prepared(2, 2, ImageFit::Crop), Bytes({40, 80, 80, 120}));
  // Pad into 2 x 2: shrunk to 2 x 1 (the means of 2 x 2 blocks), on the upper of the 2 rows.
  COMPARE(prepared(2, 2, ImageFit::Pad), Bytes({40, 120, 0, 0}));
  // The size it has: taken as it is by every fit.
  for (ImageFit fit : {ImageFit::Stretch, ImageFit::Crop, ImageFit::Pad}) COMPARE(prepared(2, 4, fit), wide.pixels);
}

TEST(stretch_is_image_to_input_rounded) {
  Bytes px;
  for (int i = 0; i < 7 * 5 * 3; ++i) px.push_back(uint8_t(i * 37 % 256));
  const Image im = image_of(7, 5, 3, px);
  for (int64_t channels : {1, 3}) {
    ImageFormat f;
    f.channels = channels;
    f.height = 3;
    f.width = 11;
    f.fit = ImageFit::Stretch;
    const std::vector<float> prepared = prepared_to_input(prepare_image(im, f)).to_vector();
    const std::vector<float> direct = image_to_input(im, {channels, 3, 11}).to_vector();
    COMPARE(prepared.size(), direct.size());
    for (size_t i = 0; i < direct.size(); ++i) VERIFY(std::abs(prepared[i] - direct[i]) <= 0.5f / 255.f + 1e-6f);
  }
}

TEST(channels_convert_by_luma_and_replication) {
  ImageFormat gray;
  gray.height = 1;
  gray.width = 2;
  // 0.299 * 255 = 76.2; 0.299 * 10 + 0.587 * 20 + 0.114 * 30 = 18.15.
  COMPARE(prepare_image(image_of(2, 1, 3, {255, 0, 0, 10, 20, 30}), gray).pixels, Bytes({76, 18}));
  ImageFormat rgb = gray;
  rgb.channels = 3;
  COMPARE(prepare_image(image_of(2, 1, 1, {51, 102}), rgb).pixels, Bytes({51, 51, 51, 102, 102, 102}));
  const Tensor input = prepared_to_input(image_of(2, 1, 3, {0, 51, 255, 102, 3, 4}));
  COMPARE(input.shape(), (Shape{3, 1, 2}));
  VERIFY(input.to_vector() == std::vector<float>({0.f, 102 * (1.f / 255.f), 51 * (1.f / 255.f), 3 * (1.f / 255.f),
                                                   1.f, 4 * (1.f / 255.f)}));
}

// A picture of extreme aspect ratio is fitted without resizing it whole (which would take
// gigabytes): a column of 200 000 pixels cropped and padded to 28 x 28.
TEST(extreme_aspect_ratios_fit_cheaply) {
  Bytes px(200000);
  for (size_t i = 0; i < px.size(); ++i) px[i] = uint8_t(i / 1000);
  const Image column = image_of(1, 200000, 1, px);
  ImageFormat f;
  f.fit = ImageFit::Crop;
  const Image crop = prepare_image(column, f);  // the middle 28 of 5.6 million rows: pixels near 100 000
  for (uint8_t p : crop.pixels) VERIFY(p == 99 || p == 100);
  f.fit = ImageFit::Pad;
  const Image pad = prepare_image(column, f);  // 1 column wide, in the middle
  COMPARE(pad.pixels[14 * 28 + 0], uint8_t(0));
  VERIFY(pad.pixels[14 * 28 + 13] > 0 || pad.pixels[14 * 28 + 14] > 0);
}

TEST(fit_names_and_bad_formats) {
  for (ImageFit fit : {ImageFit::Stretch, ImageFit::Crop, ImageFit::Pad})
    VERIFY(parse_image_fit(image_fit_name(fit)) == fit);
  VERIFY_CONTAINS(message_of<ValueError>([] { parse_image_fit("zoom"); }), "unknown image fit 'zoom'; expected crop, pad or stretch");
  ImageFormat f;
  f.channels = 2;
  VERIFY_CONTAINS(message_of<ValueError>([&] { prepare_image(flat(2, 0), f); }), "1 (gray) or 3 (RGB) channels, not 2");
  f.channels = 1;
  f.width = 0;
  VERIFY_CONTAINS(message_of<ValueError>([&] { prepare_image(flat(2, 0), f); }), "pictures of 28 x 0 pixels");
}

// ---- scanning ---------------------------------------------------------------------------------

TEST(scan_orders_classes_and_files_bytewise) {
  const fs::path dir = fresh();
  // "B" < "a" < "b" bytewise; file names in byte order ("10" before "2"); extensions any case.
  for (const char* f : {"b/2.png", "b/10.png", "a/x.JpEg", "a/y.BMP", "B/1.PNG"}) {
    const fs::path p = dir / f;
    make_dirs(p.parent_path());
    const std::string ext = p.extension().string();
    const Image im = flat(4, 9);
    if (ext == ".JpEg") write_jpeg(p, im);
    else if (ext == ".BMP") write_raw(p, encode_bmp(im));
    else write_png(p, im);
  }
  write_raw(dir / "a" / "notes.txt", "not a picture");
  write_raw(dir / "a" / ".hidden.png", "ignored, hidden");
  write_raw(dir / "README.md", "a file beside the class folders: ignored");
  fill_class(dir / ".thumbnails", 1, 0);  // a hidden folder: no class
  fill_class(dir / "b" / "nested", 1, 0);  // not searched
  for (BadFiles mode : {BadFiles::Strict, BadFiles::Skip}) {
    const ImageFolderScan scan = scan_image_folder(dir, options(4, 1, mode));
    COMPARE(scan.class_names, (std::vector<std::string>{"B", "a", "b"}));
    COMPARE(names_of(scan.train.files), (std::vector<std::string>{"B/1.PNG", "a/x.JpEg", "a/y.BMP", "b/10.png", "b/2.png"}));
    COMPARE(scan.train.labels, (std::vector<int32_t>{0, 1, 1, 2, 2}));
    COMPARE(scan.class_counts(scan.train), (std::vector<int64_t>{1, 2, 2}));
    VERIFY(!scan.has_splits && !scan.has_validation && !scan.has_test);
    VERIFY(scan.validation.files.empty() && scan.test.files.empty());
    COMPARE(scan.skipped.size(), size_t(2));
    VERIFY_SKIPPED(scan.skipped, (dir / "a" / "notes.txt").string(), "not an image file (extension)");
    VERIFY_SKIPPED(scan.skipped, (dir / "b" / "nested").string(), "a folder inside a class folder");
  }
}

TEST(scan_reads_train_val_test_splits) {
  const fs::path dir = fresh();
  fill_class(dir / "train" / "cat", 3, 10);
  fill_class(dir / "train" / "dog", 2, 20);
  fill_class(dir / "train" / "eel", 1, 30);
  fill_class(dir / "val" / "dog", 1, 40);
  fill_class(dir / "test" / "cat", 2, 50);
  fill_class(dir / "test" / "eel", 1, 60);
  fill_class(dir / "extra" / "cat", 1, 0);
  write_raw(dir / "train" / "list.txt", "beside the class folders: ignored");
  const ImageFolderScan scan = scan_image_folder(dir, options());
  VERIFY(scan.has_splits && scan.has_validation && scan.has_test);
  COMPARE(scan.class_names, (std::vector<std::string>{"cat", "dog", "eel"}));
  COMPARE(scan.class_counts(scan.train), (std::vector<int64_t>{3, 2, 1}));
  COMPARE(scan.class_counts(scan.validation), (std::vector<int64_t>{0, 1, 0}));
  COMPARE(scan.class_counts(scan.test), (std::vector<int64_t>{2, 0, 1}));
  COMPARE(scan.test.labels, (std::vector<int32_t>{0, 0, 2}));
  VERIFY_SKIPPED(scan.skipped, (dir / "extra").string(), "not a split folder");

  // The datasets of a folder share one cache and read their own split.
  const ImageFolder folder = open_image_folder(dir, options());
  VERIFY(folder.validation && folder.test);
  COMPARE(folder.validation->size(), int64_t(1));
  VERIFY(folder.train->cache() == folder.test->cache());
  COMPARE(folder.test->get(2).input.to_vector()[0], 60 * (1.f / 255.f));
  COMPARE(folder.test->get(2).target.item(), 2.f);
  COMPARE(folder.test->class_names(), scan.class_names);

  // "validation" names the validation split too.
  const fs::path named = fresh();
  fill_class(named / "train" / "a", 1, 0);
  fill_class(named / "train" / "b", 1, 0);
  fill_class(named / "validation" / "b", 1, 0);
  const ImageFolder v = open_image_folder(named, options());
  VERIFY(v.validation && !v.test && v.validation->size() == 1);
}

TEST(split_rules_are_enforced) {
  const fs::path both = fresh();
  fill_class(both / "train" / "a", 1, 0);
  fill_class(both / "train" / "b", 1, 0);
  fill_class(both / "val" / "a", 1, 0);
  fill_class(both / "validation" / "a", 1, 0);
  VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(both, options()); }),
                  both.string() + ": has both a 'val' and a 'validation' folder");

  const fs::path no_train = fresh();
  fill_class(no_train / "test" / "a", 1, 0);
  fill_class(no_train / "b", 1, 0);
  VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(no_train, options()); }),
                  no_train.string() + ": has a 'test' folder but no 'train' folder");

  // A class only in test: strict refuses, naming the missing train folder; skip leaves it out.
  const fs::path only_test = fresh();
  fill_class(only_test / "train" / "a", 1, 0);
  fill_class(only_test / "train" / "b", 1, 0);
  fill_class(only_test / "test" / "c", 1, 0);
  VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(only_test, options()); }),
                  (only_test / "train" / "c").string() + ": no such folder, but other splits have class 'c'");
  const ImageFolderScan skip = scan_image_folder(only_test, options(4, 1, BadFiles::Skip));
  COMPARE(skip.class_names, (std::vector<std::string>{"a", "b"}));
  VERIFY(skip.test.files.empty());
  VERIFY_SKIPPED(skip.skipped, (only_test / "test" / "c").string(), "class 'c' has no usable pictures in train");
}

TEST(folder_level_errors_in_both_modes) {
  for (BadFiles mode : {BadFiles::Strict, BadFiles::Skip}) {
    const fs::path missing = fresh();
    VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(missing, options(4, 1, mode)); }),
                    missing.string() + ": no such folder");
    const fs::path file = write_raw(fresh(), "a file");
    VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(file, options(4, 1, mode)); }), file.string() + ": not a folder");
    const fs::path empty = fresh();
    make_dirs(empty);
    write_raw(empty / "a.png", encode_png(flat(4, 0)));
    VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(empty, options(4, 1, mode)); }),
                    empty.string() + ": no class folders");
    const fs::path one = fresh();
    fill_class(one / "cats", 2, 0);
    VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(one, options(4, 1, mode)); }),
                    one.string() + ": needs at least 2 classes, found 1: 'cats'");
  }
}

TEST(empty_class_folder_is_an_error_or_left_out) {
  const fs::path dir = fresh();
  fill_class(dir / "a", 2, 0);
  fill_class(dir / "b", 2, 10);
  make_dirs(dir / "c");
  write_raw(dir / "c" / "readme.txt", "no pictures here");
  VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(dir, options()); }),
                  (dir / "c").string() + ": no pictures (.png, .jpg, .jpeg or .bmp) in the folder of class 'c'");
  const ImageFolderScan skip = scan_image_folder(dir, options(4, 1, BadFiles::Skip));
  COMPARE(skip.class_names, (std::vector<std::string>{"a", "b"}));
  VERIFY_SKIPPED(skip.skipped, (dir / "c").string(), "class 'c' has no usable pictures in train: left out");
  VERIFY_SKIPPED(skip.skipped, (dir / "c" / "readme.txt").string(), "not an image file (extension)");

  // Left with one class: an error in skip mode too, saying which were left out.
  const fs::path two = fresh();
  fill_class(two / "a", 1, 0);
  write_raw(two / "b" / "0.png", "");
  VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(two, options(4, 1, BadFiles::Skip)); }),
                  "needs at least 2 classes, found 1: 'a' (left out for want of usable pictures: 'b')");

  // An empty class folder in val: strict refuses it, skip keeps the class and lists the folder.
  const fs::path val = fresh();
  fill_class(val / "train" / "a", 1, 0);
  fill_class(val / "train" / "b", 1, 0);
  fill_class(val / "val" / "a", 1, 0);
  make_dirs(val / "val" / "b");
  VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(val, options()); }), (val / "val" / "b").string() + ": no pictures");
  const ImageFolderScan kept = scan_image_folder(val, options(4, 1, BadFiles::Skip));
  COMPARE(kept.class_names.size(), size_t(2));
  VERIFY_SKIPPED(kept.skipped, (val / "val" / "b").string(), "no usable pictures");
}

// Files refused on a first look: strict names the file and what is wrong, skip lists it.
TEST(bad_files_at_scan_time) {
  const fs::path dir = fresh();
  fill_class(dir / "a", 2, 0);
  fill_class(dir / "b", 2, 10);
  std::string huge = encode_png(flat(4, 0));
  huge[16] = char(0x7f);
  struct Bad {
    std::string name, bytes, reason;
  };
  const std::vector<Bad> bad = {
      {"empty.png", "", "empty file (0 bytes)"},
      {"text.png", "just some text", "not a PNG, JPEG or BMP image: it starts with bytes 6a 75 73 74"},
      {"huge.png", huge, "the PNG header declares 2130706436 x 4 pixels, more than the limit"},
  };
  for (const Bad& b : bad) {
    const fs::path one = fresh();
    fs::copy(dir, one, fs::copy_options::recursive);
    const std::string path = write_raw(one / "b" / b.name, b.bytes);
    VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(one, options()); }), path + ": " + b.reason);
    const ImageFolderScan skip = scan_image_folder(one, options(4, 1, BadFiles::Skip));
    COMPARE(skip.train.files.size(), size_t(4));
    COMPARE(skip.skipped.size(), size_t(1));
    VERIFY_SKIPPED(skip.skipped, path, b.reason);
  }
}

// A directory named like a picture and a dangling link: covered whoever runs the tests.
TEST(unopenable_picture_paths) {
  const fs::path dir = fresh();
  fill_class(dir / "a", 2, 0);
  fill_class(dir / "b", 2, 10);
  make_dirs(dir / "b" / "folder.png");
  fs::create_symlink(dir / "nowhere.png", dir / "b" / "link.png");
  VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(dir, options()); }),
                  (dir / "b" / "folder.png").string() + ": is a directory, not an image file");
  fs::remove(dir / "b" / "folder.png");
  VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(dir, options()); }),
                  (dir / "b" / "link.png").string() + ": cannot open: No such file or directory");
  make_dirs(dir / "b" / "folder.png");
  const ImageFolderScan skip = scan_image_folder(dir, options(4, 1, BadFiles::Skip));
  COMPARE(skip.train.files.size(), size_t(4));
  VERIFY_SKIPPED(skip.skipped, (dir / "b" / "folder.png").string(), "is a directory");
  VERIFY_SKIPPED(skip.skipped, (dir / "b" / "link.png").string(), "cannot open");
}

TEST(unreadable_file) {
  if (::geteuid() == 0) SKIP("running as root: file permissions do not stop reading (unopenable_picture_paths covers the case)");
  const fs::path dir = fresh();
  fill_class(dir / "a", 2, 0);
  fill_class(dir / "b", 2, 10);
  const std::string path = (dir / "b" / "0.png").string();
  COMPARE(::chmod(path.c_str(), 0), 0);
  VERIFY_CONTAINS(message_of<DataError>([&] { scan_image_folder(dir, options()); }), path + ": cannot open: Permission denied");
  VERIFY_SKIPPED(scan_image_folder(dir, options(4, 1, BadFiles::Skip)).skipped, path, "cannot open: Permission denied");
  ::chmod(path.c_str(), 0644);
}

// ---- the dataset --------------------------------------------------------------------------------

TEST(get_batch_gives_pixels_over_255_and_class_targets) {
  const fs::path dir = fresh();
  fill_class(dir / "a", 2, 10);
  fill_class(dir / "b", 3, 20);
  const ImageFolder folder = open_image_folder(dir, options());
  const ImageFolderDataset& ds = *folder.train;
  COMPARE(ds.size(), int64_t(5));
  const Example b = ds.get_batch({4, 0, 4});
  COMPARE(b.input.shape(), (Shape{3, 1, 4, 4}));
  COMPARE(b.target.shape(), (Shape{3}));
  VERIFY(b.target.to_vector() == std::vector<float>({1, 0, 1}));
  const std::vector<float> v = b.input.to_vector();
  for (int i = 0; i < 16; ++i) {
    COMPARE(v[size_t(i)], 22 * (1.f / 255.f));
    COMPARE(v[size_t(16 + i)], 10 * (1.f / 255.f));
  }
  const Example one = ds.get(1);
  COMPARE(one.input.shape(), (Shape{1, 4, 4}));
  COMPARE(one.target.shape(), Shape{});
  COMPARE(one.input.to_vector()[0], 11 * (1.f / 255.f));
  COMPARE(ds.class_names(), (std::vector<std::string>{"a", "b"}));
  VERIFY_CONTAINS(message_of<IndexError>([&] { ds.get_batch({5}); }), "index 5 out of range");
  VERIFY_CONTAINS(message_of<IndexError>([&] { ds.target_batch({-1}); }), "index -1 out of range");
}

TEST(mixed_channels_become_the_chosen_count) {
  const fs::path dir = fresh();
  make_dirs(dir / "a");
  make_dirs(dir / "b");
  write_png(dir / "a" / "gray.png", flat(4, 51));
  write_png(dir / "b" / "rgb.png", image_of(4, 4, 3, [] {
              Bytes px;
              for (int i = 0; i < 16; ++i) px.insert(px.end(), {255, 0, 0});
              return px;
            }()));
  for (int64_t channels : {1, 3}) {
    const ImageFolder folder = open_image_folder(dir, options(4, channels));
    const Example b = folder.train->get_batch({0, 1});
    COMPARE(b.input.shape(), (Shape{2, channels, 4, 4}));
    const std::vector<float> v = b.input.to_vector();
    const int64_t per = channels * 16;
    COMPARE(v[0], 51 * (1.f / 255.f));                    // gray stays gray / is replicated
    COMPARE(v[size_t(per - 1)], 51 * (1.f / 255.f));
    if (channels == 1) COMPARE(v[size_t(per)], 76 * (1.f / 255.f));  // red's luma
    else VERIFY(v[size_t(per)] == 1.f && v[size_t(per + 16)] == 0.f);
  }
}

// Targets without reading a picture: after the files are gone, target_batch still answers.
TEST(target_batch_never_decodes) {
  const fs::path dir = fresh();
  fill_class(dir / "a", 3, 0);
  fill_class(dir / "b", 2, 0);
  fill_class(dir / "c", 1, 0);
  auto ds = open_image_folder(dir, options()).train;
  fs::remove_all(dir);
  VERIFY(ds->target_batch({5, 0, 3}).to_vector() == std::vector<float>({2, 0, 1}));
  const Subset subset(ds, {4, 2});
  VERIFY(subset.target_batch({0, 1, 0}).to_vector() == std::vector<float>({1, 0, 1}));
  COMPARE(ds->cache()->misses(), int64_t(0));
  VERIFY_CONTAINS(message_of<DataError>([&] { ds->get_batch({0}); }), (dir / "a" / "0.png").string() + ": cannot open");
}

TEST(cache_hits_on_a_second_read) {
  const fs::path dir = fresh();
  fill_class(dir / "a", 3, 0);
  fill_class(dir / "b", 3, 0);
  const auto ds = open_image_folder(dir, options()).train;
  const auto cache = ds->cache();
  const Example first = ds->get_batch(all_indices(6));
  COMPARE(cache->misses(), int64_t(6));
  COMPARE(cache->hits(), int64_t(0));
  COMPARE(cache->entries(), int64_t(6));
  COMPARE(cache->bytes(), 6 * (16 + DecodedImageCache::kEntryOverhead));
  const Example second = ds->get_batch(all_indices(6));
  COMPARE(cache->hits(), int64_t(6));
  COMPARE(cache->misses(), int64_t(6));
  VERIFY(first.input.to_vector() == second.input.to_vector());
}

TEST(cache_evicts_least_recently_used_within_its_bytes) {
  const int64_t entry = 100 + DecodedImageCache::kEntryOverhead;
  DecodedImageCache cache(3 * entry);
  auto picture = [] { return std::make_shared<const Image>(image_of(10, 10, 1, Bytes(100))); };
  cache.insert(1, 0, picture());
  cache.insert(1, 1, picture());
  cache.insert(1, 2, picture());
  VERIFY(cache.find(1, 0));  // now 1 is the least recently used
  cache.insert(1, 3, picture());
  VERIFY(cache.find(1, 0) && !cache.find(1, 1) && cache.find(1, 2) && cache.find(1, 3));
  VERIFY(!cache.find(2, 0));  // another owner's key
  COMPARE(cache.bytes(), 3 * entry);
  cache.insert(1, 9, std::make_shared<const Image>(image_of(40, 40, 1, Bytes(1600))));  // larger than it all
  VERIFY(!cache.find(1, 9));
  COMPARE(cache.entries(), int64_t(3));
  VERIFY(DecodedImageCache::default_capacity() > 0);
  VERIFY(DecodedImageCache::new_owner() != DecodedImageCache::new_owner());
  VERIFY_CONTAINS(message_of<ValueError>([] { DecodedImageCache(-1); }), "a capacity of -1 bytes");
}

// A dataset ten times the cache: the bytes held never pass the capacity, and the values read
// through evictions are those of a cache large enough for all.
TEST(cache_stays_within_capacity_for_a_dataset_ten_times_larger) {
  const fs::path dir = fresh();
  fill_class(dir / "a", 50, 0);
  fill_class(dir / "b", 50, 100);
  const int64_t entry = 16 + DecodedImageCache::kEntryOverhead;
  const auto small = open_image_folder(dir, options(4, 1, BadFiles::Strict, 10 * entry)).train;
  const auto large = open_image_folder(dir, options()).train;
  const Tensor want = large->get_batch(all_indices(100)).input;
  for (int epoch = 0; epoch < 3; ++epoch)
    for (int64_t i = 0; i < 100; i += 7) {
      std::vector<int64_t> batch;
      for (int64_t k = i; k < std::min<int64_t>(i + 7, 100); ++k) batch.push_back(k);
      const std::vector<float> got = small->get_batch(batch).input.to_vector();
      const std::vector<float> all = want.to_vector();
      VERIFY(std::equal(got.begin(), got.end(), all.begin() + i * 16));
      VERIFY(small->cache()->bytes() <= small->cache()->capacity());
      VERIFY(small->cache()->entries() <= 10);
    }
}

TEST(concurrent_get_batch_gives_identical_results) {
  const fs::path dir = fresh();
  for (int c = 0; c < 4; ++c) fill_class(dir / std::to_string(c), 40, uint8_t(c * 50));
  const auto reference = open_image_folder(dir, options()).train;
  const std::vector<float> want = reference->get_batch(all_indices(160)).input.to_vector();
  // A cache too small for the whole: the threads decode, insert and evict at once.
  const auto ds = open_image_folder(dir, options(4, 1, BadFiles::Strict, 30 * (16 + DecodedImageCache::kEntryOverhead))).train;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<int64_t> order = all_indices(160);
      std::shuffle(order.begin(), order.end(), std::mt19937(uint32_t(t)));
      for (int round = 0; round < 3; ++round)
        for (size_t i = 0; i < order.size(); i += 8) {
          const std::vector<int64_t> batch(order.begin() + std::ptrdiff_t(i), order.begin() + std::ptrdiff_t(i + 8));
          const std::vector<float> got = ds->get_batch(batch).input.to_vector();
          for (size_t b = 0; b < batch.size(); ++b)
            if (!std::equal(got.begin() + std::ptrdiff_t(b * 16), got.begin() + std::ptrdiff_t(b * 16 + 16),
                            want.begin() + batch[b] * 16))
              ++mismatches;
        }
    });
  for (std::thread& t : threads) t.join();
  COMPARE(mismatches.load(), 0);
  VERIFY(ds->cache()->bytes() <= ds->cache()->capacity());
}

// Files that pass the first look but not decoding: strict throws from get_batch naming the
// file; skip lists each once and reads the next decodable picture of its class instead.
TEST(undecodable_files_at_training_time) {
  const fs::path dir = fresh();
  fill_class(dir / "a", 2, 10);  // 0.png, 1.png
  fill_class(dir / "b", 1, 20);  // 0.png
  const std::string png = encode_png(flat(4, 0)), jpeg = encode_jpeg(flat(16, 0));
  std::string crc = png;
  crc[png.size() - 1] ^= 0x55;  // the IEND chunk's CRC
  const std::string cut_png = write_raw(dir / "a" / "0a.png", png.substr(0, png.size() / 2));
  const std::string cut_jpeg = write_raw(dir / "b" / "1.jpg", jpeg.substr(0, jpeg.size() / 2));
  const std::string corrupt = write_raw(dir / "b" / "2.png", crc);
  // Class a: 0.png, 0a.png (cut), 1.png; class b: 0.png, 1.jpg (cut), 2.png (corrupt).
  const ImageFolder strict = open_image_folder(dir, options());
  COMPARE(strict.train->size(), int64_t(6));
  COMPARE(message_of<DataError>([&] { strict.train->get_batch({0, 1}); }).rfind(cut_png + ": truncated PNG", 0), size_t(0));
  VERIFY_CONTAINS(message_of<DataError>([&] { strict.train->get(4); }), cut_jpeg + ": truncated JPEG");
  VERIFY_CONTAINS(message_of<DataError>([&] { strict.train->get(5); }), corrupt + ": corrupt PNG");
  VERIFY(strict.train->skipped().empty());

  const ImageFolder skip = open_image_folder(dir, options(4, 1, BadFiles::Skip));
  for (int pass = 0; pass < 2; ++pass) {
    const Example b = skip.train->get_batch(all_indices(6));
    const std::vector<float> v = b.input.to_vector();
    // Each bad one reads as the next good picture of its class (b wraps around to 0.png).
    const std::vector<int> want = {10, 11, 11, 20, 20, 20};
    for (size_t i = 0; i < want.size(); ++i) COMPARE(v[i * 16], want[i] * (1.f / 255.f));
    VERIFY(b.target.to_vector() == std::vector<float>({0, 0, 0, 1, 1, 1}));
  }
  const std::vector<SkippedFile> skipped = skip.train->skipped();
  COMPARE(skipped.size(), size_t(3));  // once each, however often read
  VERIFY_SKIPPED(skipped, cut_png, "truncated PNG");
  VERIFY_SKIPPED(skipped, cut_jpeg, "truncated JPEG");
  VERIFY_SKIPPED(skipped, corrupt, "corrupt PNG");

  // No decodable picture left in a class: an error even in skip mode.
  fs::remove(dir / "b" / "0.png");
  const ImageFolder none = open_image_folder(dir, options(4, 1, BadFiles::Skip));
  VERIFY_CONTAINS(message_of<DataError>([&] { none.train->get_batch({3}); }),
                  "class 'b': none of its 2 pictures in this split can be decoded");
}

