#include "layers/code_rules.h"

#include <cmath>

#include "util/text.h"

namespace plexus::layers {

std::string py(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "float(\"nan\")" : v > 0 ? "float(\"inf\")" : "float(\"-inf\")";
  std::string s = shortest_text(v);
  // Python reads "1e-05" and "0.1" as they are; a whole number keeps its ".0" so it stays a float.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string py(bool v) { return v ? "True" : "False"; }

std::string py(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string py_size(int64_t h, int64_t w) {
  return h == w ? std::to_string(h) : "(" + std::to_string(h) + ", " + std::to_string(w) + ")";
}

std::string py_kwarg(const std::string& name, const std::string& value, const std::string& default_value) {
  return value == default_value ? "" : ", " + name + "=" + value;
}

std::string cpp(double v) {
  if (!std::isfinite(v))
    return std::isnan(v) ? "std::numeric_limits<float>::quiet_NaN()"
                         : std::string(v > 0 ? "" : "-") + "std::numeric_limits<float>::infinity()";
  const std::string s = shortest_float_text(float(v));
  return s + (s.find_first_of(".eE") == std::string::npos ? ".f" : "f");
}

std::string cpp(bool v) { return v ? "true" : "false"; }

std::string cpp(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t d : v) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "{" + s + "}";
}

void module_call(const CodeContext& c, const std::string& constructor) {
  c.out.module(constructor);
  c.assign(c.call(join(c.input_names)));
}

}  // namespace plexus::layers
