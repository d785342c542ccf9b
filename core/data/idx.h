#pragma once
// IDX files (the format of MNIST and Fashion-MNIST): a big-endian header
//   0x00 0x00 <type code> <ndims>   then ndims uint32 dims   then the elements, row-major.
// Raw and gzip-compressed files are both read; gzip is recognised by its magic bytes
// (1f 8b), not by the file name. Every field is validated, and nothing is allocated from a
// size the file merely claims: a raw file's declared payload is checked against its real
// length first, and a gzip stream is decompressed incrementally, its buffer growing only
// with bytes actually decompressed, until the declared payload (plus one byte, to detect
// trailing garbage) has been read. Problems throw plexus::DataError naming the file and
// the byte offset (for gzip: the offset in the decompressed stream, and the message says so).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace plexus::data {

class MappedFile;

// The element types of the IDX format. All of them are read; to_tensor converts to float32.
enum class IdxType : uint8_t {
  UInt8 = 0x08,
  Int8 = 0x09,
  Int16 = 0x0B,
  Int32 = 0x0C,
  Float32 = 0x0D,
  Float64 = 0x0E,
};

const char* idx_type_name(IdxType type);  // "unsigned byte", "int16", ...
int64_t idx_type_size(IdxType type);      // bytes per element

inline constexpr int64_t kIdxMaxDims = 4;               // MNIST uses 1 and 3
inline constexpr int64_t kIdxMaxElements = int64_t(1) << 31;

struct IdxArray {
  std::string path;        // as given to read_idx
  bool compressed = false;  // read through gzip; offsets refer to the decompressed stream
  IdxType type = IdxType::UInt8;
  std::vector<int64_t> dims;
  int64_t data_offset = 0;  // byte offset of the first element (4 + 4 * ndims)
  std::vector<uint8_t> bytes;  // the payload exactly as stored (big-endian elements); empty when mapped
  std::shared_ptr<const MappedFile> mapping;  // map_idx's file, holding the payload instead of `bytes`

  // The payload exactly as stored, numel() * idx_type_size(type) bytes: `bytes` or the mapping.
  const uint8_t* payload() const;

  int64_t numel() const;
  // "PATH: byte offset N" (+ " of the decompressed gzip stream"), the prefix of every error
  // message about this file; callers validating the content (e.g. labels) use it too.
  std::string where(int64_t offset) const;
  // Element i (row-major) converted to double.
  double value(int64_t i) const;
  // The elements as a float32 tensor of shape `dims`, each multiplied by `scale`. Throws
  // DataError naming the file and the sizes, before allocating, when that tensor and the
  // payload together exceed `memory` bytes (nullopt: this machine's, machine_memory(); 0: no check).
  Tensor to_tensor(float scale = 1.f, std::optional<uint64_t> memory = std::nullopt) const;
};

// Reads and validates a whole IDX file (raw or gzip). Throws DataError.
IdxArray read_idx(const std::string& path);

// The same, validated alike, but an uncompressed regular file's payload stays in the file, mapped
// read-only (IdxArray::mapping) instead of copied: its pages come from the page cache as they are
// read, a few per fault, and are shared with every process reading the file (a gzip file is
// decompressed into `bytes`, as read_idx does).
IdxArray map_idx(const std::string& path);

// Writes an uncompressed IDX file (for tests and exporting). `bytes` must hold
// numel(dims) * idx_type_size(type) big-endian elements. Throws DataError on I/O failure.
void write_idx(const std::string& path, IdxType type, const std::vector<int64_t>& dims,
               const std::vector<uint8_t>& bytes);

}  // namespace plexus::data
