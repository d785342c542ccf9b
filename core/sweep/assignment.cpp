#include "sweep/assignment.h"

#include "graph/dataset_params.h"
#include "graph/node_settings.h"
#include "graph/param_spec.h"
#include "graph/sweep_settings.h"
#include "graph/training_params.h"
#include "util/error.h"

namespace plexus::sweep {

graph::Graph apply_assignment(const graph::Graph& project, const Assignment& assignment) {
  using Kind = graph::SweepTarget::Kind;
  graph::Graph g = project;
  for (const Setting& s : assignment) {
    std::string why;
    const std::optional<graph::SweepTarget> t = graph::sweep_target(g, s.target, &why);
    if (!t) throw ValueError("sweep: '" + s.target + "': " + why);
    graph::ParamValue v = s.value;
    if (t->spec.type == graph::ParamType::Float && std::holds_alternative<int64_t>(v))
      v = double(std::get<int64_t>(v));
    switch (t->kind) {
      case Kind::Training: graph::set_training_value(g.training, t->name, v); break;
      case Kind::Dataset: graph::set_dataset_value(g.dataset, t->name, v); break;
      case Kind::NodeSetting: graph::set_node_setting(*g.find(t->node), t->name, v); break;
      case Kind::NodeParam: {
        graph::Node& node = *g.find(t->node);
        if (const std::string reason = graph::check_param_value(t->spec, v); !reason.empty())
          throw ValueError(node.label() + ": " + t->name + " " + reason + ", got " + graph::to_string(s.value));
        node.params[t->name] = v;
        break;
      }
    }
  }
  return g;
}

std::string assignment_text(const Assignment& assignment) {
  std::string out;
  for (const Setting& s : assignment) {
    if (!out.empty()) out += ' ';
    out += s.target + "=" + graph::to_string(s.value);
  }
  return out;
}

}  // namespace plexus::sweep
