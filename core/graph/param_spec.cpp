#include "graph/param_spec.h"

#include <algorithm>
#include <cmath>

#include "util/text.h"

namespace plexus::graph {

std::string to_string(ParamType t) {
  switch (t) {
    case ParamType::Int: return "int";
    case ParamType::Float: return "float";
    case ParamType::Bool: return "bool";
    case ParamType::Choice: return "choice";
    case ParamType::IntList: return "int list";
    case ParamType::FloatList: return "float list";
    case ParamType::IntPair: return "int or [h, w]";
    case ParamType::Names: return "names";
  }
  return "?";
}

const ParamValue& param_value(const Node& node, const ParamSpec& spec) {
  const auto it = node.params.find(spec.name);
  return it != node.params.end() ? it->second : spec.default_value;
}

namespace {
// A bound as the messages write it: "16777216", "0.99", "1e-12" (the shortest text that reads
// back as the same number).
std::string bound_text(const ParamSpec& spec, double bound) {
  if (spec.type != ParamType::Float && spec.type != ParamType::FloatList) return std::to_string(int64_t(bound));
  return shortest_text(bound);
}

bool in_range(const ParamSpec& spec, double x) { return x >= spec.min && x <= spec.max; }

// An Int or IntPair: a whole number, a pair [h, w] (IntPair) or one of its words.
std::string check_whole(const ParamSpec& spec, const ParamValue& value) {
  const bool pair = spec.type == ParamType::IntPair;
  if (const auto* x = std::get_if<int64_t>(&value))
    return in_range(spec, double(*x)) ? "" : "must be " + param_range(spec);
  const auto* list = std::get_if<std::vector<int64_t>>(&value);
  if (pair && list && list->size() == 2)
    return in_range(spec, double((*list)[0])) && in_range(spec, double((*list)[1]))
               ? ""
               : "must have both entries " + param_range(spec);
  const auto* word = std::get_if<std::string>(&value);
  if (word && std::find(spec.choices.begin(), spec.choices.end(), *word) != spec.choices.end()) return "";
  std::vector<std::string> kinds{"a whole number"};
  if (pair) kinds.push_back("a pair [h, w]");
  if (!spec.choices.empty()) kinds.push_back("one of " + join(spec.choices));
  return "must be " + join(kinds, ", ", " or ");
}
}  // namespace

std::string param_range(const ParamSpec& spec) {
  return "between " + bound_text(spec, spec.min) + " and " + bound_text(spec, spec.max);
}

std::string check_param_value(const ParamSpec& spec, const ParamValue& value) {
  switch (spec.type) {
    case ParamType::Int:
    case ParamType::IntPair: return check_whole(spec, value);
    case ParamType::Float: {
      // A whole number is a real number too (a layer's double parameter takes it).
      const auto* real = std::get_if<double>(&value);
      const auto* whole = std::get_if<int64_t>(&value);
      const double x = real ? *real : whole ? double(*whole) : NAN;
      if (!std::isfinite(x)) return "must be a number";
      return in_range(spec, x) ? "" : "must be " + param_range(spec);
    }
    case ParamType::Bool: return std::holds_alternative<bool>(value) ? "" : "must be true or false";
    case ParamType::Choice: {
      const auto* choice = std::get_if<std::string>(&value);
      if (choice && spec.choices.empty()) return "";  // free text (a CSV file's missing values)
      if (choice && std::find(spec.choices.begin(), spec.choices.end(), *choice) != spec.choices.end()) return "";
      std::string known;
      for (const std::string& c : spec.choices) known += (known.empty() ? "" : ", ") + c;
      return "must be one of " + known;
    }
    case ParamType::IntList: {
      const auto* list = std::get_if<std::vector<int64_t>>(&value);
      if (!list) return "must be a list of whole numbers";
      if (list->size() > 8) return "must have at most 8 entries";
      for (int64_t x : *list)
        if (!in_range(spec, double(x))) return "must have every entry " + param_range(spec);
      return "";
    }
    case ParamType::FloatList: {
      // Whole numbers are real numbers too: a file's [1, 2] is an int list.
      std::vector<double> list;
      if (const auto* reals = std::get_if<std::vector<double>>(&value)) list = *reals;
      else if (const auto* whole = std::get_if<std::vector<int64_t>>(&value)) list.assign(whole->begin(), whole->end());
      else return "must be a list of numbers";
      // One entry per class at most: a text's vocabulary, not a free-form table.
      if (list.size() > 1024) return "must have at most 1024 entries";
      for (double x : list)
        if (!std::isfinite(x) || !in_range(spec, x)) return "must have every entry " + param_range(spec);
      return "";
    }
    case ParamType::Names: {
      const auto* names = std::get_if<std::vector<std::string>>(&value);
      const auto* empty = std::get_if<std::vector<int64_t>>(&value);  // a file's [] reads as an int list
      if (!names) return empty && empty->empty() ? "" : "must be a list of names";
      if (names->size() > 1024) return "must have at most 1024 entries";
      for (const std::string& name : *names) {
        if (name.empty()) return "must not have an empty name";
        if (std::count(names->begin(), names->end(), name) > 1) return "names '" + name + "' twice";
      }
      return "";
    }
  }
  return "";
}

}  // namespace plexus::graph
