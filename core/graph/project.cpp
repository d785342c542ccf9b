#include "graph/project.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "io/atomic_file.h"
#include "util/error.h"

namespace plexus::graph {
namespace {

// ---------------------------------------------------------------------------------------------
// Strings. Messages are built by appending (GCC 12 reports false -Wrestrict positives on some
// `"literal" + std::string` chains).

void append_part(std::string& s, std::string_view part) { s.append(part); }
void append_part(std::string& s, char c) { s.push_back(c); }

template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (append_part(s, parts), ...);
  return s;
}

std::string format_double(double d) {  // finite d: shortest text that reads back exactly
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";  // stays a real number when read back
  return s;
}

// Appends `s` as a JSON string literal. Returns false (with `out` partly written) when `s`
// is not valid UTF-8 (the same rules the reader applies: no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool append_json_string(std::string& out, std::string_view s) {
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

// A number's text for a message (it may be a million digits long).
std::string shown_number(std::string_view t) { return t.size() <= 40 ? std::string(t) : cat(t.substr(0, 30), "..."); }

// A string for a message: quoted, control characters escaped, at most ~60 bytes.
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

// JSON paths in messages: nodes[3].params.out_features, view["odd key"].
std::string key_path(const std::string& path, std::string_view key) {
  bool plain = !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_');
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) plain = false;
  if (plain) return path.empty() ? std::string(key) : cat(path, '.', key);
  return cat(path, '[', shown(key), ']');
}

std::string index_path(const std::string& path, size_t i) { return cat(path, '[', std::to_string(i), ']'); }

// "line L, column C" of a byte offset; columns count characters (UTF-8 sequences), from 1.
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

// ---------------------------------------------------------------------------------------------
// A small JSON document that remembers where each value starts, so that errors found while
// reading the project can point at the line and column as well as the JSON path.

struct Member;
struct Value;
using Array = std::vector<Value>;
using Object = std::vector<Member>;  // in file order; keys are unique (the parser checks)

struct Value {
  // uint64_t only for integers above INT64_MAX.
  std::variant<std::nullptr_t, bool, int64_t, uint64_t, double, std::string, Array, Object> v;
  size_t offset = 0;  // first byte in the text
};

struct Member {
  std::string key;
  size_t key_offset = 0;
  Value value;
};

// "got a string ("abc")", for type errors.
std::string got(const Value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) return "got null";
        else if constexpr (std::is_same_v<T, bool>) return x ? "got a boolean (true)" : "got a boolean (false)";
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>)
          return cat("got an integer (", std::to_string(x), ')');
        else if constexpr (std::is_same_v<T, double>) return cat("got a number (", format_double(x), ')');
        else if constexpr (std::is_same_v<T, std::string>) return cat("got a string (", shown(x), ')');
        else if constexpr (std::is_same_v<T, Array>) return "got an array";
        else return "got an object";
      },
      v.v);
}

// Writing. Compact: no whitespace at all. Pretty: objects one member per line, arrays of
// scalars on one line, other arrays one element per line.
bool is_container(const Value& v) { return std::holds_alternative<Array>(v.v) || std::holds_alternative<Object>(v.v); }

void emit_scalar(const Value& v, std::string& out) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) out += "null";
        else if constexpr (std::is_same_v<T, bool>) out += x ? "true" : "false";
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) out += std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) out += format_double(x);
        else if constexpr (std::is_same_v<T, std::string>) append_json_string(out, x);  // valid: it was parsed
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
      append_json_string(out, (*o)[i].key);
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
      append_json_string(out, (*o)[i].key);
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
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

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


// Parses JSON text into a Value. Syntax errors, nesting deeper than `max_depth`, duplicate
// keys and numbers out of range throw ProjectError starting with `source`.
Value parse_json(std::string_view text, const std::string& source, int max_depth) {
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

// ---------------------------------------------------------------------------------------------
// Reading a project from the document. Types and structure only: what the values mean is the
// validator's business.

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

class ProjectReader {
 public:
  ProjectReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Graph read(const Value& root) {
    const Object* top = std::get_if<Object>(&root.v);
    if (!top) fail("", root.offset, cat("expected a JSON object at the top level, ", got(root)));
    // The version first: a newer file may have anything else changed.
    const Member* format = find(*top, "format");
    if (!format)
      fail("", root.offset, "missing \"format\", the format version: this is not a Plexus project file");
    read_format(format->value);
    check_keys(*top, "", {"format", "nodes", "edges", "dataset", "training", "view"},
               "a project has format, nodes, edges, dataset, training and view");

    Graph g;
    read_nodes(require(*top, root, "", "nodes", " (the list of nodes, may be empty)"), g.nodes);
    read_edges(require(*top, root, "", "edges", " (the list of edges, may be empty)"), g.edges);
    if (const Member* m = find(*top, "dataset")) read_dataset(m->value, g.dataset);
    if (const Member* m = find(*top, "training")) read_training(m->value, g.training);
    if (const Member* m = find(*top, "view")) {
      if (!std::holds_alternative<Object>(m->value.v)) fail("view", m->value.offset, cat("expected an object, ", got(m->value)));
      emit_compact(m->value, g.view);
    }
    return g;
  }

 private:
  [[noreturn]] void fail(const std::string& path, size_t offset, const std::string& what) const {
    throw ProjectError(cat(source_, ": ", path, path.empty() ? "" : ": ", what, " (", line_column(text_, offset), ')'));
  }

  static const Member* find(const Object& o, std::string_view key) {
    for (const Member& m : o)
      if (m.key == key) return &m;
    return nullptr;
  }
  const Value& require(const Object& o, const Value& ov, const std::string& path, std::string_view key,
                       std::string_view hint = "") const {
    const Member* m = find(o, key);
    if (!m) fail(path, ov.offset, cat("missing ", shown(key), hint));
    return m->value;
  }
  void check_keys(const Object& o, const std::string& path, std::initializer_list<std::string_view> allowed,
                  const char* description) const {
    for (const Member& m : o)
      if (std::find(allowed.begin(), allowed.end(), m.key) == allowed.end())
        fail(path, m.key_offset, cat("unknown key ", shown(m.key), "; ", description));
  }
  const Object& object(const Value& v, const std::string& path, const char* what) const {
    const Object* o = std::get_if<Object>(&v.v);
    if (!o) fail(path, v.offset, cat("expected ", what, ", ", got(v)));
    return *o;
  }
  const Array& array(const Value& v, const std::string& path, const char* what) const {
    const Array* a = std::get_if<Array>(&v.v);
    if (!a) fail(path, v.offset, cat("expected ", what, ", ", got(v)));
    return *a;
  }
  [[noreturn]] void out_of_range(const std::string& path, const Value& v, uint64_t u) const {
    fail(path, v.offset,
         cat("integer ", std::to_string(u), " is out of range; the largest allowed is ", std::to_string(kInt64Max)));
  }

  std::string string(const Value& v, const std::string& path) const {
    const std::string* s = std::get_if<std::string>(&v.v);
    if (!s) fail(path, v.offset, cat("expected a string, ", got(v)));
    return *s;
  }
  int64_t integer(const Value& v, const std::string& path) const {
    if (const int64_t* i = std::get_if<int64_t>(&v.v)) return *i;
    if (const uint64_t* u = std::get_if<uint64_t>(&v.v)) out_of_range(path, v, *u);
    fail(path, v.offset, cat("expected an integer, ", got(v)));
  }
  double number(const Value& v, const std::string& path) const {
    if (const double* d = std::get_if<double>(&v.v)) return *d;
    if (const int64_t* i = std::get_if<int64_t>(&v.v)) return double(*i);
    if (const uint64_t* u = std::get_if<uint64_t>(&v.v)) return double(*u);
    fail(path, v.offset, cat("expected a number, ", got(v)));
  }
  bool boolean(const Value& v, const std::string& path) const {
    if (const bool* b = std::get_if<bool>(&v.v)) return *b;
    fail(path, v.offset, cat("expected true or false, ", got(v)));
  }

  void read_format(const Value& v) const {
    if (const uint64_t* u = std::get_if<uint64_t>(&v.v)) newer(std::to_string(*u));
    const int64_t f = integer(v, "format");
    if (f > kProjectFormat) newer(std::to_string(f));
    if (f < 1)
      fail("format", v.offset,
           cat("invalid format version ", std::to_string(f), "; this version reads format ", std::to_string(kProjectFormat)));
  }
  [[noreturn]] void newer(const std::string& f) const {
    throw ProjectError(cat(source_, ": was written by a newer Plexus (format ", f, "); this version reads format ",
                           std::to_string(kProjectFormat)));
  }

  void read_nodes(const Value& v, std::vector<Node>& nodes) const {
    const Array& a = array(v, "nodes", "an array of nodes");
    std::unordered_map<std::string, size_t> ids;  // id -> index
    nodes.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string path = index_path("nodes", i);
      const Object& o = object(a[i], path, "an object (a node)");
      check_keys(o, path, {"id", "type", "name", "params", "position"}, "a node has id, type, name, params and position");
      Node n;
      const Value& id = require(o, a[i], path, "id");
      n.id = string(id, key_path(path, "id"));
      if (!valid_node_id(n.id))
        fail(key_path(path, "id"), id.offset,
             cat(shown(n.id),
                 " is not a valid node id; ids use letters, digits, '_' and '-', start with a letter or '_' and have "
                 "at most 128 characters"));
      if (const auto [it, fresh] = ids.emplace(n.id, i); !fresh)
        fail(key_path(path, "id"), id.offset,
             cat("duplicate node id ", shown(n.id), ", also used by nodes[", std::to_string(it->second), ']'));
      n.type = string(require(o, a[i], path, "type"), key_path(path, "type"));
      if (const Member* m = find(o, "name")) n.name = string(m->value, key_path(path, "name"));
      if (const Member* m = find(o, "params")) read_params(m->value, key_path(path, "params"), n.params);
      if (const Member* m = find(o, "position")) n.position = read_position(m->value, key_path(path, "position"));
      nodes.push_back(std::move(n));
    }
  }

  void read_params(const Value& v, const std::string& path, std::map<std::string, ParamValue>& params) const {
    for (const Member& m : object(v, path, "an object mapping parameter names to values")) {
      const std::string p = key_path(path, m.key);
      const Value& x = m.value;
      ParamValue value;
      if (const bool* b = std::get_if<bool>(&x.v)) {
        value = *b;
      } else if (const int64_t* i = std::get_if<int64_t>(&x.v)) {
        value = *i;
      } else if (const uint64_t* u = std::get_if<uint64_t>(&x.v)) {
        out_of_range(p, x, *u);
      } else if (const double* d = std::get_if<double>(&x.v)) {
        value = *d;
      } else if (const std::string* s = std::get_if<std::string>(&x.v)) {
        value = *s;
      } else if (const Array* a = std::get_if<Array>(&x.v)) {
        std::vector<int64_t> list;
        list.reserve(a->size());
        for (size_t k = 0; k < a->size(); ++k) list.push_back(integer((*a)[k], index_path(p, k)));
        value = std::move(list);
      } else {
        fail(p, x.offset, cat("expected a number, true or false, a string or an array of integers, ", got(x)));
      }
      params.emplace(m.key, std::move(value));
    }
  }

  Position read_position(const Value& v, const std::string& path) const {
    const Array& a = array(v, path, "[x, y]");
    if (a.size() != 2)
      fail(path, v.offset, cat("expected [x, y], got an array of ", std::to_string(a.size()), a.size() == 1 ? " element" : " elements"));
    return Position{number(a[0], index_path(path, 0)), number(a[1], index_path(path, 1))};
  }

  void read_edges(const Value& v, std::vector<Edge>& edges) const {
    const Array& a = array(v, "edges", "an array of edges");
    edges.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string path = index_path("edges", i);
      const Object& o = object(a[i], path, "an object (an edge)");
      check_keys(o, path, {"from", "to"}, "an edge has from and to");
      Edge e;
      e.from = read_port(require(o, a[i], path, "from", " ([node, port])"), key_path(path, "from"));
      e.to = read_port(require(o, a[i], path, "to", " ([node, port])"), key_path(path, "to"));
      edges.push_back(std::move(e));
    }
  }

  PortRef read_port(const Value& v, const std::string& path) const {
    const Array& a = array(v, path, "[node, port]");
    if (a.size() != 2)
      fail(path, v.offset,
           cat("expected [node, port], got an array of ", std::to_string(a.size()), a.size() == 1 ? " element" : " elements"));
    return PortRef{string(a[0], index_path(path, 0)), string(a[1], index_path(path, 1))};
  }

  void read_dataset(const Value& v, DatasetBinding& d) const {
    const Object& o = object(v, "dataset", "an object");
    check_keys(o, "dataset", {"kind", "path", "target", "task"}, "a dataset has kind, path, target and task");
    if (const Member* m = find(o, "kind")) d.kind = string(m->value, "dataset.kind");
    if (const Member* m = find(o, "path")) d.path = string(m->value, "dataset.path");
    if (const Member* m = find(o, "target")) d.target = string(m->value, "dataset.target");
    if (const Member* m = find(o, "task")) d.task = string(m->value, "dataset.task");
  }

  void read_training(const Value& v, TrainingSettings& t) const {
    const Object& o = object(v, "training", "an object");
    check_keys(o, "training",
               {"optimizer", "lr", "momentum", "nesterov", "weight_decay", "schedule", "step_size", "gamma", "batch_size",
                "epochs", "seed", "device"},
               "training has optimizer, lr, momentum, nesterov, weight_decay, schedule, step_size, gamma, batch_size, "
               "epochs, seed and device");
    for (const Member& m : o) {
      const std::string p = key_path("training", m.key);
      const Value& x = m.value;
      if (m.key == "optimizer") t.optimizer = string(x, p);
      else if (m.key == "lr") t.lr = number(x, p);
      else if (m.key == "momentum") t.momentum = number(x, p);
      else if (m.key == "nesterov") t.nesterov = boolean(x, p);
      else if (m.key == "weight_decay") t.weight_decay = number(x, p);
      else if (m.key == "schedule") t.schedule = string(x, p);
      else if (m.key == "step_size") t.step_size = integer(x, p);
      else if (m.key == "gamma") t.gamma = number(x, p);
      else if (m.key == "batch_size") t.batch_size = integer(x, p);
      else if (m.key == "epochs") t.epochs = integer(x, p);
      else if (m.key == "device") t.device = string(x, p);
      else t.seed = seed(x, p);
    }
  }

  uint64_t seed(const Value& v, const std::string& path) const {
    if (const uint64_t* u = std::get_if<uint64_t>(&v.v)) return *u;
    if (const int64_t* i = std::get_if<int64_t>(&v.v); i && *i >= 0) return uint64_t(*i);
    fail(path, v.offset, cat("expected a non-negative integer, ", got(v)));
  }

  std::string_view text_;
  const std::string& source_;
};

// ---------------------------------------------------------------------------------------------
// Writing: the canonical text. Everything written is checked to read back.

class ProjectWriter {
 public:
  std::string write(const Graph& g) {
    out_ = "{\n  \"format\": ";
    out_ += std::to_string(kProjectFormat);
    out_ += ",\n  \"nodes\": ";
    write_nodes(g.nodes);
    out_ += ",\n  \"edges\": ";
    write_edges(g.edges);
    const DatasetBinding& d = g.dataset;
    if (!d.kind.empty() || !d.path.empty() || !d.target.empty() || !d.task.empty()) {
      out_ += ",\n  \"dataset\": {";
      const char* sep = "\n";
      for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"kind", &d.kind},
                                       {"path", &d.path}, {"target", &d.target}, {"task", &d.task}}) {
        if (value->empty()) continue;
        out_ += sep;
        sep = ",\n";
        member(2, key);
        text(*value, cat("dataset.", key));
      }
      out_ += "\n  }";
    }
    write_training(g.training);
    if (!g.view.empty()) {
      out_ += ",\n  \"view\": ";
      write_view(g.view);
    }
    out_ += "\n}\n";
    return std::move(out_);
  }

 private:
  [[noreturn]] static void fail(const std::string& what) { throw ValueError(cat("cannot save the project: ", what)); }

  void member(int level, std::string_view key) {
    indent(out_, level);
    append_json_string(out_, key);  // our own key names
    out_ += ": ";
  }
  void text(std::string_view s, const std::string& path) {
    if (!append_json_string(out_, s)) fail(cat(path, " is not valid UTF-8"));
  }
  void real(double d, const std::string& path) {
    if (!std::isfinite(d)) fail(cat(path, " is not a finite number (", std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf", ')'));
    out_ += format_double(d);
  }

  void write_nodes(const std::vector<Node>& nodes) {
    if (nodes.empty()) {
      out_ += "[]";
      return;
    }
    std::unordered_map<std::string, size_t> ids;
    out_ += "[\n";
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      const std::string path = index_path("nodes", i);
      if (!valid_node_id(n.id)) fail(cat(path, ".id ", shown(n.id), " is not a valid node id"));
      if (const auto [it, fresh] = ids.emplace(n.id, i); !fresh)
        fail(cat(path, ".id: duplicate node id ", shown(n.id), ", also used by nodes[", std::to_string(it->second), ']'));
      out_ += "    {\n";
      member(3, "id");
      text(n.id, cat(path, ".id"));
      out_ += ",\n";
      member(3, "type");
      text(n.type, cat(path, ".type"));
      out_ += ",\n";
      member(3, "name");
      text(n.name, cat(path, ".name"));
      out_ += ",\n";
      member(3, "params");
      if (n.params.empty()) {
        out_ += "{}";
      } else {
        out_ += "{\n";
        size_t k = 0;
        for (const auto& [name, value] : n.params) {
          const std::string p = key_path(cat(path, ".params"), name);
          indent(out_, 4);
          text(name, p);
          out_ += ": ";
          param(value, p);
          out_ += ++k < n.params.size() ? ",\n" : "\n";
        }
        indent(out_, 3);
        out_ += "}";
      }
      out_ += ",\n";
      member(3, "position");
      out_ += "[";
      real(n.position.x, cat(path, ".position[0]"));
      out_ += ", ";
      real(n.position.y, cat(path, ".position[1]"));
      out_ += "]\n    }";
      out_ += i + 1 < nodes.size() ? ",\n" : "\n";
    }
    out_ += "  ]";
  }

  void param(const ParamValue& value, const std::string& path) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            out_ += std::to_string(x);
          } else if constexpr (std::is_same_v<T, double>) {
            real(x, path);
          } else if constexpr (std::is_same_v<T, bool>) {
            out_ += x ? "true" : "false";
          } else if constexpr (std::is_same_v<T, std::string>) {
            text(x, path);
          } else {
            out_ += "[";
            for (size_t k = 0; k < x.size(); ++k) {
              if (k) out_ += ", ";
              out_ += std::to_string(x[k]);
            }
            out_ += "]";
          }
        },
        value);
  }

  void write_edges(const std::vector<Edge>& edges) {
    if (edges.empty()) {
      out_ += "[]";
      return;
    }
    out_ += "[\n";
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      const std::string path = index_path("edges", i);
      out_ += "    {\"from\": [";
      text(e.from.node, cat(path, ".from[0]"));
      out_ += ", ";
      text(e.from.port, cat(path, ".from[1]"));
      out_ += "], \"to\": [";
      text(e.to.node, cat(path, ".to[0]"));
      out_ += ", ";
      text(e.to.port, cat(path, ".to[1]"));
      out_ += "]}";
      out_ += i + 1 < edges.size() ? ",\n" : "\n";
    }
    out_ += "  ]";
  }

  void write_training(const TrainingSettings& t) {
    out_ += ",\n  \"training\": {\n";
    member(2, "optimizer");
    text(t.optimizer, "training.optimizer");
    out_ += ",\n";
    member(2, "lr");
    real(t.lr, "training.lr");
    out_ += ",\n";
    member(2, "momentum");
    real(t.momentum, "training.momentum");
    out_ += ",\n";
    member(2, "nesterov");
    out_ += t.nesterov ? "true" : "false";
    out_ += ",\n";
    member(2, "weight_decay");
    real(t.weight_decay, "training.weight_decay");
    out_ += ",\n";
    member(2, "schedule");
    text(t.schedule, "training.schedule");
    out_ += ",\n";
    member(2, "step_size");
    out_ += std::to_string(t.step_size);
    out_ += ",\n";
    member(2, "gamma");
    real(t.gamma, "training.gamma");
    out_ += ",\n";
    member(2, "batch_size");
    out_ += std::to_string(t.batch_size);
    out_ += ",\n";
    member(2, "epochs");
    out_ += std::to_string(t.epochs);
    out_ += ",\n";
    member(2, "seed");
    out_ += std::to_string(t.seed);
    out_ += ",\n";
    member(2, "device");
    text(t.device, "training.device");
    out_ += "\n  }";
  }

  void write_view(const std::string& view) {
    Value v;
    try {
      // One level less than a file allows: the view sits inside the top-level object.
      v = parse_json(view, "the view state", kProjectMaxDepth - 1);
    } catch (const ProjectError& e) {
      fail(e.what());
    }
    if (!std::holds_alternative<Object>(v.v)) fail(cat("the view state must be a JSON object, ", got(v)));
    emit_pretty(v, 1, out_);
  }

  std::string out_;
};

}  // namespace

Graph parse_project(std::string_view text, const std::string& source_name) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark
  if (std::all_of(text.begin(), text.end(), is_space))
    throw ProjectError(cat(source_name, ": the file is empty (a Plexus project is a JSON object)"));
  const Value root = parse_json(text, source_name, kProjectMaxDepth);
  return ProjectReader(text, source_name).read(root);
}

Graph load_project(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw IoError(cat(name, ": is a directory, not a project file"));
  auto too_large = [&] {
    return ProjectError(cat(name, ": the file is larger than ", std::to_string(kProjectMaxFileSize >> 20),
                            " MiB, too large for a Plexus project"));
  };
  if (const uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > kProjectMaxFileSize) throw too_large();
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw IoError(cat(name, ": cannot open: ", std::strerror(errno)));
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {  // the size may change, or be unknown (a pipe)
    text.append(buf, n);
    if (text.size() > kProjectMaxFileSize) throw too_large();
  }
  if (std::ferror(f.get())) throw IoError(cat(name, ": read error: ", std::strerror(errno)));
  return parse_project(text, name);
}

std::string serialize_project(const Graph& graph) { return ProjectWriter().write(graph); }

void save_project(const std::filesystem::path& path, const Graph& graph) {
  const std::string text = serialize_project(graph);  // throws before the file is touched
  io::write_file_atomically(path, text);
}

}  // namespace plexus::graph
