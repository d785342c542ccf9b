#include "graph/json_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <unordered_set>
#include <utility>

#include "util/error.h"
#include "util/text.h"

namespace plexus::graph::json {
namespace {

// A number's text for a message (it may be a million digits long).
std::string shown_number(std::string_view t) { return t.size() <= 40 ? std::string(t) : cat(t.substr(0, 30), "..."); }

bool is_container(const Value& v) { return std::holds_alternative<Array>(v.v) || std::holds_alternative<Object>(v.v); }

void emit_scalar(const Value& v, std::string& out) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) out += "null";
        else if constexpr (std::is_same_v<T, bool>) out += x ? "true" : "false";
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) out += std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) out += real_text(x);
        else if constexpr (std::is_same_v<T, std::string>) append_string(out, x);  // valid: it was parsed
      },
      v.v);
}

// ---------------------------------------------------------------------------------------------
// Parsing: nlohmann's SAX parser (iterative) drives a builder that enforces the depth limit,
// refuses duplicate keys and integers that do not fit in 64 bits, and records positions. The
// input is fed through an iterator that publishes how far the lexer has read, which gives each
// SAX event its place in the text.

class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator() = default;
  CountingIterator(const char* p, const char** consumed) : p_(p), consumed_(consumed) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    ++p_;
    if (consumed_) *consumed_ = p_;
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return p_ == o.p_; }

 private:
  const char* p_ = nullptr;
  const char** consumed_ = nullptr;
};

bool is_number_char(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }
bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Builder {
 public:
  using json = nlohmann::json;

  Builder(std::string_view text, const std::string& source, int max_depth, const char* const* consumed)
      : text_(text), source_(source), max_depth_(max_depth), consumed_(consumed) {}

  Value take_root() { return std::move(root_); }

  bool null() { return add(Value{nullptr, literal_start(4)}); }
  bool boolean(bool b) { return add(Value{b, literal_start(b ? 4 : 5)}); }
  bool number_integer(json::number_integer_t v) { return add(Value{int64_t(v), number_start()}); }
  bool number_unsigned(json::number_unsigned_t v) {
    if (v <= uint64_t(std::numeric_limits<int64_t>::max())) return add(Value{int64_t(v), number_start()});
    return add(Value{uint64_t(v), number_start()});
  }
  bool number_float(json::number_float_t d, const std::string& raw) {
    const size_t at = number_start();
    // An integer literal too large for 64 bits arrives as a (rounded) real number.
    if (raw.find_first_of(".eE") == std::string::npos)
      fail_path(value_path(), at, cat("integer ", shown_number(raw), " does not fit in 64 bits"));
    if (!std::isfinite(d)) fail_path(value_path(), at, cat("number ", shown_number(raw), " is out of range"));
    return add(Value{double(d), at});
  }
  bool string(std::string& s) { return add(Value{std::move(s), string_start(consumed() - 1)}); }
  bool binary(json::binary_t&) { return add(Value{nullptr, consumed()}); }  // not produced for JSON text

  bool start_object(std::size_t) { return start(Value{Object{}, consumed() - 1}); }
  bool start_array(std::size_t) { return start(Value{Array{}, consumed() - 1}); }
  bool end_object() { return end(); }
  bool end_array() { return end(); }

  bool key(std::string& k) {
    Frame& f = stack_.back();
    const size_t at = string_start(consumed() - 1);
    if (!f.keys.insert(k).second) fail_path(container_path(), at, cat("duplicate key ", shown(k)));
    f.key = std::move(k);
    f.key_offset = at;
    return true;
  }

  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) {
    // `position` counts the bytes read, the end of the text counting as one more; `last` is the
    // offending byte (text_.size() for the end of the text).
    const size_t last = std::min(position > 0 ? position - 1 : 0, text_.size());
    if (e.id == 406) {  // "number overflow parsing '1e400'": the value does not fit in a double
      const size_t start = back_over(last, is_number_char);
      if (token.find_first_of(".eE") == std::string::npos)
        fail_path(value_path(), start, cat("integer ", shown_number(token), " does not fit in 64 bits"));
      fail_path(value_path(), start, cat("number ", shown_number(token), " is out of range"));
    }
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error while
    //  parsing CONTEXT - unexpected TOKEN; expected WHAT" or "... - LEXER ERROR; last read: 'TEXT'"
    std::string what = e.what();
    std::string context;
    if (const size_t p = what.find("syntax error "); p != std::string::npos) {
      what.erase(0, p + 13);
      if (what.starts_with("while parsing ")) {
        const size_t dash = what.find(" - ");
        if (dash != std::string::npos) {
          context = what.substr(14, dash - 14);
          what.erase(0, dash + 3);
        }
      } else if (what.starts_with("- ")) {
        what.erase(0, 2);
      }
    } else if (const size_t q = what.find(": "); what.starts_with("[json.exception") && q != std::string::npos) {
      what.erase(0, q + 2);  // e.g. "invalid BOM; ..."
    }
    std::string expected;
    if (const size_t p = what.rfind("; expected "); p != std::string::npos && !what.starts_with("invalid number")) {
      expected = what.substr(p + 11);
      what.erase(p);
    } else if (const size_t r = what.rfind("'; expected "); r != std::string::npos) {  // after "last read"
      expected = what.substr(r + 12);
      what.erase(r + 1);
    }

    if (what.starts_with("unexpected ")) {  // a well-formed token in the wrong place
      const std::string tok = what.substr(11);
      size_t start = last;
      std::string found;
      if (tok == "end of input") {
        // nlohmann's lexer also ends the input at a NUL byte (outside strings: one inside a
        // string is an error of its own), so the first NUL is where it stopped.
        const size_t nul = text_.find('\0');
        start = nul == std::string_view::npos ? text_.size() : nul;
        found = nul == std::string_view::npos ? "the end of the file" : "a NUL byte";
      } else {
        if (tok == "string literal") start = string_start(last);
        else if (tok == "number literal") start = back_over(last, is_number_char);
        else if (tok == "true literal" || tok == "null literal") start = last >= 3 ? last - 3 : 0;
        else if (tok == "false literal") start = last >= 4 ? last - 4 : 0;
        found = shown_token(text_.substr(start, last + 1 - start));
      }
      const size_t digits = start < last && text_[start] == '-' ? start + 1 : start;
      if (tok == "number literal" && digits < last && text_[digits] == '0')  // "01" reads as 0, then 1
        fail_at(start, cat("invalid number ", shown_token(text_.substr(start, last + 1 - start)),
                           ": a number does not start with 0 unless it is 0 or 0.something"));
      fail_at(start, cat(expectation(context, expected, start), ", found ", found, trailing_comma_hint(tok, start)));
    }
    // A malformed token; `what` is the lexer's message and "; last read: '...'".
    if (const size_t p = what.find("; last read: "); p != std::string::npos) what.erase(p);
    if (what.starts_with("invalid string")) fail_at(string_start(last), what);
    if (what.starts_with("invalid BOM"))
      fail_at(0, "the file starts with a damaged UTF-8 byte order mark (a whole one, EF BB BF, is allowed)");
    if (what.starts_with("invalid number")) {
      const size_t start = back_over(last, is_number_char);
      if (const size_t p = what.find("; "); p != std::string::npos) what.replace(p, 2, ": ");
      fail_at(start, cat(what, ", found ", shown_token(word_at(start))));
    }
    if (what == "invalid literal") {
      const size_t start = back_over(last, is_word_char);
      fail_at(start, cat(expectation(context, expected, start), ", found ", shown_token(word_at(start))));
    }
    fail_at(last, what);
  }

 private:
  struct Frame {
    Value value;                          // the Array or Object being filled
    std::string key;                      // objects: the key of the value being read
    size_t key_offset = 0;
    std::unordered_set<std::string> keys;  // objects: keys so far
  };

  size_t consumed() const { return size_t(*consumed_ - text_.data()); }

  bool add(Value v) {
    if (stack_.empty()) {
      root_ = std::move(v);
    } else if (auto* a = std::get_if<Array>(&stack_.back().value.v)) {
      a->push_back(std::move(v));
    } else {
      Frame& f = stack_.back();
      std::get<Object>(f.value.v).push_back(Member{std::move(f.key), f.key_offset, std::move(v)});
    }
    return true;
  }
  bool start(Value v) {
    if (int(stack_.size()) >= max_depth_)
      fail_at(v.offset, cat("the JSON nests deeper than ", std::to_string(max_depth_), " levels"));
    stack_.push_back(Frame{std::move(v), {}, 0, {}});
    return true;
  }
  bool end() {
    Value v = std::move(stack_.back().value);
    stack_.pop_back();
    return add(std::move(v));
  }

  // The path of the innermost open container / of the value being read in it.
  std::string path_upto(size_t frames) const {
    std::string p;
    for (size_t i = 0; i < frames; ++i) {
      const Frame& f = stack_[i];
      if (const auto* a = std::get_if<Array>(&f.value.v)) p = index_path(p, a->size());
      else p = key_path(p, f.key);
    }
    return p;
  }
  std::string container_path() const { return path_upto(stack_.empty() ? 0 : stack_.size() - 1); }
  std::string value_path() const { return path_upto(stack_.size()); }

  // Start of the string whose closing quote is at `close` (or that was cut off at `close`):
  // the nearest '"' before it that is not escaped (a string holds no unescaped quote).
  size_t string_start(size_t close) const {
    for (size_t i = std::min(close, text_.size()); i-- > 0;) {
      if (text_[i] != '"') continue;
      size_t backslashes = 0;
      while (backslashes < i && text_[i - 1 - backslashes] == '\\') ++backslashes;
      if (backslashes % 2 == 0) return i;
    }
    return 0;
  }
  // Numbers are read one byte past their end (unless they end the text).
  size_t number_start() const {
    size_t e = std::min(consumed(), text_.size());
    if (e > 0 && !is_number_char(text_[e - 1])) --e;
    while (e > 0 && is_number_char(text_[e - 1])) --e;
    return e;
  }
  size_t literal_start(size_t length) const { return consumed() >= length ? consumed() - length : 0; }
  // The start of the run of `pred` characters that ends at `last` (or just before it).
  template <class Pred>
  size_t back_over(size_t last, Pred pred) const {
    size_t s = last < text_.size() && pred(text_[last]) ? last + 1 : std::min(last, text_.size());
    while (s > 0 && pred(text_[s - 1])) --s;
    return s;
  }
  // The malformed word at `start`, for "found 'tru'".
  std::string_view word_at(size_t start) const {
    if (start >= text_.size()) return {};
    size_t e = start + 1;
    while (e < text_.size() && e - start < 40 && !is_space(text_[e]) && !std::strchr("{}[],:\"", text_[e])) ++e;
    return text_.substr(start, e - start);
  }
  // A token for a message: a string literal as it is written, anything else in single quotes.
  static std::string shown_token(std::string_view t) {
    if (!t.empty() && t.front() == '"') {
      if (t.size() <= 60) return std::string(t);
      size_t cut = 56;
      while (cut > 0 && (static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) --cut;
      return cat(t.substr(0, cut), "...\"");
    }
    std::string s = shown(t);
    s.front() = '\'';
    s.back() = '\'';
    return s;
  }
  char previous_char(size_t start) const {
    while (start > 0 && is_space(text_[start - 1])) --start;
    return start > 0 ? text_[start - 1] : '\0';
  }
  std::string expectation(const std::string& context, const std::string& expected, size_t start) const {
    if (context == "object" && expected == "'}'") return "expected ',' or '}'";
    if (context == "array" && expected == "']'") return "expected ',' or ']'";
    if (context == "object key")
      return previous_char(start) == ',' ? "expected a key in double quotes" : "expected a key in double quotes or '}'";
    if (context == "object separator") return "expected ':' after the key";
    if (expected == "end of input") return "expected the end of the file";
    if (context == "value" || expected.empty()) return "expected a value";
    return cat("expected ", expected);
  }
  std::string trailing_comma_hint(const std::string& tok, size_t start) const {
    if ((tok == "'}'" || tok == "']'") && previous_char(start) == ',') return " (a trailing comma is not allowed)";
    return "";
  }

  [[noreturn]] void fail_at(size_t offset, const std::string& what) const {
    throw ProjectError(cat(source_, ": ", line_column(text_, offset), ": ", what));
  }
  [[noreturn]] void fail_path(const std::string& path, size_t offset, const std::string& what) const {
    throw ProjectError(cat(source_, ": ", path, path.empty() ? "" : ": ", what, " (", line_column(text_, offset), ')'));
  }

  std::string_view text_;
  const std::string& source_;
  int max_depth_;
  const char* const* consumed_;
  std::vector<Frame> stack_;
  Value root_;
};

}  // namespace

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string real_text(double d) {
  std::string s = shortest_text(d);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";  // stays a real number when read back
  return s;
}

bool append_string(std::string& out, std::string_view s) {
  static const char* const hex = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20) {
            out += "\\u00";
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 15]);
          } else {
            out.push_back(char(c));
          }
      }
      ++i;
      continue;
    }
    size_t n;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    out.append(s.substr(i, n));
    i += n;
  }
  out.push_back('"');
  return true;
}

std::string shown(std::string_view s) {
  size_t cut = s.size();
  if (cut > 60) {
    cut = 60;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  }
  std::string out = "\"";
  for (char ch : s.substr(0, cut)) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
      out += buf;
    } else {
      out.push_back(ch);
    }
  }
  if (cut < s.size()) out += "...";
  out.push_back('"');
  return out;
}

std::string key_path(const std::string& path, std::string_view key) {
  bool plain = !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_');
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) plain = false;
  if (plain) return path.empty() ? std::string(key) : cat(path, '.', key);
  return cat(path, '[', shown(key), ']');
}

std::string index_path(const std::string& path, size_t i) { return cat(path, '[', std::to_string(i), ']'); }

std::string line_column(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return cat("line ", std::to_string(line), ", column ", std::to_string(column));
}

std::string got(const Value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) return "got null";
        else if constexpr (std::is_same_v<T, bool>) return x ? "got a boolean (true)" : "got a boolean (false)";
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>)
          return cat("got an integer (", std::to_string(x), ')');
        else if constexpr (std::is_same_v<T, double>) return cat("got a number (", real_text(x), ')');
        else if constexpr (std::is_same_v<T, std::string>) return cat("got a string (", shown(x), ')');
        else if constexpr (std::is_same_v<T, Array>) return "got an array";
        else return "got an object";
      },
      v.v);
}

void emit_compact(const Value& v, std::string& out) {
  if (const auto* a = std::get_if<Array>(&v.v)) {
    out.push_back('[');
    for (size_t i = 0; i < a->size(); ++i) {
      if (i) out.push_back(',');
      emit_compact((*a)[i], out);
    }
    out.push_back(']');
  } else if (const auto* o = std::get_if<Object>(&v.v)) {
    out.push_back('{');
    for (size_t i = 0; i < o->size(); ++i) {
      if (i) out.push_back(',');
      append_string(out, (*o)[i].key);
      out.push_back(':');
      emit_compact((*o)[i].value, out);
    }
    out.push_back('}');
  } else {
    emit_scalar(v, out);
  }
}

void indent(std::string& out, int level) { out.append(size_t(level) * 2, ' '); }

void emit_pretty(const Value& v, int level, std::string& out) {
  if (const auto* a = std::get_if<Array>(&v.v)) {
    if (a->empty()) {
      out += "[]";
    } else if (std::none_of(a->begin(), a->end(), is_container)) {
      out.push_back('[');
      for (size_t i = 0; i < a->size(); ++i) {
        if (i) out += ", ";
        emit_scalar((*a)[i], out);
      }
      out.push_back(']');
    } else {
      out += "[\n";
      for (size_t i = 0; i < a->size(); ++i) {
        indent(out, level + 1);
        emit_pretty((*a)[i], level + 1, out);
        out += i + 1 < a->size() ? ",\n" : "\n";
      }
      indent(out, level);
      out.push_back(']');
    }
  } else if (const auto* o = std::get_if<Object>(&v.v)) {
    if (o->empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    for (size_t i = 0; i < o->size(); ++i) {
      indent(out, level + 1);
      append_string(out, (*o)[i].key);
      out += ": ";
      emit_pretty((*o)[i].value, level + 1, out);
      out += i + 1 < o->size() ? ",\n" : "\n";
    }
    indent(out, level);
    out.push_back('}');
  } else {
    emit_scalar(v, out);
  }
}

Value parse(std::string_view text, const std::string& source, int max_depth) {
  const char* consumed = text.data();
  Builder builder(text, source, max_depth, &consumed);
  const bool ok = nlohmann::json::sax_parse(CountingIterator(text.data(), &consumed),
                                            CountingIterator(text.data() + text.size(), &consumed), &builder,
                                            nlohmann::json::input_format_t::json, /*strict=*/true,
                                            /*ignore_comments=*/false);
  if (!ok) throw ProjectError(cat(source, ": not valid JSON"));  // not reached: the builder throws first
  // The parser took a NUL byte for the end of the input: whatever follows it was not read.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    throw ProjectError(cat(source, ": ", line_column(text, nul), ": expected the end of the file, found a NUL byte"));
  return builder.take_root();
}

}  // namespace plexus::graph::json
