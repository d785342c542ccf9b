#pragma once
// Random damage to project files, for fuzz tests of the loader (and, later, the validator).
//
// mutate_project_text() takes a valid project text and applies a few seeded mutations:
// structural ones on a parsed copy (delete a key, change a value's type, put extreme numbers
// or odd strings in place, add edges that make cycles or dangle, duplicate nodes and keys,
// add unknown keys, nest a value very deeply) and then, sometimes, byte-level ones on the
// printed text (truncate, flip, insert, delete or repeat bytes). The result may be anything
// from a valid project to garbage; the loader must either accept it or throw plexus::Error.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace plexus::testing {

// A minimal JSON tree that keeps scalars as their source text, so that a mutation can put any
// literal in place (1e999, 2^64, "\ud800"). fuzz_parse reads well-formed JSON only (the texts
// the mutations start from); fuzz_print may print malformed JSON on purpose.
struct FuzzJson {
  struct Member;  // not std::pair: a pair of an incomplete type is undefined (clang refuses it)
  enum class Kind { Scalar, Array, Object } kind = Kind::Scalar;
  std::string text;              // Scalar: as written, strings with quotes
  std::vector<FuzzJson> items;   // Array
  std::vector<Member> members;   // Object
};
struct FuzzJson::Member {
  std::string key;  // as written, with quotes
  FuzzJson value;
};

namespace fuzz_detail {

inline void skip_ws(const std::string& s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
}

inline std::string read_string_literal(const std::string& s, size_t& i) {
  const size_t b = i++;
  while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
  ++i;
  return s.substr(b, i - b);
}

inline FuzzJson parse_value(const std::string& s, size_t& i) {
  skip_ws(s, i);
  FuzzJson v;
  if (i >= s.size()) return v;
  if (s[i] == '{') {
    v.kind = FuzzJson::Kind::Object;
    ++i;
    skip_ws(s, i);
    if (i < s.size() && s[i] == '}') return ++i, v;
    while (i < s.size()) {
      skip_ws(s, i);
      std::string key = read_string_literal(s, i);
      skip_ws(s, i);
      ++i;  // ':'
      v.members.push_back({std::move(key), parse_value(s, i)});
      skip_ws(s, i);
      if (i < s.size() && s[i++] == '}') break;
    }
  } else if (s[i] == '[') {
    v.kind = FuzzJson::Kind::Array;
    ++i;
    skip_ws(s, i);
    if (i < s.size() && s[i] == ']') return ++i, v;
    while (i < s.size()) {
      v.items.push_back(parse_value(s, i));
      skip_ws(s, i);
      if (i < s.size() && s[i++] == ']') break;
    }
  } else if (s[i] == '"') {
    v.text = read_string_literal(s, i);
  } else {
    const size_t b = i;
    while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n') ++i;
    v.text = s.substr(b, i - b);
  }
  return v;
}

inline void print(const FuzzJson& v, bool pretty, int level, std::string& out) {
  std::string nl, close;
  if (pretty) {
    nl.append(1, '\n').append(size_t(level + 1) * 2, ' ');
    close.append(1, '\n').append(size_t(level) * 2, ' ');
  }
  if (v.kind == FuzzJson::Kind::Scalar) {
    out += v.text;
  } else if (v.kind == FuzzJson::Kind::Array) {
    out += '[';
    for (size_t k = 0; k < v.items.size(); ++k) {
      if (k) out += ',';
      out += nl;
      print(v.items[k], pretty, level + 1, out);
    }
    out += v.items.empty() ? "" : close;
    out += ']';
  } else {
    out += '{';
    for (size_t k = 0; k < v.members.size(); ++k) {
      if (k) out += ',';
      out += nl;
      out += v.members[k].key;
      out += pretty ? ": " : ":";
      print(v.members[k].value, pretty, level + 1, out);
    }
    out += v.members.empty() ? "" : close;
    out += '}';
  }
}

inline void collect(FuzzJson& v, std::vector<FuzzJson*>& all) {
  all.push_back(&v);
  for (FuzzJson& c : v.items) collect(c, all);
  for (auto& m : v.members) collect(m.value, all);
}

inline bool is_number(const FuzzJson& v) {
  return v.kind == FuzzJson::Kind::Scalar && !v.text.empty() &&
         (v.text[0] == '-' || (v.text[0] >= '0' && v.text[0] <= '9'));
}

inline FuzzJson scalar(std::string text) {
  FuzzJson v;
  v.text = std::move(text);
  return v;
}

inline FuzzJson* member(FuzzJson& obj, const std::string& quoted_key) {
  if (obj.kind != FuzzJson::Kind::Object) return nullptr;
  for (auto& m : obj.members)
    if (m.key == quoted_key) return &m.value;
  return nullptr;
}

template <class T>
const T& pick(const std::vector<T>& v, std::mt19937_64& rng) {  // v must not be empty
  return v[size_t(rng() % v.size())];
}

// The ids of the nodes (as string literals) and the edges array, when still recognisable.
inline std::vector<std::string> node_ids(FuzzJson& root) {
  std::vector<std::string> ids;
  if (FuzzJson* nodes = member(root, "\"nodes\""); nodes && nodes->kind == FuzzJson::Kind::Array)
    for (FuzzJson& n : nodes->items)
      if (FuzzJson* id = member(n, "\"id\""); id && id->kind == FuzzJson::Kind::Scalar) ids.push_back(id->text);
  return ids;
}

inline FuzzJson port(const std::string& node, const std::string& port_name) {
  FuzzJson p;
  p.kind = FuzzJson::Kind::Array;
  p.items = {scalar(node), scalar(port_name)};
  return p;
}

inline void mutate_tree(FuzzJson& root, std::mt19937_64& rng) {
  static const std::vector<std::string> any_values = {
      "null", "true", "false", "0", "-1", "1.5", "\"x\"", "\"\"", "[]", "{}", "[1, 2]", "[\"a\", \"b\"]",
      "{\"a\": 1}", "\"Linear\"", "\"in\"", "[[1]]", "[1.5, 2]", "[\"fc1\", \"output\"]"};
  static const std::vector<std::string> extreme_numbers = {
      "1e308", "-1e308", "1e309", "-1e400", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
      "-9223372036854775809", "18446744073709551615", "18446744073709551616", "4.9e-324", "1e-400", "-0", "-0.0",
      "0.1", "2.5e+10", "123456789012345678901234567890", "0", "1", "2", "1.0", "-5"};
  static const std::vector<std::string> odd_strings = {
      "\"\"", "\"\\u0000\"", "\"\\ud83d\\ude00\"", "\"\\ud800\"", "\"\xc3\xa9\"", "\"a b\"", "\"1abc\"", "\"_\"",
      "\"fc1\"", "\"in\"", "\"a.b\"", std::string(1, '"').append(200, 'x').append(1, '"'), "\"\\\"\"", "\"tab\\there\""};

  std::vector<FuzzJson*> all;
  collect(root, all);
  std::vector<FuzzJson*> objects, numbers, strings;
  for (FuzzJson* v : all) {
    if (v->kind == FuzzJson::Kind::Object) objects.push_back(v);
    if (is_number(*v)) numbers.push_back(v);
    if (v->kind == FuzzJson::Kind::Scalar && !v->text.empty() && v->text[0] == '"') strings.push_back(v);
  }
  switch (rng() % 10) {
    case 0: {  // delete a key
      if (objects.empty()) break;
      FuzzJson* o = pick(objects, rng);
      if (!o->members.empty()) o->members.erase(o->members.begin() + std::ptrdiff_t(rng() % o->members.size()));
      break;
    }
    case 1: {  // change a value's type (or shape)
      FuzzJson* v = pick(all, rng);
      if (v == &root && rng() % 4) break;  // replacing the whole document rarely
      size_t i = 0;
      *v = parse_value(pick(any_values, rng), i);
      break;
    }
    case 2:  // extreme numbers
      if (!numbers.empty()) *pick(numbers, rng) = scalar(pick(extreme_numbers, rng));
      break;
    case 3:  // odd strings (ids, types, ports, names)
      if (!strings.empty()) *pick(strings, rng) = scalar(pick(odd_strings, rng));
      break;
    case 4: {  // edges that make a cycle, a self-loop or dangle
      const std::vector<std::string> ids = node_ids(root);
      FuzzJson* edges = member(root, "\"edges\"");
      if (!edges || edges->kind != FuzzJson::Kind::Array || ids.empty()) break;
      const std::string a = pick(ids, rng), b = pick(ids, rng);
      for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{a, b}, {b, a}}) {
        FuzzJson e;
        e.kind = FuzzJson::Kind::Object;
        e.members = {{"\"from\"", port(from, "\"output\"")}, {"\"to\"", port(rng() % 8 ? to : "\"ghost\"", "\"input\"")}};
        edges->items.push_back(std::move(e));
      }
      break;
    }
    case 5: {  // duplicate a node (same id: refused; sometimes with a fresh id: fine)
      FuzzJson* nodes = member(root, "\"nodes\"");
      if (!nodes || nodes->kind != FuzzJson::Kind::Array || nodes->items.empty()) break;
      FuzzJson copy = pick(nodes->items, rng);
      if (rng() % 2)
        if (FuzzJson* id = member(copy, "\"id\"")) *id = scalar(std::string("\"copy_").append(std::to_string(rng() % 1000)).append("\""));
      nodes->items.push_back(std::move(copy));
      break;
    }
    case 6: {  // duplicate a key
      if (objects.empty()) break;
      FuzzJson* o = pick(objects, rng);
      if (!o->members.empty()) o->members.push_back(pick(o->members, rng));
      break;
    }
    case 7: {  // an unknown key
      static const std::vector<std::string> keys = {"\"extra\"", "\"Format\"", "\"\"", "\"nodes \"", "\"view\""};
      if (!objects.empty()) pick(objects, rng)->members.push_back({pick(keys, rng), scalar("1")});
      break;
    }
    case 8: {  // deep nesting around a value
      FuzzJson* v = pick(all, rng);
      const int depth = 1 + int(rng() % 100);
      for (int k = 0; k < depth; ++k) {
        FuzzJson outer;
        outer.kind = rng() % 2 ? FuzzJson::Kind::Array : FuzzJson::Kind::Object;
        if (outer.kind == FuzzJson::Kind::Array) outer.items.push_back(std::move(*v));
        else outer.members.push_back({"\"k\"", std::move(*v)});
        *v = std::move(outer);
      }
      break;
    }
    default: {  // repeat an array element (nodes, edges, list entries)
      std::vector<FuzzJson*> arrays;
      for (FuzzJson* v : all)
        if (v->kind == FuzzJson::Kind::Array && !v->items.empty()) arrays.push_back(v);
      if (!arrays.empty()) {
        FuzzJson* a = pick(arrays, rng);
        a->items.push_back(pick(a->items, rng));
      }
    }
  }
}

inline void mutate_bytes(std::string& s, std::mt19937_64& rng) {
  if (s.empty()) {
    s.push_back(char(rng()));
    return;
  }
  const size_t at = size_t(rng() % s.size());
  switch (rng() % 5) {
    case 0: s.resize(at); break;                                           // truncate
    case 1: s[at] = char(s[at] ^ char(1 + rng() % 255)); break;            // flip
    case 2: s.insert(s.begin() + std::ptrdiff_t(at), char(rng())); break;  // insert
    case 3: s.erase(at, size_t(1 + rng() % 16)); break;                    // delete
    default: s.insert(at, s.substr(at, size_t(1 + rng() % 32)));           // repeat
  }
}

}  // namespace fuzz_detail

inline FuzzJson fuzz_parse(const std::string& text) {
  size_t i = 0;
  return fuzz_detail::parse_value(text, i);
}

inline std::string fuzz_print(const FuzzJson& v, bool pretty) {
  std::string out;
  fuzz_detail::print(v, pretty, 0, out);
  return out;
}

// 1 to 3 mutations of `valid_text`: structural first (on the parsed text), then byte-level ones
// on the printed result about half the time. Deterministic for a given rng state.
inline std::string mutate_project_text(const std::string& valid_text, std::mt19937_64& rng) {
  FuzzJson root = fuzz_parse(valid_text);
  const int structural = int(rng() % 3);
  for (int k = 0; k < structural; ++k) fuzz_detail::mutate_tree(root, rng);
  std::string text = fuzz_print(root, rng() % 2 == 0);
  const int bytes = structural == 0 ? 1 + int(rng() % 2) : int(rng() % 2);
  for (int k = 0; k < bytes; ++k) fuzz_detail::mutate_bytes(text, rng);
  return text;
}

}  // namespace plexus::testing
