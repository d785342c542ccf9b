#pragma once
// A trial's values: one per swept parameter, in the sweep's order, and the project a trial trains
// (the sweep's project with those values). "Apply best settings to the project" is the same
// apply_assignment on the best trial's assignment.
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace plexus::sweep {

struct Setting {
  std::string target;  // as SweepParameter::target: "lr", "dataset.augment.shift", "fc1.out_features"
  graph::ParamValue value;
  bool operator==(const Setting&) const = default;
};
using Assignment = std::vector<Setting>;

// `project` with every setting of `assignment` applied: training settings, dataset settings and
// node parameters (a whole number for a Float target becomes a real). The result's sweep is the
// project's, unchanged. ValueError naming the target for one that names nothing or a value out
// of its range (graph::sweep_target, check_param_value's words).
graph::Graph apply_assignment(const graph::Graph& project, const Assignment& assignment);

// "lr=0.003 batch_size=64 fc1.out_features=256": for log lines and the table's default column.
std::string assignment_text(const Assignment& assignment);

}  // namespace plexus::sweep
