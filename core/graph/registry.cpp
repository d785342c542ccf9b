#include "graph/registry.h"

#include "util/error.h"

namespace plexus::graph {

const ParamSpec* LayerType::param(const std::string& n) const {
  for (const ParamSpec& p : params)
    if (p.name == n) return &p;
  return nullptr;
}
const PortSpec* LayerType::input(const std::string& n) const {
  for (const PortSpec& p : inputs)
    if (p.name == n) return &p;
  return nullptr;
}
std::vector<PortSpec> LayerType::outputs_of(const Node& node) const {
  if (!output_ports || !check_params(node, *this).empty()) return outputs;
  return output_ports(node);
}
std::optional<size_t> LayerType::output_index(const Node& node, const std::string& n) const {
  const std::vector<PortSpec> ports = outputs_of(node);
  for (size_t i = 0; i < ports.size(); ++i)
    if (ports[i].name == n) return i;
  return std::nullopt;
}

Registry::Registry() { add_layer_types(*this); }

const Registry& Registry::instance() {
  static const Registry registry;
  return registry;
}

const LayerType* Registry::find(const std::string& name) const {
  for (const LayerType& t : types_)
    if (t.name == name) return &t;
  return nullptr;
}

void Registry::add(LayerType type) {
  if (find(type.name)) throw ValueError("layer type " + type.name + " is registered twice");
  types_.push_back(std::move(type));
}

namespace {
// A value as a message shows it: texts quoted, so "128" (a text) is not mistaken for 128.
std::string shown(const ParamValue& v) {
  if (const std::string* s = std::get_if<std::string>(&v)) return "the text \"" + *s + "\"";
  std::string text = to_string(v);
  // A real number that happens to be whole still shows it is one: "got 128.0", not "got 128".
  if (std::holds_alternative<double>(v) && text.find_first_of(".eninf") == std::string::npos) text += ".0";
  return text;
}
}  // namespace

std::vector<std::string> check_params(const Node& node, const LayerType& type) {
  std::vector<std::string> out;
  for (const auto& [name, v] : node.params) {
    const ParamSpec* s = type.param(name);
    if (!s) {
      std::string known;
      for (const ParamSpec& p : type.params) known += (known.empty() ? "" : ", ") + p.name;
      out.push_back(node.label() + " has no parameter '" + name + "'" +
                    (known.empty() ? " (it takes none)" : " (it takes: " + known + ")"));
    } else if (const std::string reason = check_param_value(*s, v); !reason.empty()) {
      out.push_back(node.label() + ": " + name + " " + reason + ", got " + shown(v));
    }
  }
  return out;
}

}  // namespace plexus::graph
