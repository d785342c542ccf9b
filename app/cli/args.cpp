#include "cli/args.h"

#include <algorithm>
#include <cmath>

#include "cuda/cuda.h"
#include "util/error.h"
#include "util/threads.h"

namespace plexus::cli {

std::optional<double> non_negative_number(const std::string& text) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v) && v >= 0) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

Args::Args(const std::vector<std::string>& argv, const ArgsShape& shape) {
  auto listed = [](const std::vector<std::string>& list, const std::string& a) {
    return std::find(list.begin(), list.end(), a) != list.end();
  };
  auto takes_value = [&](const std::string& a) {
    return std::any_of(shape.options.begin(), shape.options.end(), [&](const ValueOption& o) { return o.name == a; });
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (!a.starts_with("--")) {
      if (positional_.size() >= shape.max_positional) throw UsageError{"unexpected argument '" + a + "'"};
      positional_.push_back(a);
      continue;
    }
    const bool flag = listed(shape.flags, a);
    if (!flag && !takes_value(a)) throw UsageError{"unknown option " + a};
    const bool repeatable = listed(shape.repeatable, a);
    if (values_.count(a) && !repeatable) throw UsageError{"option " + a + " given twice"};
    if (flag) {
      values_[a] = "";
      continue;
    }
    if (i + 1 >= argv.size()) throw UsageError{"option " + a + " needs a value"};
    values_[a] = argv[++i];
    if (repeatable) lists_[a].push_back(values_[a]);
  }
}

std::vector<std::string> Args::all(const std::string& k) const {
  return lists_.count(k) ? lists_.at(k) : std::vector<std::string>{};
}

void Args::require(const std::string& command, const std::vector<std::string>& needed) const {
  for (const std::string& k : needed)
    if (!has(k)) throw UsageError{command + " needs " + k + " FILE"};
}

int64_t Args::integer(const std::string& k, int64_t def, int64_t lo) const {
  if (!has(k)) return def;
  try {
    size_t used = 0;
    const int64_t v = std::stoll(values_.at(k), &used);
    if (used == values_.at(k).size() && v >= lo) return v;
  } catch (const std::exception&) {
  }
  throw UsageError{"option " + k + " needs a whole number >= " + std::to_string(lo) + ", got '" + values_.at(k) + "'"};
}

double Args::number(const std::string& k, double def) const {
  if (!has(k)) return def;
  if (const std::optional<double> v = non_negative_number(values_.at(k))) return *v;
  throw UsageError{"option " + k + " needs a non-negative number, got '" + values_.at(k) + "'"};
}

Device device_option(const Args& args) {
  const std::string text = args.str("--device", "cpu");
  Device d;
  try {
    d = parse_device(text);
  } catch (const ValueError& e) {
    throw UsageError{std::string("--device: ") + e.what()};
  }
  cuda::check_available(d);
  return d;
}

void apply_threads_option(const Args& args) {
  if (args.has("--threads")) set_num_threads(int(args.integer("--threads", 1, 1)));
}

}  // namespace plexus::cli
