// libFuzzer target: the text dataset reader. The first input byte picks seq_len (1 to 16) and
// max_vocab (2 to 33); the rest is the file.
// Bad input must be a DataError naming the file; an accepted file must give windows of ids
// inside the vocabulary whose targets are their inputs one character on, and a split by
// position that keeps every window inside its part.
#include <cmath>

#include "data/text_dataset.h"
#include "fuzz_support.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::data;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const TextOptions options{.seq_len = 1 + (data[0] & 15), .max_vocab = 2 + (data[0] >> 3)};
  const fuzz::MemoryFile file({reinterpret_cast<const char*>(data + 1), size - 1});

  std::unique_ptr<TextDataset> ds;
  try {
    ds = std::make_unique<TextDataset>(read_text_dataset(file.path(), options));
  } catch (const DataError& e) {
    fuzz::require_names(e.what(), file.path());
    fuzz::rejected(e.what());
    return 0;
  }
  fuzz::accepted();
  const int64_t n = ds->size(), t = options.seq_len, v = ds->vocabulary().size();
  fuzz::require(v >= 1 && v <= options.max_vocab, "a vocabulary over its limit was accepted");
  fuzz::require(n == (ds->characters() - 1) / t && n >= 1, "the windows do not cover the text");
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) all[size_t(i)] = i;
  const Example e = ds->get_batch(all);
  fuzz::require(e.input.shape() == Shape{n, t} && e.target.shape() == Shape{n, t}, "batches are not [N, seq_len]");
  const std::vector<float> x = e.input.to_vector(), y = e.target.to_vector();
  for (size_t i = 0; i < x.size(); ++i) {
    fuzz::require(x[i] >= 0 && x[i] < float(v) && x[i] == std::floor(x[i]), "an id outside the vocabulary");
    // Windows are consecutive: the target at a position is the input one character on.
    if (i + 1 < x.size()) fuzz::require(y[i] == x[i + 1], "a target is not the next character");
  }
  const auto [train, validation] = ds->split(0.5);
  fuzz::require(train.characters() + validation.characters() == ds->characters(), "the split lost characters");
  fuzz::require(train.size() + validation.size() <= n, "the split made windows across its cut");
  fuzz::require(train.class_names() == ds->class_names(), "a part has another vocabulary");
  return 0;
}
