#include "cli/setting_flags.h"

#include <cmath>

#include "graph/training_params.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::cli {
namespace {

std::string option_of(const graph::TrainingSetting& row) {
  std::string name = row.spec.name;
  for (char& c : name)
    if (c == '_') c = '-';
  return "--" + name;
}

bool is_switch(const graph::TrainingSetting& row) { return row.spec.type == graph::ParamType::Bool; }

// The option's value as the row's type; UsageError when it is not one.
graph::ParamValue parse_value(const graph::TrainingSetting& row, const std::string& option, const std::string& text) {
  const graph::ParamSpec& spec = row.spec;
  try {
    size_t used = 0;
    if (spec.type == graph::ParamType::Int) {
      const int64_t v = std::stoll(text, &used);
      if (used == text.size()) return v;
    } else if (spec.type == graph::ParamType::Float) {
      const double v = std::stod(text, &used);
      if (used == text.size() && std::isfinite(v)) return v;
    } else {
      return text;
    }
  } catch (const std::exception&) {
  }
  throw UsageError{"option " + option + " needs " +
                   (spec.type == graph::ParamType::Int ? "a whole number" : "a number") + ", got '" + text + "'"};
}

// "[sgd]", "[0.1; 1e-12 to 1e+09]": the default and what the setting takes.
std::string default_text(const graph::ParamSpec& spec) {
  const graph::ParamValue& v = spec.default_value;
  std::string text;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "[on]" : "[off]";
  if (const auto* i = std::get_if<int64_t>(&v)) text = std::to_string(*i);
  else if (const auto* d = std::get_if<double>(&v)) text = shortest_text(*d);
  else if (const auto* s = std::get_if<std::string>(&v)) text = *s;
  if (spec.type == graph::ParamType::Int)
    text += "; " + std::to_string(int64_t(spec.min)) + " to " + std::to_string(int64_t(spec.max));
  if (spec.type == graph::ParamType::Float) text += "; " + shortest_text(spec.min) + " to " + shortest_text(spec.max);
  return "[" + text + "]";
}

// `text` in lines of at most `width` characters, each after `indent`.
std::string wrapped(const std::string& text, size_t indent, size_t width) {
  std::string out, line;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    at = end + 1;
  }
  return out + line;
}

}  // namespace

const SettingOptions& setting_options() {
  static const SettingOptions options = [] {
    SettingOptions o;
    for (const graph::TrainingSetting& row : graph::training_settings()) {
      const std::string option = option_of(row);
      if (!is_switch(row)) {
        // A choice without a list is the device (see apply_setting_options).
        const bool device = row.spec.type == graph::ParamType::Choice && row.spec.choices.empty();
        o.with_value.push_back({option, Takes::Text, device ? kDeviceOption.choices : row.spec.choices});
        continue;
      }
      o.switches.push_back(option);
      o.switches.push_back("--no-" + option.substr(2));
    }
    return o;
  }();
  return options;
}

void apply_setting_options(const Args& args, graph::TrainingSettings& s) {
  for (const graph::TrainingSetting& row : graph::training_settings()) {
    const std::string option = option_of(row);
    graph::ParamValue value;
    if (is_switch(row)) {
      const std::string no = "--no-" + option.substr(2);
      if (args.has(option) && args.has(no)) throw UsageError{"give " + option + " or " + no + ", not both"};
      if (!args.has(option) && !args.has(no)) continue;
      value = args.has(option);
    } else {
      if (!args.has(option)) continue;
      const std::string text = args.str(option, "");
      value = parse_value(row, option, text);
      // A choice without a list is the device: its own syntax here, the machine where the run
      // starts (session/run.h).
      if (row.spec.type == graph::ParamType::Choice && row.spec.choices.empty()) {
        try {
          value = parse_device(text).str();
        } catch (const ValueError& e) {
          throw UsageError{"option " + option + ": " + e.what()};
        }
      } else if (const std::string reason = graph::check_param_value(row.spec, value); !reason.empty()) {
        throw UsageError{"option " + option + " " + reason + ", got '" + text + "'"};
      }
    }
    graph::put_setting_value(s, row.field, value);
  }
}

std::string setting_options_help() {
  constexpr size_t kIndent = 23, kWidth = 70;
  std::string out;
  for (const graph::TrainingSetting& row : graph::training_settings()) {
    const graph::ParamSpec& spec = row.spec;
    std::string option = option_of(row);
    if (is_switch(row)) option += ", --no-" + option.substr(2);
    else if (spec.type == graph::ParamType::Int) option += " N";
    else if (spec.type == graph::ParamType::Float) option += " X";
    else option += spec.choices.empty() ? " D" : " NAME";
    // Appended in steps: GCC 12 warns (-Wrestrict) of " " + text here.
    std::string doc = spec.label;  // the editor's name for it, then what it does
    doc.append(". ").append(spec.doc);
    if (!spec.choices.empty()) doc.append(" ").append(join(spec.choices, ", ", " or ")).append(".");
    doc.append(" ").append(default_text(spec));
    const std::string head = "  " + option;
    out += head + (head.size() + 1 < kIndent ? std::string(kIndent - head.size(), ' ') : "\n" + std::string(kIndent, ' '));
    out += wrapped(doc, kIndent, kWidth) + "\n";
  }
  return out;
}

}  // namespace plexus::cli
