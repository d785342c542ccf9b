#include "graph/node_settings.h"

#include "graph/registry.h"
#include "util/error.h"

namespace plexus::graph {

bool node_settings_apply(const Node& node) {
  const LayerType* type = Registry::instance().find(node.type);
  return type && type->parameter_count;
}

const std::vector<NodeSetting>& node_settings() {
  static const std::vector<NodeSetting> table = [] {
    const Node d;
    std::vector<NodeSetting> rows{
        {flag_spec("frozen", "Frozen", d.frozen,
                   "Fine-tuning: this node's weights stay as they are (no gradient, no optimizer state) and it "
                   "runs as in evaluation, so BatchNorm keeps its running statistics."),
         &Node::frozen, node_settings_apply, true, {}, false, "Training", false},
        {real_spec("lr_mult", "Learning rate ×", d.lr_mult, 0, 1000,
                   "This node's learning rate is the project's times this (0 freezes its weights)."),
         &Node::lr_mult, node_settings_apply, true, {}, false, "Training", false},
        {real_spec("weight_decay_mult", "Weight decay ×", d.weight_decay_mult, 0, 1000,
                   "This node's weight decay is the project's times this (0: none for this node)."),
         &Node::weight_decay_mult, node_settings_apply, true, {}, false, "Training", false},
    };
    return rows;
  }();
  return table;
}

std::optional<ParamValue> node_setting_value(const Node& node, const std::string& name) {
  const NodeSetting* row = find_setting(node_settings(), name);
  if (!row) return std::nullopt;
  return setting_value(node, row->field);
}

void set_node_setting(Node& node, const std::string& name, const ParamValue& value) {
  set_setting(node_settings(), node.label().c_str(), node, name, value);
}

std::optional<std::string> node_settings_problem(const Node& node) {
  try {
    check_setting_values(node_settings(), node.label().c_str(), node);
  } catch (const ValueError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace plexus::graph
