#include "data/text_dataset.h"

#include <algorithm>
#include <cmath>

#include "data/file_bytes.h"
#include "util/error.h"

namespace plexus::data {
namespace {

std::string characters_text(int64_t n) { return std::to_string(n) + (n == 1 ? " character" : " characters"); }

}  // namespace

TextDataset::TextDataset(std::string_view bytes, const std::string& source, const TextOptions& options)
    : seq_len_(options.seq_len) {
  if (options.seq_len < 1) throw ValueError("text dataset: seq_len must be at least 1, got " + std::to_string(options.seq_len));
  const std::string needed = "seq_len " + std::to_string(seq_len_) + " needs at least " +
                             characters_text(seq_len_ + 1) + " (one window and the character after it)";
  if (bytes.empty()) throw DataError(source + ": the file is empty; " + needed);
  const std::u32string codes = decode_text_file(bytes, source);
  if (int64_t(codes.size()) < seq_len_ + 1)
    throw DataError(source + ": the file holds " + characters_text(int64_t(codes.size())) + "; " + needed);
  auto vocabulary = std::make_shared<Vocabulary>(Vocabulary::of_at_most(codes, options.max_vocab, source));
  auto ids = std::make_shared<std::vector<int32_t>>();
  ids->reserve(codes.size());
  for (char32_t c : codes) ids->push_back(int32_t(*vocabulary->id(c)));
  ids_ = std::move(ids);
  vocabulary_ = std::move(vocabulary);
  end_ = int64_t(codes.size());
  windows_ = (end_ - 1) / seq_len_;
}

TextDataset TextDataset::part(int64_t begin, int64_t end) const {
  if (begin < 0 || begin > end || end > characters())
    throw IndexError("TextDataset::part: characters [" + std::to_string(begin) + ", " + std::to_string(end) +
                     ") outside [0, " + std::to_string(characters()) + ")");
  TextDataset out = *this;
  out.begin_ = begin_ + begin;
  out.end_ = begin_ + end;
  out.windows_ = end > begin ? (end - begin - 1) / seq_len_ : 0;
  return out;
}

std::pair<TextDataset, TextDataset> TextDataset::split(double train_fraction) const {
  if (!(train_fraction >= 0.0 && train_fraction <= 1.0))
    throw ValueError("TextDataset::split: train_fraction must lie in [0, 1], got " + std::to_string(train_fraction));
  const auto cut = int64_t(std::llround(train_fraction * double(characters())));
  return {part(0, cut), part(cut, characters())};
}

void TextDataset::fill(const std::vector<int64_t>& indices, bool inputs, float* out) const {
  const int32_t* ids = ids_->data() + begin_ + (inputs ? 0 : 1);
  for (int64_t i : indices) {
    check_index(i, "TextDataset");
    const int32_t* w = ids + i * seq_len_;
    for (int64_t t = 0; t < seq_len_; ++t) *out++ = float(w[t]);
  }
}

Example TextDataset::get(int64_t index) const {
  Example e = get_batch({index});
  return {e.input.reshape({seq_len_}), e.target.reshape({seq_len_})};
}

Example TextDataset::get_batch(const std::vector<int64_t>& indices) const {
  if (indices.empty()) throw ValueError("TextDataset::get_batch: no indices");
  Example e{empty({int64_t(indices.size()), seq_len_}), empty({int64_t(indices.size()), seq_len_})};
  fill(indices, true, e.input.data());
  fill(indices, false, e.target.data());
  return e;
}

Tensor TextDataset::target_batch(const std::vector<int64_t>& indices) const {
  if (indices.empty()) throw ValueError("TextDataset::target_batch: no indices");
  Tensor t = empty({int64_t(indices.size()), seq_len_});
  fill(indices, false, t.data());
  return t;
}

std::pair<std::string, std::string> TextDataset::window_text(int64_t index) const {
  check_index(index, "TextDataset::window_text");
  const auto from = ids_->begin() + begin_ + index * seq_len_;
  const std::vector<int64_t> x(from, from + seq_len_), y(from + 1, from + seq_len_ + 1);
  return {vocabulary_->decode(x), vocabulary_->decode(y)};
}

TextDataset read_text_dataset(const std::string& path, const TextOptions& options) {
  return TextDataset(read_file_bytes(path), path, options);
}

}  // namespace plexus::data
