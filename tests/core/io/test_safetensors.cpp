// Checkpoint file I/O: atomic file replacement and the safetensors format. Round trips are
// bit-exact, the layout matches the specification byte for byte, every class of malformed
// file is rejected with an IoError that names the file (and the tensor / byte offset), and
// a failed write leaves the original file and no temporary behind.
//
// The two crosscheck* functions run only from tests/reference/safetensors_crosscheck.py
// (which sets PLEXUS_SAFETENSORS_CROSSCHECK_DIR); in a plain ctest run they are skipped.
#include "support/check.h"

#include <sys/stat.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "io/safetensors.h"
#include "ops/ops.h"
#include "tensor/generator.h"
#include "tensor/tensor.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::io;
namespace fs = std::filesystem;

namespace {

using plexus::testing::contains;
using plexus::testing::message_of;

using plexus::testing::read_all;
using plexus::testing::write_raw;

std::string u64le(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[size_t(i)] = char((v >> (8 * i)) & 0xff);
  return s;
}

std::string f32_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

// A file with the given header text (unpadded, length as given) and byte buffer.
std::string file_with(const std::string& header, const std::string& buffer = "") {
  return u64le(header.size()) + header + buffer;
}

std::set<std::string> dir_entries(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::vector<uint32_t> bits_of(const Tensor& t) {
  std::vector<uint32_t> out;
  for (float f : t.to_vector()) out.push_back(std::bit_cast<uint32_t>(f));
  return out;
}

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }

// Same shape and bit pattern (NaN payloads, signed zeros included).
void verify_bit_identical(const Tensor& got, const Tensor& expected, const std::string& what) {
  VERIFY2(got.defined(), what.c_str());
  VERIFY2(got.shape() == expected.shape(),
          what + ": shape " + to_string(got.shape()) + " vs " + to_string(expected.shape()));
  VERIFY2(bits_of(got) == bits_of(expected), what + ": bits differ");
}

// Where tests/reference/safetensors_crosscheck.py exchanges files with the crosscheck tests; empty
// when not run by it.
std::string crosscheck_dir() {
  const char* env = std::getenv("PLEXUS_SAFETENSORS_CROSSCHECK_DIR");
  return env ? env : "";
}

// The values the crosscheck script also computes: i * 0.25 - 1 (exact in float32).
Tensor ramp(const Shape& shape) {
  std::vector<float> v(size_t(plexus::numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.25f - 1.f;
  return from_vector(v, shape);
}

struct MalformedCase {
  std::string name;
  std::string bytes;
  std::vector<std::string> expect;  // substrings of the message
};

std::vector<MalformedCase> malformed_corpus() {
  const std::string w4 = f32_bytes({1.f});
  const std::string w8 = f32_bytes({1.f, 2.f});
  const std::string w12 = f32_bytes({1.f, 2.f, 3.f});
  auto entry = [](const std::string& name, const std::string& body) { return "\"" + name + "\":{" + body + "}"; };
  const std::string ok_w = entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[0,4])");
  std::string rank65 = "[1";
  for (int i = 1; i < 65; ++i) rank65 += ",1";
  rank65 += "]";
  std::string ones_array = "[1";  // a million entries
  for (int i = 1; i < 1000000; ++i) ones_array += ",1";
  ones_array += "]";
  return {
      {"empty file", "", {"0 bytes long", "too short"}},
      {"5-byte file", "\x01\x02\x03\x04\x05", {"5 bytes long", "too short"}},
      {"header length over the limit", u64le(100'000'001) + "{}      ", {"100000001", "exceeds the 100000000-byte limit", "file byte 0"}},
      {"header length 2^64-1", u64le(~uint64_t(0)) + "{}", {"18446744073709551615", "exceeds"}},
      {"header length past the end", u64le(64) + "{}      ", {"header length 64", "runs past the end of the 16-byte file"}},
      {"zero-length header", u64le(0), {"does not start with '{'"}},
      {"header not JSON", file_with("{\"w\":"), {"not valid JSON", "file byte"}},
      {"header not an object", file_with("[1, 2, 3]"), {"not a JSON object"}},
      {"header with leading space", file_with(" {}"), {"not a JSON object"}},
      {"trailing garbage after the object", file_with("{} x"), {"not valid JSON"}},
      {"invalid UTF-8", file_with("{\"\xff\":{}}"), {"not valid JSON"}},
      {"entry is an array", file_with(R"({"w":[1,2]})"), {"tensor 'w' must be an object, found an array"}},
      {"entry is a number", file_with(R"({"w":5})"), {"tensor 'w' must be an object, found a number"}},
      {"missing dtype", file_with("{" + entry("w", R"("shape":[1],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "missing 'dtype'"}},
      {"missing shape", file_with("{" + entry("w", R"("dtype":"F32","data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "missing 'shape'"}},
      {"missing data_offsets", file_with("{" + entry("w", R"("dtype":"F32","shape":[1])") + "}", w4), {"tensor 'w'", "missing 'data_offsets'"}},
      {"unsupported dtype I64", file_with("{" + entry("w", R"("dtype":"I64","shape":[1],"data_offsets":[0,8])") + "}", w8), {"tensor 'w'", "dtype 'I64' is not supported"}},
      {"unknown dtype", file_with("{" + entry("w", R"("dtype":"float32","shape":[1],"data_offsets":[0,4])") + "}", w4), {"dtype 'float32' is not supported"}},
      {"dtype not a string", file_with("{" + entry("w", R"("dtype":32,"shape":[1],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "'dtype' must be a string"}},
      {"negative dimension", file_with("{" + entry("w", R"("dtype":"F32","shape":[-1],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "'shape' entry -1 is negative"}},
      {"fractional dimension", file_with("{" + entry("w", R"("dtype":"F32","shape":[1.5],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "'shape' entry 1.5 is not an integer"}},
      {"dimension written as float", file_with("{" + entry("w", R"("dtype":"F32","shape":[1.0],"data_offsets":[0,4])") + "}", w4), {"'shape' entry 1.0 is not an integer"}},
      {"dimension beyond u64", file_with("{" + entry("w", R"("dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "not an integer (or is out of range)"}},
      {"dimension beyond i64", file_with("{" + entry("w", R"("dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "is too large"}},
      {"shape not an array", file_with("{" + entry("w", R"("dtype":"F32","shape":"1","data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "'shape' must be an array of integers, found a string"}},
      {"nested shape", file_with("{" + entry("w", R"("dtype":"F32","shape":[[1]],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "'shape' must contain only integers, found an array"}},
      {"element count overflow", file_with("{" + entry("w", R"("dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "too many elements"}},
      {"byte count overflow", file_with("{" + entry("w", R"("dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "too many elements"}},
      {"zero-size tensor with overflowing geometry", file_with("{" + entry("w", R"("dtype":"F32","shape":[0,4294967296,4294967296],"data_offsets":[0,0])") + "}"), {"tensor 'w'", "too many elements"}},
      {"deeply nested arrays", file_with("{" + entry("w", "\"dtype\":\"F32\",\"shape\":" + std::string(200000, '[')), w4), {"tensor 'w'", "'shape' must contain only integers, found an array"}},
      {"huge shape array", file_with("{" + entry("w", "\"dtype\":\"F32\",\"shape\":" + ones_array + ",\"data_offsets\":[0,4]") + "}", w4), {"tensor 'w'", "more than 64 dimensions"}},
      {"huge number", file_with("{" + entry("w", "\"dtype\":\"F32\",\"shape\":[" + std::string(100000, '7') + "],\"data_offsets\":[0,4]") + "}", w4), {"not valid JSON", "number overflow"}},
      {"megabyte-long unsupported dtype", file_with("{" + entry("w", "\"dtype\":\"" + std::string(1000000, 'X') + "\",\"shape\":[1],\"data_offsets\":[0,4]") + "}", w4), {"tensor 'w'", "(1000000 bytes) is not supported"}},
      {"65 dimensions", file_with("{" + entry("w", R"("dtype":"F32","shape":)" + rank65 + R"(,"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "more than 64 dimensions"}},
      {"data_offsets of strings", file_with("{" + entry("w", R"("dtype":"F32","shape":[1],"data_offsets":["0",4])") + "}", w4), {"tensor 'w'", "'data_offsets' must contain only integers, found a string"}},
      {"data_offsets not an array", file_with("{" + entry("w", R"("dtype":"F32","shape":[1],"data_offsets":4)") + "}", w4), {"tensor 'w'", "'data_offsets' must be an array"}},
      {"data_offsets with one number", file_with("{" + entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[4])") + "}", w4), {"tensor 'w'", "'data_offsets' must be [begin, end]"}},
      {"data_offsets with three numbers", file_with("{" + entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[0,4,8])") + "}", w4), {"tensor 'w'", "'data_offsets' must be [begin, end]"}},
      {"negative data offset", file_with("{" + entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[-4,0])") + "}", w4), {"tensor 'w'", "negative"}},
      {"fractional data offset", file_with("{" + entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[0,4.0])") + "}", w4), {"tensor 'w'", "not an integer"}},
      {"end before begin", file_with("{" + entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[8,4])") + "}", w8), {"tensor 'w'", "data_offsets [8, 4]: end is before begin"}},
      {"size does not match shape", file_with("{" + entry("w", R"("dtype":"F32","shape":[2],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "hold 4 bytes", "needs 8"}},
      {"offsets past the buffer", file_with("{" + entry("w", R"("dtype":"F32","shape":[2],"data_offsets":[0,8])") + "}", w4), {"tensor 'w'", "run past the end of the 4-byte data buffer", "file byte"}},
      {"offsets far past the buffer", file_with("{" + entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[18446744073709551000,18446744073709551004])") + "}", w4), {"tensor 'w'", "run past the end"}},
      {"overlapping tensors",
       file_with("{" + entry("a", R"("dtype":"F32","shape":[2],"data_offsets":[0,8])") + "," +
                 entry("b", R"("dtype":"F32","shape":[2],"data_offsets":[4,12])") + "}", w12),
       {"tensor 'b'", "overlaps tensor 'a'", "buffer byte 4", "file byte"}},
      {"identical offsets",
       file_with("{" + entry("a", R"("dtype":"F32","shape":[1],"data_offsets":[0,4])") + "," +
                 entry("b", R"("dtype":"F32","shape":[1],"data_offsets":[0,4])") + "}", w4),
       {"overlaps tensor 'a'"}},
      {"gap between tensors",
       file_with("{" + entry("a", R"("dtype":"F32","shape":[1],"data_offsets":[0,4])") + "," +
                 entry("b", R"("dtype":"F32","shape":[1],"data_offsets":[8,12])") + "}", w12),
       {"tensor 'b'", "gap of 4 bytes", "buffer byte 8", "file byte"}},
      {"gap at the start", file_with("{" + entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[4,8])") + "}", w8), {"tensor 'w'", "gap of 4 bytes"}},
      {"bytes after the last tensor", file_with("{" + ok_w + "}", w8), {"4 bytes at the end of the data buffer", "file byte", "belong to no tensor"}},
      {"bytes but no tensors", file_with("{}", w4), {"4 bytes at the end of the data buffer"}},
      {"__metadata__ not an object", file_with(R"({"__metadata__":"x"})"), {"__metadata__ must be an object mapping strings to strings, found a string"}},
      {"__metadata__ value a number", file_with(R"({"__metadata__":{"k":1}})"), {"__metadata__ value for key 'k' must be a string, found a number"}},
      {"__metadata__ value an object", file_with(R"({"__metadata__":{"k":{}}})"), {"__metadata__ value for key 'k' must be a string, found an object"}},
      {"duplicate tensor name", file_with("{" + ok_w + "," + ok_w + "}", w8), {"duplicate key 'w'"}},
      {"duplicate __metadata__", file_with(R"({"__metadata__":{},"__metadata__":{}})"), {"duplicate key '__metadata__'"}},
      {"duplicate metadata key", file_with(R"({"__metadata__":{"k":"a","k":"b"}})"), {"duplicate key 'k' in __metadata__"}},
      {"duplicate field in an entry", file_with("{" + entry("w", R"("dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4])") + "}", w4), {"tensor 'w'", "duplicate key 'dtype'"}},
      {"unknown field in an entry", file_with("{" + entry("w", R"("dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1)") + "}", w4), {"tensor 'w'", "unexpected key 'extra'"}},
  };
}

// The suite's temporary folder, removed at exit.
const fs::path& dir() {
  static const testing::TempDir tmp;
  return tmp.path();
}

// A fresh empty subdirectory per test, so that directory listings are exact.
fs::path fresh_dir(const char* name) {
  const fs::path d = dir() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

// ---- atomic file replacement -------------------------------------------------------

TEST(atomicWriteCreatesAndReplaces) {
  const fs::path d = fresh_dir("atomic_replace");
  const fs::path p = d / "file.bin";
  write_file_atomically(p, std::string_view("first"));
  COMPARE(read_all(p), std::string("first"));
  write_file_atomically(p, [](std::ostream& os) {
    os << "second ";
    const std::string big(300000, 'x');  // larger than the stream's buffer
    os.write(big.data(), std::streamsize(big.size()));
  });
  const std::string got = read_all(p);
  COMPARE(got.size(), size_t(7 + 300000));
  VERIFY(got.starts_with("second x"));
  COMPARE(dir_entries(d), (std::set<std::string>{"file.bin"}));
}

TEST(atomicWriteKeepsPermissions) {
  const fs::path d = fresh_dir("atomic_perms");
  const fs::path p = d / "file.bin";
  write_raw(p, "old");
  COMPARE(::chmod(p.c_str(), 0640), 0);
  write_file_atomically(p, std::string_view("new"));
  struct stat st;
  COMPARE(::stat(p.c_str(), &st), 0);
  COMPARE(int(st.st_mode & 07777), 0640);
  COMPARE(read_all(p), std::string("new"));
}

TEST(atomicWriteCallbackThrowsKeepsOriginal) {
  const fs::path d = fresh_dir("atomic_throw");
  const fs::path p = d / "model.safetensors";
  write_raw(p, "original content");
  const std::string msg = message_of<std::runtime_error>([&] {
    write_file_atomically(p, [](std::ostream& os) {
      const std::string chunk(200000, 'y');  // really reaches the temporary file
      os.write(chunk.data(), std::streamsize(chunk.size()));
      throw std::runtime_error("boom midway");
    });
  });
  COMPARE(msg, std::string("boom midway"));  // the callback's own exception, unchanged
  COMPARE(read_all(p), std::string("original content"));
  COMPARE(dir_entries(d), (std::set<std::string>{"model.safetensors"}));

  // Same for a target that did not exist: nothing at all is left behind.
  const fs::path q = d / "new.bin";
  VERIFY(contains(message_of<std::runtime_error>([&] {
                    write_file_atomically(q, [](std::ostream& os) {
                      os << "partial";
                      throw std::runtime_error("boom");
                    });
                  }),
                  "boom"));
  VERIFY(!fs::exists(q));
  COMPARE(dir_entries(d), (std::set<std::string>{"model.safetensors"}));
}

TEST(atomicWriteIntoMissingDirectory) {
  const fs::path p = dir() / "no" / "such" / "dir" / "model.safetensors";
  const std::string msg = message_of<IoError>([&] { write_file_atomically(p, std::string_view("x")); });
  VERIFY2(contains(msg, p.string()), msg.c_str());
  VERIFY2(contains(msg, "No such file or directory"), msg.c_str());
  VERIFY(!fs::exists(dir() / "no"));
  // save_safetensors goes through the same path.
  const std::string msg2 = message_of<IoError>([&] { save_safetensors(p, {{"w", ones({2})}}); });
  VERIFY2(contains(msg2, p.string()) && contains(msg2, "No such file or directory"), msg2.c_str());
}

TEST(atomicWriteOverDirectoryFails) {
  const fs::path d = fresh_dir("atomic_dir_target");
  fs::create_directory(d / "sub");
  const std::string msg = message_of<IoError>([&] { write_file_atomically(d / "sub", std::string_view("x")); });
  VERIFY2(contains(msg, (d / "sub").string()), msg.c_str());
  VERIFY2(contains(msg, "rename"), msg.c_str());
  COMPARE(dir_entries(d), (std::set<std::string>{"sub"}));  // temporary removed
  VERIFY(fs::is_directory(d / "sub"));
  const std::string msg2 = message_of<IoError>([&] { write_file_atomically(d / "", std::string_view("x")); });
  VERIFY2(contains(msg2, "not a file path"), msg2.c_str());
}

// ---- safetensors: writing and round trips ------------------------------------------

TEST(exactLayoutOfATinyFile) {
  const NamedTensors tensors = {{"a", from_vector({1.f, 2.f}, {2})}, {"b", scalar(0.5f)}};
  const SafetensorsMetadata meta = {{"format", "pt"}};
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[],"data_offsets":[8,12]}})"
      "      ";  // 138 bytes of JSON padded with spaces to 144
  COMPARE(header.size(), size_t(144));
  const std::string expected = std::string("\x90\0\0\0\0\0\0\0", 8) + header +
                               std::string("\x00\x00\x80\x3f" "\x00\x00\x00\x40" "\x00\x00\x00\x3f", 12);
  COMPARE(serialize_safetensors(tensors, meta), expected);
  const fs::path p = dir() / "tiny.safetensors";
  save_safetensors(p, tensors, meta);
  COMPARE(read_all(p), expected);

  // No metadata: "__metadata__" is left out; no tensors at all: "{}" padded to 8.
  COMPARE(serialize_safetensors({{"x", scalar(1.f)}}),
          u64le(56) + R"({"x":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})" + "   " + f32_bytes({1.f}));
  COMPARE(serialize_safetensors({}), u64le(8) + "{}      ");
}

TEST(roundTripIsBitExact) {
  Generator gen(1234);
  const std::vector<float> specials = {
      from_bits(0x7fc12345u),  // quiet NaN with payload
      from_bits(0xffc00001u),  // negative NaN
      -0.f, 0.f, INFINITY, -INFINITY,
      from_bits(0x00000001u),  // smallest subnormal
      std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(), 1.f / 3.f};
  const Tensor base = randn({4, 5}, &gen);
  Tensor with_grad = randn({3, 2}, &gen);
  with_grad.requires_grad_(true);
  NamedTensors tensors = {
      {"matrix", randn({3, 4}, &gen)},
      {"scalar", scalar(-2.75f)},
      {"empty", zeros({0, 3})},
      {"empty_middle", zeros({2, 0, 5})},
      {"specials", from_vector(specials, {int64_t(specials.size())})},
      {"transposed", base.t()},                                  // non-contiguous
      {"row_slice", base.narrow(0, 1, 2)},                       // contiguous, storage offset
      {"column_slice", base.narrow(1, 1, 3)},                    // non-contiguous with offset
      {"broadcast", randn({1, 3}, &gen).expand({4, 3})},         // stride 0
      {"permuted", randn({2, 3, 4}, &gen).permute({2, 0, 1})},
      {"requires_grad_view", with_grad.t()},
      {"layer.0.weight", randn({7}, &gen)},
      {"unicode_名前", ones({1, 1})},
  };
  VERIFY(!tensors[5].second.is_contiguous() && !tensors[7].second.is_contiguous());
  const SafetensorsMetadata meta = {{"format", "pt"}, {"epoch", "12"}, {"note", "ünïcödé \"quoted\"\n"}, {"", ""}};
  const fs::path p = dir() / "roundtrip.safetensors";
  save_safetensors(p, tensors, meta);

  const SafetensorsFile f = load_safetensors(p);
  COMPARE(f.tensors.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    COMPARE(f.tensors[i].first, tensors[i].first);  // file order = save order
    const Tensor& t = f.tensors[i].second;
    verify_bit_identical(t, tensors[i].second, tensors[i].first);
    // (Tensor::is_contiguous() is false for some zero-size shapes such as [2, 0, 5].)
    if (t.numel() > 0) VERIFY(t.is_contiguous());
    VERIFY(t.strides() == contiguous_strides(t.shape()));
    VERIFY(!t.requires_grad());
    VERIFY(t.device().is_cpu());
  }
  COMPARE(f.metadata, meta);
  VERIFY(f.find("transposed") && f.find("transposed")->shape() == (Shape{5, 4}));
  VERIFY(f.find("nope") == nullptr);

  // The header alone describes the same thing, back to back.
  const SafetensorsHeader h = read_safetensors_header(p);
  COMPARE(h.entries.size(), tensors.size());
  COMPARE(h.metadata, meta);
  COMPARE(h.buffer_start() % 8, uint64_t(0));
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsEntry& e = h.entries[i];
    COMPARE(e.name, tensors[i].first);
    COMPARE(e.dtype, std::string("F32"));
    VERIFY(e.shape == tensors[i].second.shape());
    COMPARE(e.data_begin, offset);
    offset += uint64_t(tensors[i].second.numel()) * 4;
    COMPARE(e.data_end, offset);
  }
  COMPARE(h.file_size, h.buffer_start() + offset);
  COMPARE(uint64_t(fs::file_size(p)), h.file_size);
  VERIFY(h.find("scalar") && h.find("scalar")->shape.empty());
}

TEST(emptyFileRoundTrip) {
  const fs::path p = dir() / "nothing.safetensors";
  save_safetensors(p, {});
  const SafetensorsFile f = load_safetensors(p);
  VERIFY(f.tensors.empty());
  VERIFY(f.metadata.empty());
}

TEST(fileOrderFollowsDataOffsetsNotHeaderOrder) {
  // Writers may order header keys in any way (the reference one sorts); the data order
  // decides. Zero-size tensors sit at their offset.
  const std::string header =
      R"({"z":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},)"
      R"("__metadata__":{"k":"v"},)"
      R"("a":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})";
  const fs::path p = dir() / "order.safetensors";
  write_raw(p, file_with(header, f32_bytes({1.f, 2.f, 3.f})));
  const SafetensorsFile f = load_safetensors(p);
  COMPARE(f.tensors.size(), size_t(3));
  COMPARE(f.tensors[0].first, std::string("z"));
  COMPARE(f.tensors[1].first, std::string("a"));
  COMPARE(f.tensors[2].first, std::string("b"));
  COMPARE(f.tensors[2].second.to_vector(), (std::vector<float>{2.f, 3.f}));
  COMPARE(f.metadata.at("k"), std::string("v"));
  // Header padding of spaces (and other JSON whitespace) is fine, unpadded too.
  write_raw(p, file_with(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})" "   \n\t ", f32_bytes({7.f})));
  COMPARE(load_safetensors(p).tensors.at(0).second.item(), 7.f);
}

TEST(otherDtypesAreListedWhenAsked) {
  // A PyTorch state dict's BatchNorm counter is I64: rejected by default, listed (layout
  // checked, not loaded) with OtherDtypes::List, every entry keeping its header place.
  const std::string header =
      R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("n":{"dtype":"I64","shape":[],"data_offsets":[8,16]},)"
      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}})";
  const fs::path p = dir() / "counter.safetensors";
  write_raw(p, file_with(header, f32_bytes({1.f, 2.f}) + u64le(7) + f32_bytes({3.f})));
  VERIFY(contains(message_of<IoError>([&] { load_safetensors(p); }), "dtype 'I64' is not supported"));
  const SafetensorsFile f = load_safetensors(p, OtherDtypes::List);
  COMPARE(f.tensors.size(), size_t(2));
  COMPARE(f.tensors[1].first, std::string("b"));
  COMPARE(f.tensors[1].second.item(), 3.f);
  COMPARE(f.not_loaded.size(), size_t(1));
  COMPARE(f.not_loaded[0].name, std::string("n"));
  COMPARE(f.not_loaded[0].dtype, std::string("I64"));
  COMPARE(f.not_loaded[0].header_index, size_t(1));
  const SafetensorsHeader h = read_safetensors_header(p, OtherDtypes::List);
  COMPARE(h.find("b")->header_index, size_t(2));
  // A dtype the format does not define stays an error; a listed one must still fit its bytes.
  write_raw(p, file_with(R"({"n":{"dtype":"I65","shape":[],"data_offsets":[0,8]}})", u64le(7)));
  VERIFY(contains(message_of<IoError>([&] { load_safetensors(p, OtherDtypes::List); }), "dtype 'I65' is not supported"));
  write_raw(p, file_with(R"({"n":{"dtype":"I64","shape":[2],"data_offsets":[0,8]}})", u64le(7)));
  VERIFY(contains(message_of<IoError>([&] { load_safetensors(p, OtherDtypes::List); }), "needs 16"));
}

TEST(convertsHalfBfloatAndDouble) {
  // F16: 1, -2, 65504 (max), 2^-24 (smallest subnormal), inf, -0, quiet NaN.
  const uint16_t h[] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x8000, 0x7e00};
  // BF16: 1, -3, a subnormal, -inf.
  const uint16_t b[] = {0x3f80, 0xc040, 0x0001, 0xff80};
  // F64: 1, 0.1, just above FLT_MAX (rounds to FLT_MAX), 2^128-2^103 (rounds to inf),
  // -1e300 (-inf), 1e-50 (0).
  const double d[] = {1.0, 0.1, 3.4028235e38, 340282356779733661637539395458142568448.0, -1e300, 1e-50};
  std::string buf(reinterpret_cast<const char*>(d), sizeof d);
  buf += std::string(reinterpret_cast<const char*>(h), sizeof h);
  buf += std::string(reinterpret_cast<const char*>(b), sizeof b);
  const std::string header = R"({"d":{"dtype":"F64","shape":[6],"data_offsets":[0,48]},)"
                             R"("h":{"dtype":"F16","shape":[7],"data_offsets":[48,62]},)"
                             R"("b":{"dtype":"BF16","shape":[2,2],"data_offsets":[62,70]}})";
  const fs::path p = dir() / "dtypes.safetensors";
  write_raw(p, file_with(header, buf));
  const SafetensorsHeader hd = read_safetensors_header(p);
  COMPARE(hd.entries.at(0).dtype, std::string("F64"));
  COMPARE(hd.entries.at(1).dtype, std::string("F16"));
  COMPARE(hd.entries.at(2).dtype, std::string("BF16"));
  const SafetensorsFile f = load_safetensors(p);
  const float fmax = std::numeric_limits<float>::max();
  COMPARE(bits_of(*f.find("d")), bits_of(from_vector({1.f, 0.1f, fmax, INFINITY, -INFINITY, 0.f}, {6})));
  COMPARE(bits_of(*f.find("h")),
          bits_of(from_vector({1.f, -2.f, 65504.f, std::ldexp(1.f, -24), INFINITY, -0.f, from_bits(0x7fc00000u)},
                              {7})));
  COMPARE(bits_of(*f.find("b")), bits_of(from_vector({1.f, -3.f, from_bits(0x00010000u), -INFINITY}, {2, 2})));
  VERIFY(f.find("b")->shape() == (Shape{2, 2}));
}

TEST(saveRejectsBadArguments) {
  const fs::path d = fresh_dir("save_args");
  const fs::path p = d / "model.safetensors";
  write_raw(p, "keep me");
  const std::string dup = message_of<ValueError>([&] { save_safetensors(p, {{"w", ones({2})}, {"b", ones({1})}, {"w", ones({3})}}); });
  VERIFY2(contains(dup, "duplicate tensor name 'w'") && contains(dup, p.string()), dup.c_str());
  VERIFY(contains(message_of<ValueError>([&] { save_safetensors(p, {{"__metadata__", ones({2})}}); }), "reserved"));
  VERIFY(contains(message_of<ValueError>([&] { save_safetensors(p, {{"w", Tensor()}}); }), "tensor 'w' is undefined"));
  VERIFY(contains(message_of<ValueError>([&] { save_safetensors(p, {{"bad\xff", ones({1})}}); }), "UTF-8"));
  VERIFY(contains(message_of<ValueError>([&] { save_safetensors(p, {{"w", ones({1})}}, {{"k", "\xfe"}}); }), "UTF-8"));
  COMPARE(read_all(p), std::string("keep me"));
  COMPARE(dir_entries(d), (std::set<std::string>{"model.safetensors"}));
}

// ---- safetensors: hostile input ---------------------------------------------------

TEST(malformedFilesAreRejected) {
  const fs::path d = fresh_dir("malformed");
  int i = 0;
  for (const MalformedCase& c : malformed_corpus()) {
    const fs::path p = d / ("case" + std::to_string(i++) + ".safetensors");
    write_raw(p, c.bytes);
    for (int pass = 0; pass < 2; ++pass) {
      const std::string msg = pass == 0 ? message_of<IoError>([&] { load_safetensors(p); })
                                        : message_of<IoError>([&] { read_safetensors_header(p); });
      const std::string context = c.name + ": " + msg;
      VERIFY2(contains(msg, "'" + p.string() + "'"), context.c_str());
      for (const std::string& part : c.expect) VERIFY2(contains(msg, part), (context + "  [expected: " + part + "]").c_str());
      VERIFY2(msg.size() < 1000, context.substr(0, 2000).c_str());  // hostile tokens are not echoed in full
    }
  }
}

TEST(missingAndNonRegularFiles) {
  const fs::path p = dir() / "does_not_exist.safetensors";
  const std::string msg = message_of<IoError>([&] { load_safetensors(p); });
  VERIFY2(contains(msg, p.string()) && contains(msg, "No such file or directory"), msg.c_str());
  const fs::path d = fresh_dir("a_directory.safetensors");
  const std::string msg2 = message_of<IoError>([&] { load_safetensors(d); });
  VERIFY2(contains(msg2, d.string()) && contains(msg2, "not a regular file"), msg2.c_str());
}

TEST(truncatedAtEveryByteIsRejected) {
  Generator gen(7);
  const std::string good = serialize_safetensors(
      {{"w", randn({2, 3}, &gen)}, {"s", scalar(1.f)}, {"e", zeros({0})}, {"b", randn({3}, &gen)}}, {{"format", "pt"}});
  const fs::path p = dir() / "truncated.safetensors";
  write_raw(p, good);
  COMPARE(load_safetensors(p).tensors.size(), size_t(4));
  for (size_t n = 0; n < good.size(); ++n) {
    write_raw(p, good.substr(0, n));
    const std::string msg = message_of<IoError>([&] { load_safetensors(p); });
    VERIFY2(contains(msg, p.string()), (std::to_string(n) + " bytes: " + msg).c_str());
  }
  write_raw(p, good + "x");  // one byte too many
  VERIFY(contains(message_of<IoError>([&] { load_safetensors(p); }), "belong to no tensor"));
}

TEST(mutatedFilesNeverCrash) {
  // Every byte of a small valid file replaced by a few interesting values: the loader
  // must either accept the result or throw a plexus error (ASan/UBSan build: no crash).
  const std::string good =
      serialize_safetensors({{"w", from_vector({1.f, 2.f, 3.f, 4.f}, {2, 2})}, {"s", scalar(5.f)}}, {{"k", "v"}});
  const fs::path p = dir() / "mutated.safetensors";
  const unsigned char values[] = {0x00, 0x01, 0x20, '"', '{', '[', '-', '9', ',', 0x7f, 0xff};
  int accepted = 0, rejected = 0;
  for (size_t pos = 0; pos < good.size(); ++pos) {
    for (unsigned char v : values) {
      std::string bytes = good;
      if (bytes[pos] == char(v)) continue;
      bytes[pos] = char(v);
      write_raw(p, bytes);
      try {
        load_safetensors(p);
        ++accepted;
      } catch (const IoError&) {
        ++rejected;
      } catch (const std::exception& e) {
        FAIL("byte " + std::to_string(pos) + " -> " + std::to_string(v) + ": unexpected exception " + e.what());
      }
    }
  }
  VERIFY(rejected > 0 && accepted > 0);  // data bytes may change freely
}

TEST(randomHeadersNeverCrash) {
  // Headers generated from the format's grammar with random deviations (wrong types,
  // missing / repeated fields, odd numbers, perturbed offsets, buffer size off by a few
  // bytes). Each load must succeed or throw IoError; both outcomes must occur.
  Generator gen(99);
  auto pick = [&](int n) { return int(gen.next_u64() % uint64_t(n)); };
  auto chance = [&](int percent) { return pick(100) < percent; };
  auto odd_value = [&]() -> std::string {
    const char* v[] = {"null", "true", "-1", "1.5", "1e3", "\"x\"", "[]", "{}", "[[1]]", "18446744073709551616", "{\"a\":1}"};
    return v[pick(11)];
  };
  const fs::path p = dir() / "random_header.safetensors";
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string h = "{";
    uint64_t offset = 0;
    const int n = pick(4);
    for (int i = 0; i < n; ++i) {
      if (i) h += ",";
      if (chance(15)) {
        h += R"("__metadata__":{"k":)" + (chance(70) ? std::string("\"v\"") : odd_value()) + "}";
        continue;
      }
      h += "\"t" + std::to_string(chance(90) ? i : 0) + "\":";
      if (chance(5)) { h += odd_value(); continue; }
      const char* dtypes[] = {"F32", "F16", "BF16", "F64", "I8", ""};
      const int dt = chance(85) ? pick(4) : 4 + pick(2);
      const uint64_t esize = dt == 0 ? 4 : dt == 3 ? 8 : dt < 3 ? 2 : 1;
      Shape shape;
      for (int r = pick(4); r > 0; --r) shape.push_back(pick(4));
      uint64_t bytes = uint64_t(plexus::numel(shape)) * esize;
      std::vector<std::string> fields;
      if (!chance(5)) fields.push_back(std::string("\"dtype\":") + (chance(95) ? "\"" + std::string(dtypes[dt]) + "\"" : odd_value()));
      if (!chance(5)) {
        std::string sh = "[";
        for (size_t k = 0; k < shape.size(); ++k) sh += (k ? "," : "") + (chance(97) ? std::to_string(shape[k]) : odd_value());
        fields.push_back("\"shape\":" + (chance(97) ? sh + "]" : odd_value()));
      }
      if (!chance(5)) {
        uint64_t b = offset, e = offset + bytes;
        if (chance(10)) b += uint64_t(pick(9)) - 4;
        if (chance(10)) e += uint64_t(pick(9)) - 4;
        fields.push_back("\"data_offsets\":" + (chance(97) ? "[" + std::to_string(b) + "," + std::to_string(e) + "]" : odd_value()));
      }
      if (chance(3)) fields.push_back(fields.empty() ? "\"extra\":1" : fields.front());
      for (size_t k = 0; k < fields.size(); ++k) {
        const size_t j = size_t(pick(int(fields.size())));
        std::swap(fields[k], fields[j]);
      }
      h += "{";
      for (size_t k = 0; k < fields.size(); ++k) h += (k ? "," : "") + fields[k];
      h += "}";
      offset += bytes;
    }
    h += "}";
    if (chance(5)) h.erase(size_t(pick(int(h.size()))), 1);
    uint64_t buffer = offset;
    if (chance(10)) buffer += uint64_t(pick(9)) - 4;
    if (int64_t(buffer) < 0) buffer = 0;
    write_raw(p, file_with(h, std::string(buffer, '\x3f')));
    try {
      load_safetensors(p);
      ++accepted;
    } catch (const IoError& e) {
      ++rejected;
      VERIFY2(contains(e.what(), p.string()), e.what());
    } catch (const std::exception& e) {
      FAIL("unexpected exception for header " + h + ": " + e.what());
    }
  }
  VERIFY2(accepted > 100 && rejected > 100,
          "accepted " + std::to_string(accepted) + ", rejected " + std::to_string(rejected));
}

// ---- cross-check with tests/reference/safetensors_crosscheck.py -------------------

TEST(crosscheckWrite) {
  const std::string env = crosscheck_dir();
  if (env.empty()) SKIP("run by tests/reference/safetensors_crosscheck.py");
  const fs::path d(env);
  Generator gen(2024);
  const Tensor random = randn({2, 3, 4}, &gen);
  const std::vector<float> specials = {NAN, -0.f, INFINITY, -INFINITY, from_bits(1), std::numeric_limits<float>::max()};
  save_safetensors(d / "plexus_written.safetensors",
                   {{"matrix", ramp({3, 4})},
                    {"transposed", ramp({3, 4}).t()},
                    {"scalar", scalar(3.5f)},
                    {"empty", zeros({0, 3})},
                    {"random", random.permute({2, 0, 1})},
                    {"specials", from_vector(specials, {2, 3})}},
                   {{"format", "pt"}, {"producer", "plexus"}});
  // The random values through a channel independent of our writer: raw float32 LE.
  const Tensor expected = random.permute({2, 0, 1}).contiguous();
  std::ofstream raw(d / "plexus_random_permuted.f32", std::ios::binary);
  raw.write(reinterpret_cast<const char*>(expected.data()), std::streamsize(expected.numel() * 4));
  VERIFY(raw.good());
}

TEST(crosscheckRead) {
  const std::string env = crosscheck_dir();
  if (env.empty()) SKIP("run by tests/reference/safetensors_crosscheck.py");
  const fs::path p = fs::path(env) / "python_written.safetensors";
  VERIFY2(fs::exists(p), p.c_str());
  const SafetensorsHeader h = read_safetensors_header(p);
  const SafetensorsFile f = load_safetensors(p);
  // The script lays the data out in this order (header keys in a different order).
  const std::vector<std::string> order = {"f64", "f64_as_f32", "f32_matrix", "f32_transposed", "f32_scalar",
                                          "f32_empty", "f16_as_f32", "bf16_as_f32", "bf16", "f16"};
  COMPARE(f.tensors.size(), order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    COMPARE(f.tensors[i].first, order[i]);
    COMPARE(h.entries[i].name, order[i]);
  }
  COMPARE(h.find("f64")->dtype, std::string("F64"));
  COMPARE(h.find("f16")->dtype, std::string("F16"));
  COMPARE(h.find("bf16")->dtype, std::string("BF16"));
  verify_bit_identical(*f.find("f32_matrix"), ramp({3, 4}), "f32_matrix");
  verify_bit_identical(*f.find("f32_transposed"), ramp({3, 4}).t(), "f32_transposed");
  verify_bit_identical(*f.find("f32_scalar"), scalar(3.5f), "f32_scalar");
  verify_bit_identical(*f.find("f32_empty"), zeros({0, 3}), "f32_empty");
  // Conversions against torch's own .float().
  verify_bit_identical(*f.find("f16"), *f.find("f16_as_f32"), "f16");
  verify_bit_identical(*f.find("bf16"), *f.find("bf16_as_f32"), "bf16");
  verify_bit_identical(*f.find("f64"), *f.find("f64_as_f32"), "f64");
  COMPARE(f.metadata, (SafetensorsMetadata{{"format", "pt"}, {"producer", "python"}}));
}

