#include "graph/training_params.h"

#include <cstdint>

#include "train/builtin.h"
#include "util/error.h"

namespace plexus::graph {
namespace {

// A setting: its description and how it is read from and written to TrainingSettings.
struct Setting {
  ParamSpec spec;
  ParamValue (*get)(const TrainingSettings&);
  void (*set)(TrainingSettings&, const ParamValue&);
};

// Most settings map straight to a member of the matching type.
template <auto Member, typename T>
Setting plain(ParamSpec spec) {
  return {std::move(spec), [](const TrainingSettings& s) -> ParamValue { return s.*Member; },
          [](TrainingSettings& s, const ParamValue& v) { s.*Member = std::get<T>(v); }};
}

ParamSpec real(std::string name, double value, double min, double max, std::string doc) {
  return {std::move(name), ParamType::Float, value, min, max, {}, std::move(doc), {}};
}
ParamSpec whole(std::string name, int64_t value, double min, double max, std::string doc) {
  return {std::move(name), ParamType::Int, value, min, max, {}, std::move(doc), {}};
}
ParamSpec choice(std::string name, std::string value, std::vector<std::string> choices, std::string doc) {
  return {std::move(name), ParamType::Choice, std::move(value), 0, 0, std::move(choices), std::move(doc), {}};
}

const std::vector<Setting>& settings_table() {
  using S = TrainingSettings;
  static const std::vector<Setting> table = [] {
    const S d;
    return std::vector<Setting>{
        plain<&S::optimizer, std::string>(
            choice("optimizer", d.optimizer, train::optimizer_names(), "How the weights follow their gradients.")),
        // Huge rates are allowed on purpose: a diverging run is stopped with a message.
        plain<&S::lr, double>(real("lr", d.lr, 1e-12, 1e9, "Learning rate: the step size of each update.")),
        plain<&S::momentum, double>(real("momentum", d.momentum, 0, 0.9999, "Momentum (SGD and RMSprop).")),
        plain<&S::nesterov, bool>({"nesterov", ParamType::Bool, d.nesterov, 0, 0, {}, "Nesterov momentum (SGD).", {}}),
        plain<&S::weight_decay, double>(
            real("weight_decay", d.weight_decay, 0, 1, "L2 penalty on the weights (decoupled for AdamW).")),
        plain<&S::schedule, std::string>(
            choice("schedule", d.schedule, {"none", "step", "cosine"},
                   "How the learning rate changes per epoch: constant, stepped down, or cosine to zero.")),
        plain<&S::step_size, int64_t>(
            whole("step_size", d.step_size, 1, 1e6, "Epochs between learning-rate steps (step schedule).")),
        plain<&S::gamma, double>(real("gamma", d.gamma, 1e-6, 1, "Factor applied at each step (step schedule).")),
        plain<&S::batch_size, int64_t>(whole("batch_size", d.batch_size, 1, 1 << 20, "Examples per training step.")),
        plain<&S::epochs, int64_t>(whole("epochs", d.epochs, 1, 1e6, "Passes over the training data.")),
        // The seed is unsigned in the file; whole-number parameters are signed, 2^53 is plenty.
        Setting{whole("seed", int64_t(d.seed), 0, 9007199254740992.0,
                      "Seeds the initial weights, the shuffling and dropout: the same seed, the same run."),
                [](const S& s) -> ParamValue { return int64_t(s.seed); },
                [](S& s, const ParamValue& v) { s.seed = uint64_t(std::get<int64_t>(v)); }},
    };
  }();
  return table;
}

const Setting* find_setting(const std::string& name) {
  for (const Setting& s : settings_table())
    if (s.spec.name == name) return &s;
  return nullptr;
}

}  // namespace

const std::vector<ParamSpec>& training_param_specs() {
  static const std::vector<ParamSpec> specs = [] {
    std::vector<ParamSpec> out;
    for (const Setting& s : settings_table()) out.push_back(s.spec);
    return out;
  }();
  return specs;
}

std::optional<ParamValue> training_value(const TrainingSettings& settings, const std::string& name) {
  const Setting* s = find_setting(name);
  if (!s) return std::nullopt;
  return s->get(settings);
}

void set_training_value(TrainingSettings& settings, const std::string& name, const ParamValue& value) {
  const Setting* s = find_setting(name);
  if (!s) throw ValueError("training: unknown setting '" + name + "'");
  ParamValue v = value;
  if (s->spec.type == ParamType::Float && std::holds_alternative<int64_t>(v)) v = double(std::get<int64_t>(v));
  if (const std::string reason = check_param_value(s->spec, v); !reason.empty())
    throw ValueError("training: " + name + " " + reason + ", got " + to_string(value));
  s->set(settings, v);
}

bool training_value_applies(const TrainingSettings& settings, const std::string& name) {
  if (name == "momentum") return settings.optimizer == "sgd" || settings.optimizer == "rmsprop";
  if (name == "nesterov") return settings.optimizer == "sgd";
  if (name == "step_size" || name == "gamma") return settings.schedule == "step";
  return true;
}

}  // namespace plexus::graph
