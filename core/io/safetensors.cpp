#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_set>

#include "autograd/grad_mode.h"
#include "io/atomic_file.h"
#include "util/error.h"

namespace plexus::io {

namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this build assumes a little-endian host");
static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559);

const SafetensorsEntry* SafetensorsHeader::find(std::string_view name) const {
  for (const SafetensorsEntry& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

const Tensor* SafetensorsFile::find(std::string_view name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// Writing

namespace {

constexpr const char* kMetadataKey = "__metadata__";

// A name or value for an error message; a hostile file's megabyte-long keys are shortened.
std::string in_quotes(std::string_view s) {
  constexpr size_t kMax = 200;
  std::string r;
  r.reserve(std::min(s.size(), kMax) + 40);
  r.push_back('\'');
  r.append(s.substr(0, kMax));
  if (s.size() > kMax) r += "...' (" + std::to_string(s.size()) + " bytes)";
  else r.push_back('\'');
  return r;
}

// Validates the arguments and returns the padded header text.
std::string make_header(const NamedTensors& tensors, const SafetensorsMetadata& metadata, const std::string& where) {
  using ojson = nlohmann::ordered_json;
  ojson root = ojson::object();
  if (!metadata.empty()) {
    ojson meta = ojson::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    root[kMetadataKey] = std::move(meta);
  }
  std::unordered_set<std::string_view> seen;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == kMetadataKey)
      throw ValueError(where + "the tensor name '__metadata__' is reserved by the format");
    if (!seen.insert(name).second) throw ValueError(where + "duplicate tensor name " + in_quotes(name));
    if (!t.defined()) throw ValueError(where + "tensor " + in_quotes(name) + " is undefined");
    const uint64_t bytes = uint64_t(t.numel()) * sizeof(float);
    root[name] = ojson{{"dtype", "F32"}, {"shape", t.shape()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text;
  try {
    text = root.dump();  // compact, like the reference writer
  } catch (const nlohmann::json::type_error& e) {  // invalid UTF-8 in a name or metadata
    throw ValueError(where + "tensor names and metadata must be valid UTF-8 (" + e.what() + ")");
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

void write_u64_le(std::ostream& os, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = char((v >> (8 * i)) & 0xff);
  os.write(b, 8);
}

void write_all(std::ostream& os, const std::string& header, const NamedTensors& tensors) {
  write_u64_le(os, header.size());
  os.write(header.data(), std::streamsize(header.size()));
  NoGradGuard no_grad;
  for (const auto& [name, t] : tensors) {
    if (t.numel() == 0) continue;
    const Tensor h = t.device().is_cpu() ? t : t.to(Device::cpu());  // device tensors are written from a host copy
    const Tensor c = h.is_contiguous() ? h : h.detach().contiguous();
    os.write(reinterpret_cast<const char*>(c.data()), std::streamsize(c.numel() * int64_t(sizeof(float))));
  }
}

}  // namespace

void save_safetensors(const fs::path& path, const NamedTensors& tensors, const SafetensorsMetadata& metadata) {
  const std::string header = make_header(tensors, metadata, "save_safetensors('" + path.string() + "'): ");
  write_file_atomically(path, [&](std::ostream& os) { write_all(os, header, tensors); });
}

std::string serialize_safetensors(const NamedTensors& tensors, const SafetensorsMetadata& metadata) {
  const std::string header = make_header(tensors, metadata, "serialize_safetensors: ");
  std::ostringstream os(std::ios::binary);
  write_all(os, header, tensors);
  return std::move(os).str();
}

// ---------------------------------------------------------------------------------------
// Reading

namespace {

class Reader {
 public:
  explicit Reader(const fs::path& path) : path_(path), where_("safetensors file '" + path.string() + "': ") {
    do fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) throw IoError("cannot open safetensors file '" + path.string() + "': " + errno_text(errno));
    struct stat st;
    if (::fstat(fd_, &st) != 0) fail("cannot stat: " + errno_text(errno));
    if (!S_ISREG(st.st_mode)) fail("not a regular file");
    size_ = uint64_t(st.st_size);
  }
  ~Reader() { ::close(fd_); }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  uint64_t size() const { return size_; }
  const std::string& where() const { return where_; }
  [[noreturn]] void fail(const std::string& what) const { throw IoError(where_ + what); }

  // Reads exactly n bytes at `offset` (the caller has checked them against size()).
  void read(void* dst, uint64_t n, uint64_t offset) const {
    char* p = static_cast<char*>(dst);
    while (n > 0) {
      const ssize_t r = ::pread(fd_, p, std::min<uint64_t>(n, uint64_t(1) << 30), off_t(offset));
      if (r < 0) {
        if (errno == EINTR) continue;
        fail("read error at file byte " + std::to_string(offset) + ": " + errno_text(errno));
      }
      if (r == 0) fail("unexpected end of file at byte " + std::to_string(offset) + " (was the file truncated while being read?)");
      p += r;
      n -= uint64_t(r);
      offset += uint64_t(r);
    }
  }

  static std::string errno_text(int e) { return std::generic_category().message(e); }

 private:
  fs::path path_;
  std::string where_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// A tensor entry while its fields are being read.
struct PendingEntry {
  SafetensorsEntry entry;
  bool has_dtype = false, has_shape = false, has_offsets = false;
  std::vector<uint64_t> offsets;
};

// SAX handler that builds the header directly (no JSON DOM: memory stays proportional to
// what is kept) and enforces the structure as it goes, so a hostile header is rejected at
// the first token that cannot belong to a safetensors header.
class HeaderSax {
 public:
  using json = nlohmann::json;

  explicit HeaderSax(const Reader& r) : r_(r) {}

  std::vector<SafetensorsEntry> entries;
  SafetensorsMetadata metadata;

  bool null() { return scalar("null"); }
  bool boolean(bool) { return scalar("a boolean"); }
  bool number_integer(json::number_integer_t v) {
    if (v < 0) {
      if (state_ == State::Array) integer_error(std::to_string(v), "is negative");
      return scalar("a number");
    }
    return number_unsigned(json::number_unsigned_t(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (state_ != State::Array) return scalar("a number");
    // Bounded here, so that a huge array cannot make us allocate.
    if (field_ == Field::Shape) {
      if (v > uint64_t(std::numeric_limits<int64_t>::max())) integer_error(std::to_string(v), "is too large");
      if (pending_.entry.shape.size() == kSafetensorsMaxRank)
        fail_entry("'shape' has more than " + std::to_string(kSafetensorsMaxRank) + " dimensions");
      pending_.entry.shape.push_back(int64_t(v));
    } else {
      if (pending_.offsets.size() == 2) fail_entry("'data_offsets' must be [begin, end], found more than 2 numbers");
      pending_.offsets.push_back(v);
    }
    return true;
  }
  bool number_float(json::number_float_t, const std::string& text) {
    if (state_ == State::Array) integer_error(text, "is not an integer (or is out of range)");
    return scalar("a number");
  }
  bool string(std::string& s) {
    if (state_ == State::MetadataValue) {
      metadata.emplace(std::move(key_), std::move(s));
      state_ = State::Metadata;
      return true;
    }
    if (state_ == State::FieldValue && field_ == Field::Dtype) {
      pending_.entry.dtype = std::move(s);
      pending_.has_dtype = true;
      state_ = State::Entry;
      return true;
    }
    return scalar("a string");
  }
  bool binary(json::binary_t&) { return scalar("binary data"); }

  bool start_object(std::size_t) {
    switch (state_) {
      case State::Start: state_ = State::Root; return true;
      case State::RootValue:
        if (key_ == kMetadataKey) {
          state_ = State::Metadata;
        } else {
          pending_ = PendingEntry{};
          pending_.entry.name = std::move(key_);
          state_ = State::Entry;
        }
        return true;
      default: return container("an object");
    }
  }
  bool key(std::string& k) {
    if (state_ == State::Root) {
      if (!root_keys_.insert(k).second) r_.fail("duplicate key " + in_quotes(k) + " in the header");
      key_ = std::move(k);
      state_ = State::RootValue;
    } else if (state_ == State::Metadata) {
      if (metadata.count(k)) r_.fail("duplicate key " + in_quotes(k) + " in __metadata__");
      key_ = std::move(k);
      state_ = State::MetadataValue;
    } else {  // State::Entry
      if (k == "dtype") {
        field_ = Field::Dtype;
      } else if (k == "shape") {
        field_ = Field::Shape;
      } else if (k == "data_offsets") {
        field_ = Field::Offsets;
      } else {
        fail_entry("unexpected key " + in_quotes(k) + " (expected dtype, shape and data_offsets)");
      }
      if (field_seen()) fail_entry("duplicate key " + in_quotes(k));
      state_ = State::FieldValue;
    }
    return true;
  }
  bool end_object() {
    if (state_ == State::Metadata) {
      state_ = State::Root;
    } else if (state_ == State::Entry) {
      if (!pending_.has_dtype) fail_entry("missing 'dtype'");
      if (!pending_.has_shape) fail_entry("missing 'shape'");
      if (!pending_.has_offsets) fail_entry("missing 'data_offsets'");
      if (pending_.offsets.size() != 2)
        fail_entry("'data_offsets' must be [begin, end], found " + std::to_string(pending_.offsets.size()) +
                   (pending_.offsets.size() == 1 ? " number" : " numbers"));
      pending_.entry.data_begin = pending_.offsets[0];
      pending_.entry.data_end = pending_.offsets[1];
      pending_.entry.header_index = entries.size();
      entries.push_back(std::move(pending_.entry));
      state_ = State::Root;
    } else {  // State::Root
      state_ = State::Done;
    }
    return true;
  }
  bool start_array(std::size_t) {
    if (state_ == State::FieldValue && field_ != Field::Dtype) {
      if (field_ == Field::Shape) pending_.has_shape = true;
      else pending_.has_offsets = true;
      state_ = State::Array;
      return true;
    }
    return container("an array");
  }
  bool end_array() {
    state_ = State::Entry;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& e) {
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at ...".
    std::string what = e.what();
    if (const size_t p = what.find("] "); what.starts_with("[json.exception") && p != std::string::npos)
      what.erase(0, p + 2);
    if (what.size() > 300) what = what.substr(0, 300) + "...";  // it quotes the offending token
    const uint64_t byte = position > 0 ? position - 1 : 0;
    r_.fail("the header is not valid JSON (near header byte " + std::to_string(byte) + ", file byte " +
            std::to_string(8 + byte) + "): " + what);
  }

  bool done() const { return state_ == State::Done; }

 private:
  enum class State { Start, Root, RootValue, Metadata, MetadataValue, Entry, FieldValue, Array, Done };
  enum class Field { Dtype, Shape, Offsets };

  bool field_seen() const {
    return field_ == Field::Dtype ? pending_.has_dtype : field_ == Field::Shape ? pending_.has_shape : pending_.has_offsets;
  }
  const char* field_name() const {
    return field_ == Field::Dtype ? "dtype" : field_ == Field::Shape ? "shape" : "data_offsets";
  }
  [[noreturn]] void fail_entry(const std::string& what) const {
    r_.fail("tensor " + in_quotes(pending_.entry.name) + ": " + what);
  }
  [[noreturn]] void integer_error(const std::string& text, const char* why) const {
    fail_entry(in_quotes(field_name()) + " entry " + text + " " + why);
  }
  // Something that is not what the current position requires.
  [[noreturn]] void unexpected(const std::string& found) const {
    switch (state_) {
      case State::Start: r_.fail("the header is not a JSON object (found " + found + ")");
      case State::RootValue:
        if (key_ == kMetadataKey) r_.fail("__metadata__ must be an object mapping strings to strings, found " + found);
        r_.fail("the entry for tensor " + in_quotes(key_) + " must be an object, found " + found);
      case State::MetadataValue:
        r_.fail("__metadata__ value for key " + in_quotes(key_) + " must be a string, found " + found);
      case State::FieldValue:
        if (field_ == Field::Dtype) fail_entry("'dtype' must be a string, found " + found);
        fail_entry(in_quotes(field_name()) + " must be an array of integers, found " + found);
      case State::Array: fail_entry(in_quotes(field_name()) + " must contain only integers, found " + found);
      default: r_.fail("unexpected " + found + " in the header");
    }
  }
  bool scalar(const char* what) { unexpected(what); }
  bool container(const char* what) { unexpected(what); }

  const Reader& r_;
  State state_ = State::Start;
  Field field_ = Field::Dtype;
  std::string key_;
  PendingEntry pending_;
  std::unordered_set<std::string> root_keys_;
};

bool loadable(const std::string& dtype) { return dtype == "F32" || dtype == "F16" || dtype == "BF16" || dtype == "F64"; }

// Bytes per element of every dtype the format defines; 0 for any other name.
size_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t, std::less<>> sizes{
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

std::string entry_where(const SafetensorsEntry& e) { return "tensor " + in_quotes(e.name) + ": "; }

SafetensorsHeader parse_header(const Reader& r, OtherDtypes other) {
  SafetensorsHeader h;
  h.file_size = r.size();
  if (r.size() < 8)
    r.fail("the file is " + std::to_string(r.size()) + " bytes long, too short for the 8-byte header length");
  unsigned char len[8];
  r.read(len, 8, 0);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
  if (n > kSafetensorsMaxHeaderSize)
    r.fail("header length " + std::to_string(n) + " (at file byte 0) exceeds the " +
           std::to_string(kSafetensorsMaxHeaderSize) + "-byte limit");
  if (n > r.size() - 8)
    r.fail("header length " + std::to_string(n) + " (at file byte 0) runs past the end of the " +
           std::to_string(r.size()) + "-byte file");
  h.header_size = n;

  std::string text(n, '\0');
  r.read(text.data(), n, 8);
  if (n == 0 || text[0] != '{') r.fail("the header is not a JSON object: it does not start with '{' (at file byte 8)");
  HeaderSax sax(r);
  // strict: nothing but whitespace may follow the object (the format pads with spaces).
  const bool ok = nlohmann::json::sax_parse(text, &sax, nlohmann::json::input_format_t::json, true, false);
  if (!ok || !sax.done()) r.fail("the header could not be parsed");
  text = std::string();
  h.metadata = std::move(sax.metadata);

  // Per-tensor checks.
  const uint64_t buffer_size = r.size() - 8 - n;
  const uint64_t buffer_start = 8 + n;
  for (const SafetensorsEntry& e : sax.entries) {
    const size_t esize = dtype_size(e.dtype);
    if (esize == 0 || (other == OtherDtypes::Reject && !loadable(e.dtype)))
      r.fail(entry_where(e) + "dtype " + in_quotes(e.dtype) +
             " is not supported (this reader accepts F32, and F16, BF16, F64 converted to float32)");
    // Even a zero-size tensor must have geometry whose strides fit in int64.
    int64_t span = 1, numel = 1;
    for (int64_t d : e.shape) {
      if (__builtin_mul_overflow(span, std::max<int64_t>(d, 1), &span))
        r.fail(entry_where(e) + "shape " + to_string(e.shape) + " has too many elements");
      numel *= d;  // |numel| <= span, no overflow
    }
    uint64_t bytes;
    if (__builtin_mul_overflow(uint64_t(span), uint64_t(esize), &bytes) || bytes > uint64_t(INT64_MAX))
      r.fail(entry_where(e) + "shape " + to_string(e.shape) + " has too many elements");
    bytes = uint64_t(numel) * esize;
    const std::string offs = "data_offsets [" + std::to_string(e.data_begin) + ", " + std::to_string(e.data_end) + "]";
    if (e.data_end < e.data_begin) r.fail(entry_where(e) + offs + ": end is before begin");
    if (e.data_end - e.data_begin != bytes)
      r.fail(entry_where(e) + offs + " hold " + std::to_string(e.data_end - e.data_begin) + " bytes, but " + e.dtype +
             " shape " + to_string(e.shape) + " needs " + std::to_string(bytes));
    if (e.data_end > buffer_size)
      r.fail(entry_where(e) + offs + " run past the end of the " + std::to_string(buffer_size) +
             "-byte data buffer (which starts at file byte " + std::to_string(buffer_start) + " and ends at file byte " +
             std::to_string(r.size()) + ")");
  }

  // Layout: back to back from 0 to the end of the file, in offset order.
  std::vector<SafetensorsEntry>& es = sax.entries;
  std::stable_sort(es.begin(), es.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return std::pair(a.data_begin, a.data_end) < std::pair(b.data_begin, b.data_end);
  });
  uint64_t expected = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const SafetensorsEntry& e : es) {
    if (e.data_begin < expected)
      r.fail(entry_where(e) + "data at buffer byte " + std::to_string(e.data_begin) + " (file byte " +
             std::to_string(buffer_start + e.data_begin) + ") overlaps tensor " + in_quotes(prev->name) +
             ", which ends at buffer byte " + std::to_string(expected));
    if (e.data_begin > expected)
      r.fail(entry_where(e) + "gap of " + std::to_string(e.data_begin - expected) + " bytes before its data at buffer byte " +
             std::to_string(e.data_begin) + " (file byte " + std::to_string(buffer_start + e.data_begin) +
             "): tensors must be laid out without gaps");
    expected = e.data_end;
    prev = &e;
  }
  if (expected != buffer_size)
    r.fail(std::to_string(buffer_size - expected) + " bytes at the end of the data buffer (from file byte " +
           std::to_string(buffer_start + expected) + ") belong to no tensor");
  h.entries = std::move(es);
  return h;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    const float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

float double_to_float(double d) {
  // Round to nearest even; values beyond FLT_MAX's rounding boundary become infinite
  // (an out-of-range float conversion is undefined behaviour in C++).
  constexpr double kOverflow = 340282356779733661637539395458142568448.0;  // 2^128 - 2^103
  if (std::isfinite(d) && std::fabs(d) >= kOverflow) return d > 0 ? INFINITY : -INFINITY;
  return static_cast<float>(d);
}

Tensor read_tensor(const Reader& r, const SafetensorsHeader& h, const SafetensorsEntry& e) {
  Tensor t = empty(e.shape);
  const int64_t n = t.numel();
  if (n == 0) return t;
  const uint64_t at = h.buffer_start() + e.data_begin, bytes = e.data_end - e.data_begin;
  float* out = t.data();
  if (e.dtype == "F32") {
    r.read(out, bytes, at);
    return t;
  }
  std::vector<unsigned char> raw(bytes);
  r.read(raw.data(), bytes, at);
  const unsigned char* p = raw.data();
  if (e.dtype == "F16") {
    for (int64_t i = 0; i < n; ++i) out[i] = half_to_float(uint16_t(p[2 * i] | (p[2 * i + 1] << 8)));
  } else if (e.dtype == "BF16") {
    for (int64_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(uint32_t(p[2 * i] | (p[2 * i + 1] << 8)) << 16);
  } else {  // F64
    for (int64_t i = 0; i < n; ++i) {
      uint64_t bits;
      std::memcpy(&bits, p + 8 * i, 8);
      out[i] = double_to_float(std::bit_cast<double>(bits));
    }
  }
  return t;
}

}  // namespace

SafetensorsHeader read_safetensors_header(const fs::path& path, OtherDtypes other) {
  Reader r(path);
  return parse_header(r, other);
}

SafetensorsFile load_safetensors(const fs::path& path, OtherDtypes other) {
  Reader r(path);
  SafetensorsHeader h = parse_header(r, other);
  SafetensorsFile f;
  f.tensors.reserve(h.entries.size());
  for (const SafetensorsEntry& e : h.entries)
    if (loadable(e.dtype)) f.tensors.emplace_back(e.name, read_tensor(r, h, e));
    else f.not_loaded.push_back(e);
  f.metadata = std::move(h.metadata);
  return f;
}

}  // namespace plexus::io
