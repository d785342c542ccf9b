#pragma once
// Characters as classes: the vocabulary of a character-level text model. Each symbol is one
// Unicode code point (UTF-8 encoded); its id is its position. A text dataset builds it from its
// file (sorted by code point), a run stores it in every checkpoint as the class names, and
// sampling turns ids back into text with it, so a trained model needs no data file to write.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace plexus::data {

// The code points of UTF-8 `text`. DataError naming `source` and the byte offset of the first
// malformed sequence (bad lead or continuation byte, overlong form, surrogate, beyond U+10FFFF)
// or NUL byte: a NUL means a binary file, not text.
std::u32string decode_utf8(std::string_view text, const std::string& source);
// One code point of UTF-8 `text` starting at byte `at`: its value and byte length, or, for a
// malformed sequence, `problem` (what is wrong) and `problem_at` (the byte it is found at).
struct Utf8Step {
  char32_t code = 0;
  size_t length = 0;
  const char* problem = nullptr;
  size_t problem_at = 0;
};
Utf8Step utf8_step(std::string_view text, size_t at);
std::string encode_utf8(char32_t c);  // c must be a valid code point
// A text file's characters: decode_utf8 with a leading byte-order mark left out (it is not text;
// byte offsets in messages still count from the file's first byte).
std::u32string decode_text_file(std::string_view bytes, const std::string& source);

// How a symbol is shown in messages and views: "'a'", "'\n'" for control characters, "U+00A0"
// style for other invisible ones.
std::string describe_symbol(const std::string& symbol);

class Vocabulary {
 public:
  Vocabulary() = default;
  // Each symbol one UTF-8 encoded code point, all distinct: ValueError otherwise.
  explicit Vocabulary(std::vector<std::string> symbols);
  // The distinct code points of `codes`, sorted.
  static Vocabulary of(const std::u32string& codes);
  // Vocabulary::of, refused when it would hold more than `max_vocab` symbols: DataError "SOURCE:
  // 300 distinct characters, more than max_vocab 256 allows; the rarest: ..." (a binary or wrong
  // file, usually).
  static Vocabulary of_at_most(const std::u32string& codes, int64_t max_vocab, const std::string& source);

  int64_t size() const { return int64_t(symbols_.size()); }
  bool empty() const { return symbols_.empty(); }
  const std::vector<std::string>& symbols() const { return symbols_; }
  std::optional<int64_t> id(char32_t c) const;
  // Ids of each code point; ValueError naming the first one not in the vocabulary and its
  // position (in characters) when there is one.
  std::vector<int64_t> encode(const std::u32string& codes) const;
  std::vector<int64_t> encode(std::string_view utf8) const;  // decoded first ("text" in messages)
  // The text of `ids`; IndexError for an id outside [0, size()).
  std::string decode(const std::vector<int64_t>& ids) const;

  bool operator==(const Vocabulary& o) const { return symbols_ == o.symbols_; }

 private:
  std::vector<std::string> symbols_;
  std::unordered_map<char32_t, int64_t> ids_;
};

}  // namespace plexus::data
