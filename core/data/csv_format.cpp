#include "data/csv_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "data/vocabulary.h"
#include "util/error.h"

namespace plexus::data::csv_format {
namespace {

std::string printable(char c) {
  if (c == '\t') return "'\\t'";
  if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", unsigned(static_cast<unsigned char>(c)));
    return buf;
  }
  return std::string("'") + c + "'";
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

bool same_without_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

}  // namespace

void Locator::fail(int64_t line, int64_t column, int64_t offset, const std::string& what) const {
  std::string s = path_ + ": line " + std::to_string(line);
  if (column > 0) {
    s += ", column " + std::to_string(column);
    if (names_ && column <= int64_t(names_->size())) s += " ('" + (*names_)[size_t(column - 1)] + "')";
  }
  if (offset >= 0) s += ", byte offset " + std::to_string(offset);
  throw DataError(s + ": " + what);
}

const std::vector<std::string>& delimiter_choices() {
  static const std::vector<std::string> choices{"auto", "comma", "semicolon", "tab"};
  return choices;
}

char delimiter_of(const std::string& choice) {
  if (choice == "auto") return 0;
  if (choice == "comma") return ',';
  if (choice == "semicolon") return ';';
  if (choice == "tab") return '\t';
  throw ValueError("unknown delimiter '" + choice + "' (known: auto, comma, semicolon, tab)");
}

char detect_delimiter(std::string_view text) {
  constexpr size_t kRecords = 20, kBytes = 1 << 16;  // enough to tell; bounded for a huge file
  char best = ',';
  int64_t best_agree = 0, best_fields = 0;
  for (const char d : {',', ';', '\t'}) {
    std::vector<int64_t> counts{0};
    bool in_quote = false;
    for (size_t i = 0; i < text.size() && i < kBytes && counts.size() <= kRecords; ++i) {
      const char c = text[i];
      if (c == '"')
        in_quote = !in_quote;  // a doubled quote toggles twice
      else if (!in_quote && c == d)
        ++counts.back();
      else if (!in_quote && c == '\n')
        counts.push_back(0);
    }
    if (counts.back() == 0) counts.pop_back();  // a final line end, or a blank last line
    if (counts.empty() || counts[0] == 0) continue;
    const int64_t agree = int64_t(std::count(counts.begin(), counts.end(), counts[0]));
    if (agree > best_agree || (agree == best_agree && counts[0] > best_fields)) {
      best = d;
      best_agree = agree;
      best_fields = counts[0];
    }
  }
  return best;
}

Reader::Reader(std::string_view text, char delim, const Locator& loc) : s_(text), delim_(delim), loc_(loc) {
  if (delim == '"' || delim == '\n' || delim == '\r' || delim == 0)
    throw ValueError("CSV: the delimiter cannot be a quote, a line end or nothing");
  if (s_.size() >= 3 && s_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;  // UTF-8 BOM
}

void Reader::seek(int64_t offset, int64_t line) {
  pos_ = size_t(offset);
  line_ = line;
}

bool Reader::next(Record& rec) {
  rec.fields.clear();
  while (pos_ < s_.size() && line_end_length(pos_) > 0) {
    pos_ += line_end_length(pos_);
    ++line_;
  }
  if (pos_ >= s_.size()) return false;
  rec.line = line_;
  rec.offset = int64_t(pos_);
  for (;;) {
    Field f;
    f.line = line_;
    f.offset = int64_t(pos_);
    const int64_t column = int64_t(rec.fields.size()) + 1;
    if (pos_ < s_.size() && s_[pos_] == '"') {
      f.quoted = true;
      ++pos_;
      for (;;) {
        if (pos_ >= s_.size())
          loc_.fail(f.line, column, f.offset, "unterminated quoted field (the closing quote is missing)");
        const char c = s_[pos_];
        if (c == '"') {
          if (pos_ + 1 < s_.size() && s_[pos_ + 1] == '"') {
            f.text += '"';
            pos_ += 2;
            continue;
          }
          ++pos_;
          break;
        }
        if (c == '\n') ++line_;
        f.text += c;
        ++pos_;
      }
      if (pos_ < s_.size() && s_[pos_] != delim_ && line_end_length(pos_) == 0)
        loc_.fail(line_, column, int64_t(pos_),
                  "unexpected character " + printable(s_[pos_]) + " after the closing quote of a quoted field");
    } else {
      const size_t start = pos_;
      while (pos_ < s_.size() && s_[pos_] != delim_ && line_end_length(pos_) == 0) {
        if (s_[pos_] == '"')
          loc_.fail(line_, column, int64_t(pos_),
                    "quote inside an unquoted field (quote the whole field and double inner quotes)");
        if (s_[pos_] == '\r')
          loc_.fail(line_, column, int64_t(pos_), "carriage return without a line feed; use LF or CRLF line ends");
        ++pos_;
      }
      f.text.assign(s_.substr(start, pos_ - start));
    }
    rec.fields.push_back(std::move(f));
    if (pos_ < s_.size() && s_[pos_] == delim_) {
      ++pos_;
      continue;
    }
    rec.end_offset = int64_t(pos_);
    if (pos_ < s_.size()) {
      pos_ += line_end_length(pos_);
      ++line_;
    }
    return true;
  }
}

size_t Reader::line_end_length(size_t p) const {
  if (s_[p] == '\n') return 1;
  if (s_[p] == '\r' && p + 1 < s_.size() && s_[p + 1] == '\n') return 2;
  return 0;
}

std::vector<std::string> read_header(Reader& reader, const Locator& loc, std::string_view text, Record& header) {
  if (!reader.next(header)) {
    const bool blank = text.size() > 0;
    loc.fail(reader.line(), 0, reader.offset(),
             blank ? "no header row: the file holds only empty lines" : "empty file; expected a header row");
  }
  std::vector<std::string> names;
  for (size_t c = 0; c < header.fields.size(); ++c) {
    const Field& f = header.fields[c];
    names.push_back(f.quoted ? f.text : trimmed(f.text));
    for (size_t k = 0; k < c; ++k)
      if (names[k] == names[c])
        loc.fail(f.line, int64_t(c) + 1, f.offset,
                 "duplicate column name " + shown(names[c]) + " (also column " + std::to_string(k + 1) + ")");
  }
  return names;
}

size_t column_of(const std::vector<std::string>& names, const std::string& name, const char* role, const Record& header,
                 const Locator& loc) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    loc.fail(header.line, 0, header.offset,
             std::string(role) + " column " + shown(name) + " not found in the header; columns: " + quoted_list(names));
  return size_t(it - names.begin());
}

void check_field_count(const Record& rec, size_t ncols, Locator& loc) {
  if (rec.fields.size() == ncols) return;
  const bool extra = rec.fields.size() > ncols;
  const int64_t col = int64_t(std::min(rec.fields.size(), ncols)) + 1;
  const int64_t off = extra ? rec.fields[ncols].offset : rec.end_offset;
  loc.set_header(nullptr);  // the column past the header has no name
  loc.fail(
      rec.line, col, off,
      "expected " + std::to_string(ncols) + " fields as in the header, found " + std::to_string(rec.fields.size()));
}

MissingTokens::MissingTokens(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {}

MissingTokens MissingTokens::parse(const std::string& list) {
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    std::string token = trimmed(std::string_view(list).substr(start, comma - start));
    if (!token.empty()) tokens.push_back(std::move(token));
    start = comma + 1;
  }
  return MissingTokens(std::move(tokens));
}

bool MissingTokens::missing(std::string_view cell) const {
  const std::string t = trimmed(cell);
  if (t.empty()) return true;
  return std::any_of(tokens_.begin(), tokens_.end(), [&](const std::string& k) { return same_without_case(k, t); });
}

const std::string& default_missing_values() {
  static const std::string list = "NA, N/A, NaN, null, ?";
  return list;
}

NumStatus parse_number(std::string_view text, float& out) {
  size_t b = 0, e = text.size();
  while (b < e && (text[b] == ' ' || text[b] == '\t')) ++b;
  while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t')) --e;
  if (b == e) return NumStatus::Empty;
  if (text[b] == '+' && b + 1 < e && text[b + 1] != '-' && text[b + 1] != '+') ++b;
  double d = 0;
  const auto [ptr, ec] = std::from_chars(text.data() + b, text.data() + e, d);
  if (ptr != text.data() + e) return NumStatus::NotNumber;
  if (ec == std::errc::result_out_of_range) return NumStatus::OutOfRange;
  if (ec != std::errc()) return NumStatus::NotNumber;
  if (!std::isfinite(d)) return NumStatus::NonFinite;
  if (std::fabs(d) > double(std::numeric_limits<float>::max())) return NumStatus::OutOfRange;
  out = float(d);
  return NumStatus::Ok;
}

std::string number_problem(NumStatus st, const std::string& text, const char* what) {
  switch (st) {
    case NumStatus::Empty:
      return std::string("empty cell; every ") + what + " needs a numeric value";
    case NumStatus::NotNumber:
      return shown(text) + " is not a number (" + what + " cells must be numeric)";
    case NumStatus::NonFinite:
      return "non-finite value " + shown(text) + " (NaN and infinities are not allowed)";
    case NumStatus::OutOfRange:
      return shown(text) + " is outside the float32 range";
    case NumStatus::Ok:
      break;
  }
  return "";
}

int64_t invalid_utf8_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const Utf8Step step = utf8_step(s, i);
    if (step.problem) return int64_t(i);  // the sequence's first byte
    i += step.length;
  }
  return -1;
}

std::string shown(const std::string& text) {
  std::string s = text.size() > 40 ? text.substr(0, 40) + "..." : text;
  return "'" + s + "'";
}

std::string trimmed(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return std::string(s.substr(b, e - b));
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s;
}

}  // namespace plexus::data::csv_format
