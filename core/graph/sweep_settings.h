#pragma once
// A sweep's settings (graph::SweepSettings), each described once as the training settings are
// (graph/settings_table.h): the project reader and writer, the editor's sweep form and the
// checks walk this table. The swept parameters are a list beside it (SweepParameter); their
// targets are checked against the training and dataset tables and the layer registry here, so
// a project file with a sweep that cannot run is explained before any trial starts.
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/param_spec.h"
#include "graph/settings_table.h"

namespace plexus::graph {

using SweepSetting = SettingRow<SweepSettings>;

// method, trials, parallel, threads, metric, seed: in the order of the project file and form.
const std::vector<SweepSetting>& sweep_settings();

// The methods ("grid", "random", "tpe") and metrics ("auto", "validation_accuracy",
// "validation_loss", "train_loss"), in the order a form offers them.
const std::vector<std::string>& sweep_methods();
const std::vector<std::string>& sweep_metrics();

// What a sweep target sets, and the ParamSpec its values are checked against: "lr" a training
// setting, "dataset.augment.shift" a dataset setting, "fc1.out_features" the parameter of node
// fc1's layer type (or its node setting, "fc1.lr_mult"). nullopt, with `why` saying so, for a
// target that names nothing ("unknown training setting 'lrr'", "no node 'fc9'", "Linear
// 'fc1' has no parameter 'width' (it has in_features, out_features, bias)").
struct SweepTarget {
  enum class Kind { Training, Dataset, NodeParam, NodeSetting } kind = Kind::Training;
  std::string node;  // NodeParam, NodeSetting: the node id
  std::string name;  // the setting or parameter name within its table ("augment.shift", "out_features")
  ParamSpec spec;
};
std::optional<SweepTarget> sweep_target(const Graph& graph, const std::string& target, std::string* why = nullptr);

// The sweep's settings and parameters against the tables and the graph. ValueError naming the
// parameter and what is wrong: "sweep: parameters[1] 'fc9.out_features': no node 'fc9'",
// "sweep: parameters[0] 'lr': 0 is out of range: lr must be between 1e-12 and 1000000000",
// "sweep: parameters[0] 'lr': a grid needs listed values, not a range",
// "sweep: parameters[2] 'lr': log scale needs min > 0", "sweep: 'lr' is swept twice",
// "sweep: trials must be between 1 and 100000, got 0". A sweep not defined() passes.
void check_sweep(const Graph& graph);

}  // namespace plexus::graph
