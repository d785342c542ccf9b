#include "graph/sweep_settings.h"

#include <algorithm>
#include <cmath>

#include "graph/dataset_params.h"
#include "graph/node_settings.h"
#include "graph/registry.h"
#include "graph/training_params.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::graph {
namespace {

SweepSetting sweep_row(ParamSpec spec, SweepSetting::Field field) {
  return {std::move(spec), field, nullptr, true, {}, false, "Sweep", false};
}

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

// "Linear 'fc1' has no parameter 'width' (it has in_features, out_features, bias)".
std::string no_parameter(const Node& node, const LayerType& type, const std::string& name) {
  std::vector<std::string> names;
  for (const ParamSpec& p : type.params) names.push_back(p.name);
  for (const NodeSetting& r : node_settings()) names.push_back(r.spec.name);
  return node.label() + " has no parameter " + in_quotes(name) + " (it has " + join(names) + ")";
}

// A value as the target's spec takes it: a whole number for a real target becomes a real.
ParamValue as_spec_type(const ParamSpec& spec, ParamValue v) {
  if (spec.type == ParamType::Float && std::holds_alternative<int64_t>(v)) v = double(std::get<int64_t>(v));
  return v;
}

}  // namespace

const std::vector<std::string>& sweep_methods() {
  static const std::vector<std::string> m{"grid", "random", "tpe"};
  return m;
}

const std::vector<std::string>& sweep_metrics() {
  static const std::vector<std::string> m{"auto", "validation_accuracy", "validation_loss", "train_loss"};
  return m;
}

const std::vector<SweepSetting>& sweep_settings() {
  static const std::vector<SweepSetting> table = [] {
    const SweepSettings d;
    return std::vector<SweepSetting>{
        sweep_row(choice_spec("method", "Method", d.method, sweep_methods(),
                        "How trials are chosen: grid tries every combination of the listed values, random draws "
                        "them (log-uniformly on a log scale), tpe draws its first trials at random and then "
                        "favours values near the best ones so far."),
            &SweepSettings::method),
        sweep_row(whole_spec("trials", "Trials", d.trials, 1, 100000,
                       "How many trials random and tpe run (a grid runs every combination)."),
            &SweepSettings::trials),
        sweep_row(whole_spec("parallel", "Trials at once", d.parallel, 1, 1024,
                       "Trials run at the same time on this machine, each a process of its own. Under mpirun "
                       "each rank runs one at a time."),
            &SweepSettings::parallel),
        sweep_row(whole_spec("threads", "Threads per trial", d.threads, 0, 4096,
                       "CPU threads of each trial; 0 = the machine's threads shared among the trials at once."),
            &SweepSettings::threads),
        sweep_row(choice_spec("metric", "Metric", d.metric, sweep_metrics(),
                        "What makes a trial best: its best validation accuracy, or lowest validation or "
                        "training loss; auto = accuracy for classification, validation loss otherwise."),
            &SweepSettings::metric),
        sweep_row(whole_spec("seed", "Seed", int64_t(d.seed), 0, 9007199254740992.0,
                       "Seeds the draws of random and tpe: the same seed, the same trials."),
            &SweepSettings::seed),
    };
  }();
  return table;
}

std::optional<SweepTarget> sweep_target(const Graph& graph, const std::string& target, std::string* why) {
  const auto fail = [&](std::string reason) -> std::optional<SweepTarget> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (target.starts_with("dataset.")) {
    const std::string name = target.substr(8);
    const DatasetSetting* row = find_setting(dataset_settings(), name);
    if (!row) return fail("unknown dataset setting " + in_quotes(name));
    return SweepTarget{SweepTarget::Kind::Dataset, {}, name, row->spec};
  }
  if (const size_t dot = target.find('.'); dot != std::string::npos) {
    const std::string id = target.substr(0, dot), name = target.substr(dot + 1);
    const Node* node = graph.find(id);
    if (!node) return fail("no node " + in_quotes(id) + " (a node parameter is '<node id>.<parameter>')");
    if (const NodeSetting* row = find_setting(node_settings(), name))
      return SweepTarget{SweepTarget::Kind::NodeSetting, id, name, row->spec};
    const LayerType* type = Registry::instance().find(node->type);
    if (!type) return fail(node->label() + " has an unknown layer type");
    const ParamSpec* spec = type->param(name);
    if (!spec) return fail(no_parameter(*node, *type, name));
    return SweepTarget{SweepTarget::Kind::NodeParam, id, name, *spec};
  }
  const TrainingSetting* row = find_setting(training_settings(), target);
  if (!row) return fail("unknown training setting " + in_quotes(target));
  return SweepTarget{SweepTarget::Kind::Training, {}, target, row->spec};
}

void check_sweep(const Graph& graph) {
  const SweepSettings& s = graph.sweep;
  if (!s.defined()) return;
  check_setting_values(sweep_settings(), "sweep", s);
  for (size_t i = 0; i < s.parameters.size(); ++i) {
    const SweepParameter& p = s.parameters[i];
    const std::string where = "sweep: parameters[" + std::to_string(i) + "] " + in_quotes(p.target) + ": ";
    for (size_t k = 0; k < i; ++k)
      if (s.parameters[k].target == p.target) throw ValueError("sweep: " + in_quotes(p.target) + " is swept twice");
    std::string why;
    const std::optional<SweepTarget> t = sweep_target(graph, p.target, &why);
    if (!t) throw ValueError(where + why);
    const ParamSpec& spec = t->spec;
    if (!p.values.empty()) {
      for (const ParamValue& v : p.values)
        if (const std::string reason = check_param_value(spec, as_spec_type(spec, v)); !reason.empty())
          throw ValueError(where + to_string(v) + " does not suit it: " + t->name + " " + reason);
      continue;
    }
    if (s.method == "grid") throw ValueError(where + "a grid needs listed values, not a range");
    if (spec.type != ParamType::Int && spec.type != ParamType::Float)
      throw ValueError(where + "a range needs a number setting; list the values to try");
    if (p.scale != "linear" && p.scale != "log")
      throw ValueError(where + "unknown scale " + in_quotes(p.scale) + " (known: linear, log)");
    if (!std::isfinite(p.min) || !std::isfinite(p.max) || !(p.min < p.max))
      throw ValueError(where + "a range needs min < max, got " + shortest_text(p.min) + " and " +
                       shortest_text(p.max));
    if (p.scale == "log" && p.min <= 0) throw ValueError(where + "log scale needs min > 0");
    for (const double end : {p.min, p.max})
      if (end < spec.min || end > spec.max)
        throw ValueError(where + shortest_text(end) + " is out of range: " + t->name + " must be " + param_range(spec));
    if (spec.type == ParamType::Int && std::floor(p.max) < std::ceil(p.min))
      throw ValueError(where + "no whole number lies between min and max");
  }
}

}  // namespace plexus::graph
