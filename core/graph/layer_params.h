#pragma once
// A layer type's parameters as a plain struct of its own (`struct LinearParams { int64_t
// out_features; bool bias; ... }`), listed field by field with member pointers:
//   param("out_features", "Output features", &LinearParams::out_features, 10, 1, kBig, "...")
// The list gives the registry its ParamSpecs and reads a node's values into the struct once,
// typed, so a misspelt parameter name is a compile error, not a silent default.
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/param_spec.h"
#include "util/error.h"

namespace plexus::graph {

// The top of a range with no real limit: 2^24.
inline constexpr double kBig = 1 << 24;

// A size along an image's height and width (a kernel, a stride, a dilation): an IntPair
// parameter's one number for both or its [h, w]. A parameter along one axis (Conv1d's) is an
// Int, read into both.
struct Size2 {
  int64_t h = 0, w = 0;
};
// Zeros on both sides of each axis ([h, w] as Size2), or PyTorch's padding="same": as many as
// keep a stride-1 output the input's size, dilation × (kernel − 1) per axis, the odd one of an
// odd total at the end (bottom, right). "valid" is 0.
struct Padding2 {
  int64_t h = 0, w = 0;
  bool same = false;
};

template <class P>
struct ParamField {
  ParamSpec spec;
  std::function<void(P&, const ParamValue&, const Node&)> read;  // sets its member from the value
};

namespace detail {
template <class T>
constexpr const char* kind() {
  if constexpr (std::is_same_v<T, int64_t>) return "a whole number";
  else if constexpr (std::is_same_v<T, double>) return "a number";
  else if constexpr (std::is_same_v<T, bool>) return "true or false";
  else if constexpr (std::is_same_v<T, std::string>) return "one of its choices";
  else if constexpr (std::is_same_v<T, std::vector<double>>) return "a list of numbers";
  else if constexpr (std::is_same_v<T, Size2>) return "a whole number or a pair [h, w]";
  else if constexpr (std::is_same_v<T, Padding2>) return "a whole number, a pair [h, w], same or valid";
  else if constexpr (std::is_same_v<T, std::vector<std::string>>) return "a list of names";
  else return "a list of whole numbers";
}

// A value of the field's type; a whole number is a real number too (check_param_value agrees),
// and one number is both of a Size2's. The validator checked the values before (check_params), so
// a mismatch here is a caller's bug.
template <class T>
T read(const ParamValue& v, const Node& node, const std::string& name) {
  if constexpr (std::is_same_v<T, double>)
    if (const int64_t* whole = std::get_if<int64_t>(&v)) return double(*whole);
  if constexpr (std::is_same_v<T, std::vector<double>>)
    if (const auto* whole = std::get_if<std::vector<int64_t>>(&v)) return T(whole->begin(), whole->end());
  if constexpr (std::is_same_v<T, std::vector<std::string>>)  // a file's [] reads as an int list
    if (const auto* whole = std::get_if<std::vector<int64_t>>(&v); whole && whole->empty()) return T{};
  if constexpr (std::is_same_v<T, Size2> || std::is_same_v<T, Padding2>) {
    if (const int64_t* x = std::get_if<int64_t>(&v)) return T{*x, *x};
    if (const auto* hw = std::get_if<std::vector<int64_t>>(&v); hw && hw->size() == 2) return T{(*hw)[0], (*hw)[1]};
  }
  if constexpr (std::is_same_v<T, Padding2>) {
    if (const auto* word = std::get_if<std::string>(&v); word && (*word == "same" || *word == "valid"))
      return T{0, 0, *word == "same"};
  } else if constexpr (!std::is_same_v<T, Size2>) {
    if (const T* x = std::get_if<T>(&v)) return *x;
  }
  throw ValueError(node.label() + ": parameter '" + name + "' must be " + kind<T>() + ", got " + to_string(v));
}

template <class P, class T>
ParamField<P> field(ParamSpec spec, T P::*member) {
  auto read = [member, name = spec.name](P& p, const ParamValue& v, const Node& node) {
    p.*member = detail::read<T>(v, node, name);
  };
  return {std::move(spec), std::move(read)};
}
}  // namespace detail

template <class P>
ParamField<P> param(std::string name, std::string label, int64_t P::*member, int64_t def, double lo, double hi,
                    std::string doc) {
  return detail::field({std::move(name), std::move(label), ParamType::Int, def, lo, hi, {}, std::move(doc), {}},
                       member);
}
template <class P>
ParamField<P> param(std::string name, std::string label, double P::*member, double def, double lo, double hi,
                    std::string doc) {
  return detail::field({std::move(name), std::move(label), ParamType::Float, def, lo, hi, {}, std::move(doc), {}},
                       member);
}
template <class P>
ParamField<P> param(std::string name, std::string label, bool P::*member, bool def, std::string doc) {
  return detail::field({std::move(name), std::move(label), ParamType::Bool, def, 0, 1, {}, std::move(doc), {}}, member);
}
template <class P>
ParamField<P> param(std::string name, std::string label, std::vector<int64_t> P::*member, std::vector<int64_t> def,
                    double lo, double hi, std::string doc) {
  return detail::field(
      {std::move(name), std::move(label), ParamType::IntList, std::move(def), lo, hi, {}, std::move(doc), {}}, member);
}
// One of `choices`, as text (a mode such as "nearest" or "bilinear").
template <class P>
ParamField<P> param(std::string name, std::string label, std::string P::*member, std::string def,
                    std::vector<std::string> choices, std::string doc) {
  return detail::field({std::move(name), std::move(label), ParamType::Choice, std::move(def), 0, 0, std::move(choices),
                        std::move(doc), {}},
                       member);
}
template <class P>
ParamField<P> param(std::string name, std::string label, std::vector<double> P::*member, std::vector<double> def,
                    double lo, double hi, std::string doc) {
  return detail::field(
      {std::move(name), std::move(label), ParamType::FloatList, std::move(def), lo, hi, {}, std::move(doc), {}}, member);
}
// A list of names (an Input's table columns); the default is none.
template <class P>
ParamField<P> param(std::string name, std::string label, std::vector<std::string> P::*member, std::string doc,
                    std::string means) {
  return detail::field({std::move(name), std::move(label), ParamType::Names, std::vector<std::string>{}, 0, 0, {},
                        std::move(doc), std::move(means)},
                       member);
}
// A whole-number parameter whose default 0 stands for something else (`means`, e.g. "auto").
template <class P>
ParamField<P> zero_param(std::string name, std::string label, int64_t P::*member, double hi, std::string doc,
                         std::string means) {
  ParamField<P> f = param(std::move(name), std::move(label), member, 0, 0, hi, std::move(doc));
  f.spec.default_means = std::move(means);
  return f;
}

// A size along height and width: one whole number for both or [h, w], each between lo and hi
// (an IntPair); along one axis (`two_d` false, Conv1d's) a whole number.
template <class P>
ParamField<P> param(std::string name, std::string label, Size2 P::*member, int64_t def, double lo, double hi,
                    std::string doc, bool two_d = true) {
  return detail::field({std::move(name), std::move(label), two_d ? ParamType::IntPair : ParamType::Int, def, lo, hi,
                        {}, std::move(doc), {}},
                       member);
}
// A size whose default 0 stands for something else (`means`: a pooling's stride, "= kernel").
template <class P>
ParamField<P> zero_param(std::string name, std::string label, Size2 P::*member, double hi, std::string doc,
                         std::string means, bool two_d = true) {
  ParamField<P> f = param(std::move(name), std::move(label), member, 0, 0, hi, std::move(doc), two_d);
  f.spec.default_means = std::move(means);
  return f;
}
// A padding of whole numbers between lo and hi ([h, w] when `two_d`), or the words "same" and
// "valid" (PyTorch's).
template <class P>
ParamField<P> param(std::string name, std::string label, Padding2 P::*member, int64_t def, double lo, double hi,
                    std::string doc, bool two_d = true) {
  return detail::field({std::move(name), std::move(label), two_d ? ParamType::IntPair : ParamType::Int, def, lo, hi,
                        {"same", "valid"}, std::move(doc), {}},
                       member);
}

template <class P>
std::vector<ParamSpec> specs(const std::vector<ParamField<P>>& fields) {
  std::vector<ParamSpec> out;
  for (const ParamField<P>& f : fields) out.push_back(f.spec);
  return out;
}

// The node's parameters, its type's defaults filled in.
template <class P>
P decode(const Node& node, const std::vector<ParamField<P>>& fields) {
  P p{};
  for (const ParamField<P>& f : fields) f.read(p, param_value(node, f.spec), node);
  return p;
}

// As decode, but a value of the wrong kind reads as its field's default: for a reader of a graph
// whose values are not checked yet (check_params reports them).
template <class P>
P decode_lenient(const Node& node, const std::vector<ParamField<P>>& fields) {
  P p{};
  for (const ParamField<P>& f : fields) {
    try {
      f.read(p, param_value(node, f.spec), node);
    } catch (const ValueError&) {
      f.read(p, f.spec.default_value, node);
    }
  }
  return p;
}

}  // namespace plexus::graph
