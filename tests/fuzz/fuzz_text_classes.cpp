// libFuzzer target: the labelled-texts reader (data/text_classes.h). The first input byte picks
// max_length (0 to 15; 0 is the longest example), max_vocab (2 to 17) and lowercasing; the rest
// is a class file "a.txt" (an example a line), read beside a fixed class "b", and also as one
// example file of a class folder.
// Bad input must be a DataError naming the file; an accepted file must give padded rows of ids
// inside the vocabulary (characters then only zeros), as many examples as non-blank lines plus
// b's, targets that are the classes, lengths that match the texts, and a seeded split that keeps
// every example once.
#include <algorithm>

#include "data/file_bytes.h"
#include "data/text_classes.h"
#include "fuzz_support.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::data;

namespace {

void check_dataset(const TextClassDataset& ds, const TextClassOptions& options, size_t a_examples) {
  const int64_t n = ds.size(), t = ds.max_length(), v = ds.vocabulary().size();
  fuzz::require(n == int64_t(a_examples) + 2, "the examples are not the lines and b's two");
  fuzz::require(v >= 1 && v <= options.max_vocab, "a vocabulary over its limit was accepted");
  fuzz::require(t >= 1 && (options.max_length == 0 ? t <= kTextClassesLengthCap : t == options.max_length),
                "max_length is not the one asked for");
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) all[size_t(i)] = i;
  const Example e = ds.get_batch(all);
  fuzz::require(e.input.shape() == Shape{n, t} && e.target.shape() == Shape{n}, "batches are not [N, T] and [N]");
  const std::vector<float> x = e.input.to_vector(), y = e.target.to_vector(),
                           lengths = sequence_lengths(e.input).to_vector();
  for (int64_t i = 0; i < n; ++i) {
    fuzz::require(y[size_t(i)] == (i < int64_t(a_examples) ? 0.f : 1.f), "a target is not the example's class");
    const int64_t length = std::min<int64_t>(int64_t(decode_utf8(ds.text(i), "text").size()), t);
    fuzz::require(lengths[size_t(i)] == float(length), "a length is not the example's, cut to max_length");
    for (int64_t k = 0; k < t; ++k) {
      const float id = x[size_t(i * t + k)];
      fuzz::require(k < length ? id >= 1 && id <= float(v) : id == 0, "an id outside the vocabulary or the padding");
    }
  }
  const auto [first, second] = ds.split(0.5, 3);
  fuzz::require(first.size() + second.size() == n, "the split lost examples");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const TextClassOptions options{.max_length = data[0] & 15, .max_vocab = 2 + ((data[0] >> 4) & 15),
                                 .lowercase = (data[0] & 16) != 0};
  const fuzz::MemoryFile file({reinterpret_cast<const char*>(data + 1), size - 1});
  const TextClass b{"b", {U"ab", U"b"}, "b.txt"};

  std::unique_ptr<TextClassDataset> lines;
  size_t a_examples = 0;
  try {
    const std::vector<std::u32string> examples = examples_per_line(read_file_bytes(file.path()), file.path());
    a_examples = examples.size();
    lines = std::make_unique<TextClassDataset>(std::vector<TextClass>{{"a", examples, file.path()}, b}, options,
                                               file.path());
  } catch (const DataError& e) {
    fuzz::require_names(e.what(), file.path());
    fuzz::rejected(e.what());
  }
  if (lines) {
    fuzz::accepted();
    check_dataset(*lines, options, a_examples);
  }
  // The same bytes as one example file of a class folder.
  try {
    const std::u32string example = example_of_file(read_file_bytes(file.path()), file.path());
    check_dataset(TextClassDataset({{"a", {example}, file.path()}, b}, options, file.path()), options, 1);
  } catch (const DataError& e) {
    fuzz::require_names(e.what(), file.path());
  }
  return 0;
}
