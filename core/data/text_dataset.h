#pragma once
// A character-level text dataset read from one UTF-8 file: each example is a window of seq_len
// character ids, and its target the same window shifted on by one character (the next
// character at every position), for next-character models.
//
//   text "hello world", seq_len 4:  ids of "hell" -> "ello", "o wo" -> " wor"
//
// Windows. Example i covers characters [i*T, i*T + T) of its part (T = seq_len) and its target
// [i*T + 1, i*T + T + 1): windows do not overlap, so an epoch reads every character once and
// consecutive windows continue each other (what a stateful recurrent model relies on, see
// stream_batches in data/sampling.h). A part of L characters has (L - 1) / T windows; the
// characters left over at its end are not used.
//
// Vocabulary. The distinct code points of the whole file, sorted (data::Vocabulary::of); ids
// are positions in it. class_names() returns its symbols, so a run stores the vocabulary in its
// checkpoints and a trained model turns ids back into text without the file.
//
// Tensors. Inputs and targets are [T] per example, [B, T] per batch, of float whole numbers
// (ids, as Embedding and the class targets of cross_entropy take them).
//
// Split by position: part(begin, end) is a dataset of the characters [begin, end) alone, with
// the same vocabulary; split() cuts the text at a share of its characters, so the training
// part is the beginning of the text and the validation part its end, and no window straddles
// the cut.
//
// Bad input is a DataError naming the file: a NUL byte or malformed UTF-8 (a binary file, with
// the byte offset), an empty file, a file too short for one window, more distinct characters
// than max_vocab (with the rarest ones). A leading UTF-8 byte-order mark is skipped.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "data/vocabulary.h"

namespace plexus::data {

struct TextOptions {
  int64_t seq_len = 64;
  int64_t max_vocab = 256;  // more distinct characters than this is an error
};

class TextDataset : public Dataset {
 public:
  // The text `bytes` of `source` (a file path, for messages).
  TextDataset(std::string_view bytes, const std::string& source, const TextOptions& options);

  int64_t size() const override { return windows_; }
  Example get(int64_t index) const override;                                   // [T], [T]
  Example get_batch(const std::vector<int64_t>& indices) const override;       // [B, T], [B, T]
  Tensor target_batch(const std::vector<int64_t>& indices) const override;     // [B, T]
  std::vector<std::string> class_names() const override { return vocabulary_->symbols(); }

  const Vocabulary& vocabulary() const { return *vocabulary_; }
  int64_t seq_len() const { return seq_len_; }
  int64_t characters() const { return end_ - begin_; }  // of this part
  // The text of window `index` and of its target, decoded through the vocabulary.
  std::pair<std::string, std::string> window_text(int64_t index) const;

  // The characters [begin, end) of this dataset's own characters, as a dataset (checked).
  TextDataset part(int64_t begin, int64_t end) const;
  // The first round(train_fraction * characters()) characters and the rest.
  std::pair<TextDataset, TextDataset> split(double train_fraction) const;

 private:
  TextDataset() = default;
  void fill(const std::vector<int64_t>& indices, bool inputs, float* out) const;

  std::shared_ptr<const std::vector<int32_t>> ids_;  // the whole file's, shared by its parts
  std::shared_ptr<const Vocabulary> vocabulary_;
  int64_t seq_len_ = 0, begin_ = 0, end_ = 0, windows_ = 0;
};

// The file at `path` as a TextDataset (DataError when it cannot be read, see above).
TextDataset read_text_dataset(const std::string& path, const TextOptions& options);

}  // namespace plexus::data
