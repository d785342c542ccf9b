// libFuzzer target: the safetensors reader. Bad input must be an IoError naming the file, and
// the header check and the full load must agree on which files are acceptable. An accepted
// file must load tensors of the shapes its header declares, and writing them back and reading
// that again must give the same names, shapes, values (bit for bit) and metadata.
#include <cstring>

#include "fuzz_support.h"
#include "io/safetensors.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::io;

namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.to_vector(), y = b.to_vector();
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::MemoryFile file({reinterpret_cast<const char*>(data), size});
  SafetensorsHeader header;
  bool header_ok = true;
  try {
    header = read_safetensors_header(file.path());
  } catch (const IoError& e) {
    fuzz::require_names(e.what(), file.path());
    header_ok = false;
  }
  SafetensorsFile loaded;
  try {
    loaded = load_safetensors(file.path());
  } catch (const IoError& e) {
    fuzz::require_names(e.what(), file.path());
    fuzz::require(!header_ok, std::string("the header check passed but loading failed: ") + e.what());
    fuzz::rejected(e.what());
    return 0;
  }
  fuzz::accepted();
  fuzz::require(header_ok, "loading passed but the header check failed");
  fuzz::require(header.file_size == size, "file size");
  fuzz::require(loaded.tensors.size() == header.entries.size(), "a tensor per header entry");
  fuzz::require(loaded.metadata == header.metadata, "metadata differs between header and load");
  for (size_t i = 0; i < header.entries.size(); ++i) {
    fuzz::require(loaded.tensors[i].first == header.entries[i].name, "tensor order or name");
    fuzz::require(loaded.tensors[i].second.shape() == header.entries[i].shape, "tensor shape");
  }

  const fuzz::MemoryFile again(serialize_safetensors(loaded.tensors, loaded.metadata));
  const SafetensorsFile back = load_safetensors(again.path());
  fuzz::require(back.metadata == loaded.metadata, "metadata did not round-trip");
  fuzz::require(back.tensors.size() == loaded.tensors.size(), "tensor count did not round-trip");
  for (size_t i = 0; i < back.tensors.size(); ++i) {
    fuzz::require(back.tensors[i].first == loaded.tensors[i].first, "name did not round-trip");
    fuzz::require(back.tensors[i].second.shape() == loaded.tensors[i].second.shape(), "shape did not round-trip");
    fuzz::require(same_bits(back.tensors[i].second, loaded.tensors[i].second), "values did not round-trip");
  }
  return 0;
}
