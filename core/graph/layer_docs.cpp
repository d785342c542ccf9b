#include "graph/layer_docs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "util/text.h"

namespace plexus::graph {
namespace {

// Ranges whose top is at least this are written as "≥ min" (the registry's "no real limit").
constexpr double kUnbounded = 1 << 24;

std::string number(double x, bool whole) {
  std::ostringstream os;
  if (whole) os << int64_t(std::llround(x));
  else os << x;
  return os.str();
}

std::string port_text(const PortSpec& p) {
  std::string flags;
  if (p.variadic) flags = " (any number of edges)";
  else if (!p.required) flags = " (optional)";
  if (p.indices) flags += " (takes indices: a table column feeding it needs standardize off on its Input)";
  return p.doc + flags;
}

// Markdown table cells: no pipes, no line breaks.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::vector<std::string> categories(const Registry& r) {
  std::vector<std::string> out;
  for (const LayerType& t : r.types())
    if (std::find(out.begin(), out.end(), t.category) == out.end()) out.push_back(t.category);
  return out;
}

}  // namespace

std::string allowed_values(const ParamSpec& p) {
  switch (p.type) {
    case ParamType::Bool: return "true, false";
    case ParamType::Choice: return join(p.choices, ", ");
    case ParamType::Names: return "";
    case ParamType::Int:
    case ParamType::Float:
    case ParamType::IntList:
    case ParamType::FloatList:
    case ParamType::IntPair: {
      const bool whole = p.type != ParamType::Float && p.type != ParamType::FloatList;
      const std::string range =
          p.max >= kUnbounded ? "≥ " + number(p.min, whole) : number(p.min, whole) + " .. " + number(p.max, whole);
      const bool list = p.type == ParamType::IntList || p.type == ParamType::FloatList;
      const std::string words = p.choices.empty() ? "" : " or " + join(p.choices, ", ");  // padding's "same"
      return (list ? "entries " + range : p.type == ParamType::IntPair ? range + " each" : range) + words;
    }
  }
  return "";
}

std::string layers_text(const Registry& r) {
  std::ostringstream os;
  for (const std::string& category : categories(r)) {
    os << "== " << category << " ==\n\n";
    for (const LayerType& t : r.types()) {
      if (t.category != category) continue;
      os << t.name << " -- " << t.display_name << "\n  " << t.description << "\n";
      auto ports = [&](const char* what, const std::vector<PortSpec>& list) {
        if (list.empty()) return;
        os << "  " << what << ":\n";
        for (const PortSpec& p : list) os << "    " << p.name << ": " << port_text(p) << "\n";
      };
      ports("inputs", t.inputs);
      ports("outputs", t.outputs);
      if (t.output_ports) os << "  (the outputs follow from the parameters; these are the defaults')\n";
      if (!t.params.empty()) {
        os << "  parameters:\n";
        for (const ParamSpec& p : t.params) {
          const std::string allowed = allowed_values(p);
          os << "    " << p.name << " -- " << p.label << " (" << to_string(p.type) << ", default "
             << to_string(p.default_value) << (p.default_means.empty() ? "" : " = " + p.default_means)
             << (allowed.empty() || p.type == ParamType::Bool ? "" : ", " + allowed)
             << "): " << p.doc << "\n";
        }
      }
      os << "\n";
    }
  }
  return os.str();
}

std::string layer_markdown(const LayerType& t, int level) {
  std::ostringstream os;
  os << std::string(size_t(level), '#') << " " << t.name << "\n\n";
  if (t.display_name != t.name) os << "**" << t.display_name << ".** ";
  os << t.description << "\n";
  auto ports = [&](const char* what, const std::vector<PortSpec>& list) {
    if (list.empty()) return;
    os << "\n| " << what << " | |\n|---|---|\n";
    for (const PortSpec& p : list) os << "| `" << p.name << "` | " << cell(port_text(p)) << " |\n";
  };
  ports("Input port", t.inputs);
  ports("Output port", t.outputs);
  if (t.output_ports) os << "\nThe output ports follow from the parameters; the table shows those of the defaults.\n";
  if (t.params.empty()) {
    os << "\nNo parameters.\n";
  } else {
    os << "\n| Parameter | Key | Type | Default | Allowed | Description |\n|---|---|---|---|---|---|\n";
    for (const ParamSpec& p : t.params)
      os << "| " << cell(p.label) << " | `" << p.name << "` | " << to_string(p.type) << " | `"
         << cell(to_string(p.default_value)) << "`" << (p.default_means.empty() ? "" : " (" + p.default_means + ")")
         << " | " << cell(allowed_values(p)) << " | " << cell(p.doc) << " |\n";
  }
  return os.str();
}

std::string layers_markdown(const Registry& r) {
  std::ostringstream os;
  os << "# Layer types\n\n"
        "<!-- Generated from the layer registry (core/layers/, one family a file) by scripts/gen-layers-doc.\n"
        "     Do not edit by hand: the test layers_doc_up_to_date fails when this file is out of date. -->\n\n"
        "Every node type a graph can use, as the layer registry defines it: its ports, its\n"
        "parameters with their defaults and allowed values, and what it computes. A parameter is\n"
        "shown in the editor by its label and written in project files under its key; one left\n"
        "out of a file takes its default. Shapes are per example with the batch written as N.\n"
        "`plexus-cli layers` prints the same as plain text; in the editor, F1 on a selected node\n"
        "shows its type's part of this page.\n\n";
  const std::vector<std::string> cats = categories(r);
  os << "Categories:";
  for (size_t i = 0; i < cats.size(); ++i) {
    std::string anchor;
    for (char c : cats[i]) anchor += char(std::tolower(static_cast<unsigned char>(c)));
    os << (i ? "," : "") << " [" << cats[i] << "](#" << anchor << ")";
  }
  os << ".\n";
  for (const std::string& category : cats) {
    os << "\n## " << category << "\n";
    for (const LayerType& t : r.types())
      if (t.category == category) os << "\n" << layer_markdown(t, 3);
  }
  return os.str();
}

}  // namespace plexus::graph
