// libFuzzer target: the IDX reader (raw and gzip). Bad input must be a DataError naming the
// file; an accepted file must be self-consistent and convert to a float32 tensor that holds
// exactly its values.
#include <cmath>

#include "data/idx.h"
#include "fuzz_support.h"
#include "util/error.h"

using namespace plexus;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::MemoryFile file({reinterpret_cast<const char*>(data), size});
  data::IdxArray a;
  try {
    a = data::read_idx(file.path());
  } catch (const DataError& e) {
    fuzz::require_names(e.what(), file.path());
    fuzz::rejected(e.what());
    return 0;
  }
  fuzz::accepted();
  fuzz::require(!a.dims.empty() && int64_t(a.dims.size()) <= data::kIdxMaxDims, "accepted a bad rank");
  int64_t numel = 1;
  for (int64_t d : a.dims) numel *= d;
  fuzz::require(numel == a.numel(), "numel differs from the product of the dimensions");
  fuzz::require(int64_t(a.bytes.size()) == numel * data::idx_type_size(a.type), "payload size differs from the header");
  fuzz::require(a.data_offset == 4 + 4 * int64_t(a.dims.size()), "wrong data offset");
  fuzz::require(a.compressed || int64_t(size) == a.data_offset + int64_t(a.bytes.size()), "trailing bytes accepted");
  const Tensor t = a.to_tensor();
  fuzz::require(t.shape() == Shape(a.dims.begin(), a.dims.end()), "tensor shape differs from the header");
  const std::vector<float> values = t.to_vector();
  for (int64_t i = 0; i < numel; ++i) {
    const float want = float(a.value(i));
    fuzz::require(values[size_t(i)] == want || (std::isnan(want) && std::isnan(values[size_t(i)])),
                  "element " + std::to_string(i) + " converted wrongly");
  }
  return 0;
}
