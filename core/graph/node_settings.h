#pragma once
// A node's own training settings: how the optimizer treats the parameters the node learns,
// relative to the project's training settings.
//
//   frozen             fine-tuning: its parameters get no gradient and no optimizer state and
//                      it runs as in evaluation, so BatchNorm's running statistics stay as they
//                      are and normalise its input (layers/compiler.h, nn::Module::freeze)
//   lr_mult            its learning rate is the project's (as scheduled and warmed up) times
//                      this; 0 keeps its weights too, though the optimizer still steps them
//   weight_decay_mult  its weight decay is the project's times this
//
// Each is described once, in a table (graph/settings_table.h) that the project reader and
// writer, the validator, the graph diff, the property panel and plexus-cli's flags walk. They
// matter for nodes whose type learns values; the project file holds them on the node, only
// where they are not 1. session/optimizer_groups.h turns them into the optimizer's groups.
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/settings_table.h"

namespace plexus::graph {

using NodeSetting = SettingRow<Node>;

// Every node setting, in the order of the project file and the property panel.
const std::vector<NodeSetting>& node_settings();

// Whether the settings matter for `node`: its type is known and learns values.
bool node_settings_apply(const Node& node);

// A setting's value by name (nullopt for an unknown name).
std::optional<ParamValue> node_setting_value(const Node& node, const std::string& name);
// Sets one; ValueError for an unknown name, a wrong type or an out-of-range value, naming the
// node ("Linear 'fc1': lr_mult must be between 0 and 1000, got -1").
void set_node_setting(Node& node, const std::string& name, const ParamValue& value);

// For the validator: why the node's settings cannot train, in the same words; nullopt when
// they can (or do not apply to it).
std::optional<std::string> node_settings_problem(const Node& node);

}  // namespace plexus::graph
