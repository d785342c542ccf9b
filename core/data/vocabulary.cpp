#include "data/vocabulary.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "util/error.h"

namespace plexus::data {

namespace {

[[noreturn]] void malformed(const std::string& source, size_t at, const char* what) {
  throw DataError(source + ": byte offset " + std::to_string(at) + ": " + what);
}

// "'q' (1 time), U+00A0 (2 times)": the `count` rarest code points, rarest first, ties by code point.
std::string rarest(const std::u32string& codes, size_t count) {
  std::map<char32_t, int64_t> seen;
  for (char32_t c : codes) ++seen[c];
  std::vector<std::pair<int64_t, char32_t>> order;
  for (const auto& [c, n] : seen) order.emplace_back(n, c);
  std::sort(order.begin(), order.end());
  std::string out;
  for (size_t i = 0; i < std::min(count, order.size()); ++i)
    out += (i ? ", " : "") + describe_symbol(encode_utf8(order[i].second)) + " (" + std::to_string(order[i].first) +
           (order[i].first == 1 ? " time)" : " times)");
  return out;
}

}  // namespace

Utf8Step utf8_step(std::string_view text, size_t i) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  const unsigned char b = s[i];
  if (b < 0x80) return {b, 1};
  int extra;
  char32_t c;
  if ((b & 0xE0) == 0xC0) extra = 1, c = b & 0x1F;
  else if ((b & 0xF0) == 0xE0) extra = 2, c = b & 0x0F;
  else if ((b & 0xF8) == 0xF0) extra = 3, c = b & 0x07;
  else return {0, 0, "not UTF-8 text (a byte that cannot start a character)", i};
  for (int k = 1; k <= extra; ++k) {
    if (i + size_t(k) >= n) return {0, 0, "not UTF-8 text (a character cut off by the end of the file)", i};
    const unsigned char cont = s[i + size_t(k)];
    if ((cont & 0xC0) != 0x80) return {0, 0, "not UTF-8 text (a missing continuation byte)", i + size_t(k)};
    c = (c << 6) | (cont & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (c < kMin[extra]) return {0, 0, "not UTF-8 text (an overlong encoding)", i};
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return {0, 0, "not UTF-8 text (not a Unicode character)", i};
  return {c, size_t(extra) + 1};
}

std::u32string decode_utf8(std::string_view text, const std::string& source) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] == 0) malformed(source, i, "a NUL byte: this looks like a binary file, not UTF-8 text");
    const Utf8Step step = utf8_step(text, i);
    if (step.problem) malformed(source, step.problem_at, step.problem);
    out.push_back(step.code);
    i += step.length;
  }
  return out;
}

std::u32string decode_text_file(std::string_view bytes, const std::string& source) {
  std::u32string codes = decode_utf8(bytes, source);
  if (bytes.starts_with("\xEF\xBB\xBF")) codes.erase(0, 1);
  return codes;
}

std::string encode_utf8(char32_t c) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) throw ValueError("encode_utf8: not a Unicode character");
  std::string out;
  if (c < 0x80) {
    out.push_back(char(c));
  } else if (c < 0x800) {
    out.push_back(char(0xC0 | (c >> 6)));
    out.push_back(char(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(char(0xE0 | (c >> 12)));
    out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(char(0x80 | (c & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (c >> 18)));
    out.push_back(char(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(char(0x80 | (c & 0x3F)));
  }
  return out;
}

std::string describe_symbol(const std::string& symbol) {
  const std::u32string c = decode_utf8(symbol, "symbol");
  if (c.size() != 1) return "'" + symbol + "'";
  switch (c[0]) {
    case '\n': return "'\\n'";
    case '\t': return "'\\t'";
    case '\r': return "'\\r'";
    case ' ': return "' ' (space)";
    default: break;
  }
  if (c[0] < 0x20 || c[0] == 0x7F || (c[0] >= 0x80 && c[0] < 0xA0) || c[0] == 0xA0 || c[0] == 0xFEFF) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", unsigned(c[0]));
    return buf;
  }
  return "'" + symbol + "'";
}

Vocabulary::Vocabulary(std::vector<std::string> symbols) : symbols_(std::move(symbols)) {
  for (size_t i = 0; i < symbols_.size(); ++i) {
    const std::u32string c = decode_utf8(symbols_[i], "vocabulary symbol " + std::to_string(i));
    if (c.size() != 1)
      throw ValueError("vocabulary symbol " + std::to_string(i) + " is " + std::to_string(c.size()) +
                       " characters long; each symbol is one character");
    if (!ids_.emplace(c[0], int64_t(i)).second)
      throw ValueError("vocabulary symbol " + std::to_string(i) + " " + describe_symbol(symbols_[i]) +
                       " appears twice");
  }
}

Vocabulary Vocabulary::of(const std::u32string& codes) {
  std::u32string distinct = codes;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<std::string> symbols;
  symbols.reserve(distinct.size());
  for (char32_t c : distinct) symbols.push_back(encode_utf8(c));
  return Vocabulary(std::move(symbols));
}

Vocabulary Vocabulary::of_at_most(const std::u32string& codes, int64_t max_vocab, const std::string& source) {
  Vocabulary vocabulary = of(codes);
  if (vocabulary.size() > max_vocab)
    throw DataError(source + ": " + std::to_string(vocabulary.size()) + " distinct characters, more than max_vocab " +
                    std::to_string(max_vocab) + " allows; the rarest: " + rarest(codes, 5) +
                    ". Raise max_vocab, or is this not the text it should be?");
  return vocabulary;
}

std::optional<int64_t> Vocabulary::id(char32_t c) const {
  auto it = ids_.find(c);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::vector<int64_t> Vocabulary::encode(const std::u32string& codes) const {
  std::vector<int64_t> out;
  out.reserve(codes.size());
  for (size_t i = 0; i < codes.size(); ++i) {
    const std::optional<int64_t> k = id(codes[i]);
    if (!k)
      throw ValueError("character " + std::to_string(i) + " of the text, " + describe_symbol(encode_utf8(codes[i])) +
                       ", is not in the model's vocabulary of " + std::to_string(size()) + " characters");
    out.push_back(*k);
  }
  return out;
}

std::vector<int64_t> Vocabulary::encode(std::string_view utf8) const { return encode(decode_utf8(utf8, "text")); }

std::string Vocabulary::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  for (int64_t k : ids) {
    if (k < 0 || k >= size())
      throw IndexError("vocabulary: id " + std::to_string(k) + " outside [0, " + std::to_string(size()) + ")");
    out += symbols_[size_t(k)];
  }
  return out;
}

}  // namespace plexus::data
