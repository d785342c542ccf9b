#include "data/idx.h"

#include <zlib.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "data/mapped_file.h"
#include "util/bytes.h"
#include "util/error.h"
#include "util/system_memory.h"

namespace plexus::data {
namespace {

constexpr int64_t kChunk = int64_t(1) << 20;            // growth step of the gzip read buffer
constexpr int64_t kMaxTrailingCount = int64_t(1) << 26;  // stop counting trailing gzip bytes here

std::string hex_byte(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02x", unsigned(b));
  return buf;
}

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

bool known_type(uint8_t code) {
  switch (code) {
    case 0x08: case 0x09: case 0x0B: case 0x0C: case 0x0D: case 0x0E: return true;
    default: return false;
  }
}

// A sequential byte stream: the plain file or its gzip decompression. read() returns fewer
// bytes than asked only at the end of the stream; errors throw DataError.
class Source {
 public:
  virtual ~Source() = default;
  virtual int64_t read(uint8_t* buf, int64_t n) = 0;
  // Bytes left to read when known in advance (a regular uncompressed file).
  virtual std::optional<int64_t> remaining() const { return std::nullopt; }
  int64_t position() const { return pos_; }

 protected:
  int64_t pos_ = 0;
};

class FileSource final : public Source {
 public:
  FileSource(FILE* f, const IdxArray& info, std::optional<int64_t> size) : f_(f), info_(info), size_(size) {}
  ~FileSource() override { std::fclose(f_); }
  int64_t read(uint8_t* buf, int64_t n) override {
    const size_t got = std::fread(buf, 1, size_t(n), f_);
    if (got < size_t(n) && std::ferror(f_))
      throw DataError(info_.where(pos_ + int64_t(got)) + ": read error: " + std::strerror(errno));
    pos_ += int64_t(got);
    return int64_t(got);
  }
  std::optional<int64_t> remaining() const override {
    if (!size_) return std::nullopt;
    return std::max<int64_t>(0, *size_ - pos_);
  }

 private:
  FILE* f_;
  const IdxArray& info_;
  std::optional<int64_t> size_;
};

class GzSource final : public Source {
 public:
  GzSource(gzFile gz, const IdxArray& info) : gz_(gz), info_(info) {}
  ~GzSource() override { gzclose_r(gz_); }
  int64_t read(uint8_t* buf, int64_t n) override {
    int64_t total = 0;
    while (total < n) {
      const unsigned ask = unsigned(std::min<int64_t>(n - total, INT_MAX / 2));
      const int got = gzread(gz_, buf + total, ask);
      if (got < 0) fail("corrupt gzip stream", total);
      total += got;
      if (unsigned(got) < ask) {
        int errnum = Z_OK;
        gzerror(gz_, &errnum);
        // A stream cut short reports Z_BUF_ERROR ("unexpected end of file") here.
        if (errnum != Z_OK) fail(errnum == Z_BUF_ERROR ? "truncated gzip stream" : "corrupt gzip stream", total);
        break;
      }
    }
    pos_ += total;
    return total;
  }

 private:
  [[noreturn]] void fail(const char* what, int64_t got) {
    int errnum = Z_OK;
    const char* msg = gzerror(gz_, &errnum);
    if (errnum == Z_ERRNO) msg = std::strerror(errno);
    std::string detail = msg && *msg ? msg : "unknown error";
    if (detail.rfind(info_.path + ": ", 0) == 0) detail.erase(0, info_.path.size() + 2);  // zlib prefixes the path
    throw DataError(info_.where(pos_ + got) + ": " + what + " (zlib: " + detail + ")");
  }
  gzFile gz_;
  const IdxArray& info_;
};

}  // namespace

const char* idx_type_name(IdxType type) {
  switch (type) {
    case IdxType::UInt8: return "unsigned byte";
    case IdxType::Int8: return "signed byte";
    case IdxType::Int16: return "int16";
    case IdxType::Int32: return "int32";
    case IdxType::Float32: return "float32";
    case IdxType::Float64: return "float64";
  }
  return "unknown";
}

int64_t idx_type_size(IdxType type) {
  switch (type) {
    case IdxType::UInt8: case IdxType::Int8: return 1;
    case IdxType::Int16: return 2;
    case IdxType::Int32: case IdxType::Float32: return 4;
    case IdxType::Float64: return 8;
  }
  return 1;
}

int64_t IdxArray::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return dims.empty() ? 0 : n;
}

std::string IdxArray::where(int64_t offset) const {
  return path + ": byte offset " + std::to_string(offset) + (compressed ? " of the decompressed gzip stream" : "");
}

const uint8_t* IdxArray::payload() const {
  return mapping ? reinterpret_cast<const uint8_t*>(mapping->text().data()) + data_offset : bytes.data();
}

double IdxArray::value(int64_t i) const {
  if (i < 0 || i >= numel()) throw IndexError("IdxArray::value: element " + std::to_string(i) + " out of range for " +
                                              std::to_string(numel()) + " elements");
  const uint8_t* p = payload() + i * idx_type_size(type);
  switch (type) {
    case IdxType::UInt8: return double(p[0]);
    case IdxType::Int8: return double(int8_t(p[0]));
    case IdxType::Int16: return double(int16_t(uint16_t((uint16_t(p[0]) << 8) | p[1])));
    case IdxType::Int32: return double(int32_t(load_be32(p)));
    case IdxType::Float32: {
      const uint32_t u = load_be32(p);
      float f;
      std::memcpy(&f, &u, 4);
      return double(f);
    }
    case IdxType::Float64: {
      const uint64_t u = (uint64_t(load_be32(p)) << 32) | load_be32(p + 4);
      double d;
      std::memcpy(&d, &u, 8);
      return d;
    }
  }
  return 0.0;
}

Tensor IdxArray::to_tensor(float scale, std::optional<uint64_t> memory) const {
  const uint64_t limit = memory.value_or(machine_memory());
  const double need = double(numel()) * double(sizeof(float)), held = mapping ? 0.0 : double(bytes.size());
  if (limit && need + held > double(limit))
    throw DataError(path + ": its " + dims_str(dims) + " " + idx_type_name(type) + " elements need " +
                    memory_text(need) + " as float32, besides the " + memory_text(held) +
                    " read from the file: more than the " + memory_text(double(limit)) + " this machine has");
  Tensor t = empty(Shape(dims.begin(), dims.end()));
  float* out = t.data();
  const int64_t n = numel();
  if (type == IdxType::UInt8) {
    const uint8_t* in = payload();
    for (int64_t i = 0; i < n; ++i) out[i] = float(in[i]) * scale;
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = float(value(i)) * float(scale);
  }
  return t;
}

namespace {

// read_idx and map_idx: `map` leaves a plain file's payload mapped instead of reading it.
IdxArray load_idx(const std::string& path, bool map) {
  IdxArray a;
  a.path = path;

  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw DataError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
    std::fclose(f);
    throw DataError(path + ": cannot read: not a regular file");
  }
  uint8_t sniff[2] = {0, 0};
  const size_t sniffed = std::fread(sniff, 1, 2, f);
  a.compressed = sniffed == 2 && sniff[0] == 0x1f && sniff[1] == 0x8b;

  std::unique_ptr<Source> src;
  if (a.compressed) {
    std::fclose(f);
    gzFile gz = gzopen(path.c_str(), "rb");
    if (!gz) throw DataError(path + ": cannot open: " + std::strerror(errno));
    gzbuffer(gz, 1 << 17);
    src = std::make_unique<GzSource>(gz, a);
  } else {
    std::rewind(f);
    std::optional<int64_t> size;
    if (S_ISREG(st.st_mode)) size = int64_t(st.st_size);
    src = std::make_unique<FileSource>(f, a, size);
  }

  // Header: magic number.
  uint8_t h[4];
  const int64_t got_magic = src->read(h, 4);
  if (got_magic < 4)
    throw DataError(a.where(got_magic) + ": truncated header: the 4-byte magic number needs 4 bytes, but the " +
                    (a.compressed ? "stream" : "file") + " ends after " + std::to_string(got_magic));
  if (h[0] != 0 || h[1] != 0)
    throw DataError(a.where(0) + ": not an IDX file: the magic number must start with bytes 00 00, found " +
                    hex_byte(h[0]) + " " + hex_byte(h[1]) + " " + hex_byte(h[2]) + " " + hex_byte(h[3]));
  if (!known_type(h[2]))
    throw DataError(a.where(2) + ": unknown IDX element type code 0x" + hex_byte(h[2]) +
                    " (known: 0x08 unsigned byte, 0x09 signed byte, 0x0b int16, 0x0c int32, 0x0d float32, "
                    "0x0e float64)");
  a.type = IdxType(h[2]);
  const int64_t ndims = h[3];
  if (ndims < 1 || ndims > kIdxMaxDims)
    throw DataError(a.where(3) + ": " + std::to_string(ndims) + " dimensions; an IDX file here must have 1 to " +
                    std::to_string(kIdxMaxDims));

  // Header: the dimension sizes.
  uint8_t dimbuf[4 * kIdxMaxDims];
  const int64_t got_dims = src->read(dimbuf, 4 * ndims);
  if (got_dims < 4 * ndims)
    throw DataError(a.where(4 + got_dims) + ": truncated header: " + std::to_string(ndims) + " dimensions need " +
                    std::to_string(4 * ndims) + " bytes of sizes after the magic number, but the " +
                    (a.compressed ? "stream" : "file") + " ends after " + std::to_string(4 + got_dims) + " bytes");
  int64_t numel = 1;
  for (int64_t d = 0; d < ndims; ++d) a.dims.push_back(int64_t(load_be32(dimbuf + 4 * d)));
  for (int64_t d = 0; d < ndims; ++d) {
    if (a.dims[d] == 0)
      throw DataError(a.where(4 + 4 * d) + ": dimension " + std::to_string(d) + " of " + dims_str(a.dims) +
                      " is 0; every dimension must be at least 1");
    numel *= a.dims[d];  // both factors < 2^32 and numel <= 2^31 before: no overflow
    if (numel > kIdxMaxElements)
      throw DataError(a.where(4 + 4 * d) + ": dimensions " + dims_str(a.dims) + " hold more than " +
                      std::to_string(kIdxMaxElements) + " elements, the limit");
  }
  a.data_offset = 4 + 4 * ndims;
  const int64_t expected = numel * idx_type_size(a.type);
  const std::string declared = "the header declares " + dims_str(a.dims) + " " + idx_type_name(a.type) +
                               " elements = " + std::to_string(expected) + " bytes from byte offset " +
                               std::to_string(a.data_offset);

  if (auto remaining = src->remaining()) {
    // Plain file of known length: compare before allocating anything.
    if (*remaining < expected)
      throw DataError(a.where(a.data_offset + *remaining) + ": truncated data: " + declared + ", but only " +
                      std::to_string(*remaining) + " bytes follow the header (expected " + std::to_string(expected) +
                      ", found " + std::to_string(*remaining) + ")");
    if (*remaining > expected)
      throw DataError(a.where(a.data_offset + expected) + ": " + std::to_string(*remaining - expected) +
                      (*remaining - expected == 1 ? " trailing byte: " : " trailing bytes: ") + declared + ", but " +
                      std::to_string(*remaining) + " bytes follow the header");
    if (map) {
      auto file = std::make_shared<const MappedFile>(path);
      if (int64_t(file->text().size()) != a.data_offset + expected)
        throw DataError(a.where(a.data_offset) + ": the file changed while being read (" + declared +
                        ", but it now holds " + std::to_string(file->text().size()) + " bytes in all)");
      a.mapping = std::move(file);
      return a;
    }
    a.bytes.resize(size_t(expected));
    const int64_t got = src->read(a.bytes.data(), expected);
    if (got < expected)
      throw DataError(a.where(a.data_offset + got) + ": truncated data: the file shrank while being read (expected " +
                      std::to_string(expected) + " bytes, found " + std::to_string(got) + ")");
    return a;
  }

  // Stream of unknown length: grow with the data actually read, up to one byte past the
  // declared payload, so that a short stream, a long one and a corrupt one are all detected.
  const int64_t want = expected + 1;
  while (int64_t(a.bytes.size()) < want) {
    const int64_t old = int64_t(a.bytes.size());
    const int64_t chunk = std::min(want - old, kChunk);
    a.bytes.resize(size_t(old + chunk));
    const int64_t got = src->read(a.bytes.data() + old, chunk);
    a.bytes.resize(size_t(old + got));
    if (got < chunk) break;
  }
  const int64_t found = int64_t(a.bytes.size());
  if (found < expected)
    throw DataError(a.where(a.data_offset + found) + ": truncated data: " + declared + ", but the " +
                    (a.compressed ? "decompressed stream" : "file") + " ends after " + std::to_string(found) +
                    " of them (expected " + std::to_string(expected) + " bytes, found " + std::to_string(found) + ")");
  if (found > expected) {
    int64_t extra = found - expected;
    std::vector<uint8_t> scratch(static_cast<size_t>(kChunk));
    while (extra < kMaxTrailingCount) {
      const int64_t got = src->read(scratch.data(), kChunk);
      extra += got;
      if (got < kChunk) break;
    }
    throw DataError(a.where(a.data_offset + expected) + ": " + (extra >= kMaxTrailingCount ? "at least " : "") +
                    std::to_string(extra) + (extra == 1 ? " trailing byte: " : " trailing bytes: ") + declared +
                    ", but more follow");
  }
  a.bytes.shrink_to_fit();
  return a;
}

}  // namespace

IdxArray read_idx(const std::string& path) { return load_idx(path, false); }

IdxArray map_idx(const std::string& path) { return load_idx(path, true); }

void write_idx(const std::string& path, IdxType type, const std::vector<int64_t>& dims,
               const std::vector<uint8_t>& bytes) {
  if (dims.empty() || int64_t(dims.size()) > kIdxMaxDims)
    throw ValueError("write_idx: " + std::to_string(dims.size()) + " dimensions; IDX needs 1 to " +
                     std::to_string(kIdxMaxDims));
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 1 || d > int64_t(UINT32_MAX)) throw ValueError("write_idx: dimension " + std::to_string(d) + " out of range");
    n *= d;
    if (n > kIdxMaxElements) throw ValueError("write_idx: more than " + std::to_string(kIdxMaxElements) + " elements");
  }
  if (int64_t(bytes.size()) != n * idx_type_size(type))
    throw ValueError("write_idx: " + std::to_string(bytes.size()) + " bytes given, " + dims_str(dims) + " " +
                     idx_type_name(type) + " elements need " + std::to_string(n * idx_type_size(type)));
  std::vector<uint8_t> header = {0, 0, uint8_t(type), uint8_t(dims.size())};
  for (int64_t d : dims)
    for (int s = 24; s >= 0; s -= 8) header.push_back(uint8_t(uint64_t(d) >> s));
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw DataError(path + ": cannot open for writing: " + std::strerror(errno));
  const bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
                  std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) throw DataError(path + ": write failed: " + std::strerror(errno));
}

}  // namespace plexus::data
