#pragma once
// JSON text with positions: a small document model that remembers where each value starts, so
// errors found while reading a file (a project) can name the line and column as well as the
// JSON path ("nodes[3].params.out_features"); and the canonical ways of writing it back. Strict:
// duplicate keys, integers beyond 64 bits, numbers beyond double and nesting deeper than a
// limit are refused with a ProjectError naming the place.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace plexus::graph::json {

// Strings. Messages are built by appending (GCC 12 reports false -Wrestrict positives on some
// `"literal" + std::string` chains).
inline void append_part(std::string& s, std::string_view part) { s.append(part); }
inline void append_part(std::string& s, char c) { s.push_back(c); }

template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (append_part(s, parts), ...);
  return s;
}

// A finite real number as JSON: the shortest text that reads back exactly, always with a '.'
// or an exponent so it stays a real number ("128.0", "1e-05").
std::string real_text(double d);

// Appends `s` as a JSON string literal. Returns false (with `out` partly written) when `s` is not
// valid UTF-8 (the same rules the reader applies: no overlong forms, no surrogates, nothing
// above U+10FFFF).
bool append_string(std::string& out, std::string_view s);

// A string for a message: quoted, control characters escaped, at most ~60 bytes.
std::string shown(std::string_view s);

// JSON paths in messages: nodes[3].params.out_features, view["odd key"].
std::string key_path(const std::string& path, std::string_view key);
std::string index_path(const std::string& path, size_t i);

// "line L, column C" of a byte offset; columns count characters (UTF-8 sequences), from 1.
std::string line_column(std::string_view text, size_t offset);

bool is_space(char c);  // JSON white space

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
std::string got(const Value& v);

// Parses JSON text into a Value. Syntax errors, nesting deeper than `max_depth`, duplicate
// keys and numbers out of range throw ProjectError starting with `source`.
Value parse(std::string_view text, const std::string& source, int max_depth);

// Writing. Compact: no whitespace at all. Pretty: objects one member per line, arrays of
// scalars on one line, other arrays one element per line, indented two spaces a level.
void emit_compact(const Value& v, std::string& out);
void emit_pretty(const Value& v, int level, std::string& out);
void indent(std::string& out, int level);

}  // namespace plexus::graph::json
