#pragma once
// The safetensors file format (https://github.com/huggingface/safetensors):
//
//   8 bytes   N, little-endian u64: the length of the header
//   N bytes   UTF-8 JSON object, padded with spaces to a multiple of 8 bytes:
//               {"__metadata__": {"key": "value", ...},            (optional, strings only)
//                "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
//   rest      the byte buffer; offsets are relative to its start, row-major little-endian
//             data, tensors back to back with no gaps, covering the buffer exactly.
//
// Writing: float32 only ("F32"), tensors laid out in the order given, the header written
// compactly with "__metadata__" first (omitted when empty) and the tensors in that order.
// The file is replaced atomically (io/atomic_file.h).
//
// Reading is strict; every problem is an IoError naming the file, the tensor where there is
// one, and the byte offset where there is one, and nothing is allocated beyond what the
// file's size backs. Accepted dtypes: F32, plus F16, BF16 and F64 which are converted to
// float32 on load (F16/BF16 exactly; F64 rounded to nearest, out-of-range values to ±inf).
// Every other dtype (integers, bool, F8 ...) is rejected with an error naming it, unless the
// caller asks for OtherDtypes::List: then the format's other dtypes are checked for layout
// like the rest and listed, not loaded (a PyTorch state dict holds BatchNorm's
// num_batches_tracked as I64); a name the format does not define is still an error. Beyond
// the format's own rules the reader also rejects: keys in a tensor entry other than
// dtype/shape/data_offsets, shapes of more than 64 dimensions, and duplicate JSON keys at
// any level.
//
// For callers that must not change anything unless a whole file is acceptable (restoring a
// checkpoint), read_safetensors_header() validates the entire file structure and returns
// every name, dtype and shape without reading tensor data; load_safetensors() returns new
// tensors and touches nothing else, so both allow checking everything first.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace plexus::io {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using SafetensorsMetadata = std::map<std::string, std::string>;

// Largest header accepted on load (the reference implementation's limit).
inline constexpr uint64_t kSafetensorsMaxHeaderSize = 100'000'000;
// Most dimensions a tensor may have on load.
inline constexpr size_t kSafetensorsMaxRank = 64;

// One tensor as described by the header.
struct SafetensorsEntry {
  std::string name;
  std::string dtype;        // as stored: "F32", "F16", "BF16" or "F64"
  Shape shape;
  uint64_t data_begin = 0;  // [data_begin, data_end) relative to the byte buffer
  uint64_t data_end = 0;
  size_t header_index = 0;  // its place among the header's tensor entries (the writer's order)
};

// What reading does with a tensor whose dtype the format defines but this reader does not
// convert to float32 (integers, bool, F8).
enum class OtherDtypes { Reject, List };

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // file order: ascending data offset
  SafetensorsMetadata metadata;
  uint64_t header_size = 0;  // N
  uint64_t file_size = 0;
  uint64_t buffer_start() const { return 8 + header_size; }  // file offset of the byte buffer
  const SafetensorsEntry* find(std::string_view name) const;  // nullptr when absent
};

struct SafetensorsFile {
  NamedTensors tensors;  // file order; fresh contiguous float32 CPU tensors, no grad
  std::vector<SafetensorsEntry> not_loaded;  // with OtherDtypes::List: those of other dtypes, file order
  SafetensorsMetadata metadata;
  const Tensor* find(std::string_view name) const;  // nullptr when absent
};

// Writes `tensors` (float32, CPU; any strides: views are written as their contiguous
// values) and `metadata` to `path`, atomically. Names must be unique, valid UTF-8 and not
// "__metadata__" (ValueError, before anything is written); I/O failures are IoError.
void save_safetensors(const std::filesystem::path& path, const NamedTensors& tensors,
                      const SafetensorsMetadata& metadata = {});

// The complete file content save_safetensors() would write, for callers that embed it.
std::string serialize_safetensors(const NamedTensors& tensors, const SafetensorsMetadata& metadata = {});

// Validates the whole file layout (header, offsets against the file size) without reading
// tensor data.
SafetensorsHeader read_safetensors_header(const std::filesystem::path& path, OtherDtypes other = OtherDtypes::Reject);

// Reads and validates the whole file.
SafetensorsFile load_safetensors(const std::filesystem::path& path, OtherDtypes other = OtherDtypes::Reject);

}  // namespace plexus::io
