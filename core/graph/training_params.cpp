#include "graph/training_params.h"

#include <algorithm>
#include <cstdint>

#include "optim/factory.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::graph {
namespace {

using S = TrainingSettings;

// A row; the member may be one of a base (optim::OptimizerConfig, optim::ScheduleConfig).
template <class T, class Base>
TrainingSetting row(T Base::*member, ParamSpec spec, bool (*applies)(const S&) = nullptr) {
  return {std::move(spec), static_cast<T S::*>(member), applies};
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

bool momentum_applies(const S& s) { return s.optimizer == "sgd" || s.optimizer == "rmsprop"; }
bool nesterov_applies(const S& s) { return s.optimizer == "sgd"; }
bool step_applies(const S& s) { return s.schedule == "step"; }

// What a setting holds, as a ParamValue. The seed is unsigned; forms see it as a whole number.
ParamValue get(const S& s, const TrainingSetting::Field& field) {
  return std::visit(
      [&](auto member) -> ParamValue {
        if constexpr (std::is_same_v<decltype(member), uint64_t S::*>) return int64_t(s.*member);
        else return s.*member;
      },
      field);
}

void put(S& s, const TrainingSetting::Field& field, const ParamValue& v) {
  std::visit(
      [&](auto member) {
        using T = std::decay_t<decltype(s.*member)>;
        if constexpr (std::is_same_v<T, uint64_t>) s.*member = uint64_t(std::get<int64_t>(v));
        else s.*member = std::get<T>(v);
      },
      field);
}

const TrainingSetting* find_form_setting(const std::string& name) {
  for (const TrainingSetting& s : training_settings())
    if (s.in_form && s.spec.name == name) return &s;
  return nullptr;
}

}  // namespace

const std::vector<TrainingSetting>& training_settings() {
  static const std::vector<TrainingSetting> table = [] {
    const S d;
    std::vector<TrainingSetting> rows{
        row(&S::optimizer,
            choice("optimizer", d.optimizer, optim::optimizer_names(), "How the weights follow their gradients.")),
        // Huge rates are allowed on purpose: a diverging run is stopped with a message.
        row(&S::lr, real("lr", d.lr, 1e-12, 1e9, "Learning rate: the step size of each update.")),
        row(&S::momentum, real("momentum", d.momentum, 0, 0.9999, "Momentum (SGD and RMSprop)."), momentum_applies),
        row(&S::nesterov, {"nesterov", ParamType::Bool, d.nesterov, 0, 0, {}, "Nesterov momentum (SGD).", {}},
            nesterov_applies),
        row(&S::weight_decay, real("weight_decay", d.weight_decay, 0, 1, "L2 penalty on the weights (decoupled for AdamW).")),
        row(&S::schedule,
            choice("schedule", d.schedule, optim::schedule_names(),
                   "How the learning rate changes per epoch: constant, stepped down, or cosine to zero.")),
        row(&S::step_size, whole("step_size", d.step_size, 1, 1e6, "Epochs between learning-rate steps (step schedule)."),
            step_applies),
        row(&S::gamma, real("gamma", d.gamma, 1e-6, 1, "Factor applied at each step (step schedule)."), step_applies),
        row(&S::batch_size, whole("batch_size", d.batch_size, 1, 1 << 20, "Examples per training step.")),
        row(&S::epochs, whole("epochs", d.epochs, 1, 1e6, "Passes over the training data.")),
        row(&S::validation_fraction,
            real("validation_fraction", d.validation_fraction, 0, 0.9,
                 "Share of the training data held out (seeded) to check every epoch and pick the best checkpoint; "
                 "the test split is only used at the end.")),
        // Unsigned in the file, any 64-bit value; the form's whole numbers are signed, 2^53 is plenty.
        row(&S::seed, whole("seed", int64_t(d.seed), 0, 9007199254740992.0,
                            "Seeds the initial weights, the shuffling and dropout: the same seed, the same run.")),
        row(&S::device, choice("device", d.device, {}, "Where training runs: cpu, cuda or cuda:N.")),
    };
    rows.back().in_form = false;
    return rows;
  }();
  return table;
}

const std::vector<ParamSpec>& training_param_specs() {
  static const std::vector<ParamSpec> specs = [] {
    std::vector<ParamSpec> out;
    for (const TrainingSetting& s : training_settings())
      if (s.in_form) out.push_back(s.spec);
    return out;
  }();
  return specs;
}

std::optional<ParamValue> training_value(const TrainingSettings& settings, const std::string& name) {
  const TrainingSetting* s = find_form_setting(name);
  if (!s) return std::nullopt;
  return get(settings, s->field);
}

void set_training_value(TrainingSettings& settings, const std::string& name, const ParamValue& value) {
  const TrainingSetting* s = find_form_setting(name);
  if (!s) throw ValueError("training: unknown setting '" + name + "'");
  ParamValue v = value;
  if (s->spec.type == ParamType::Float && std::holds_alternative<int64_t>(v)) v = double(std::get<int64_t>(v));
  if (const std::string reason = check_param_value(s->spec, v); !reason.empty())
    throw ValueError("training: " + name + " " + reason + ", got " + to_string(value));
  put(settings, s->field, v);
}

bool training_value_applies(const TrainingSettings& settings, const std::string& name) {
  for (const TrainingSetting& s : training_settings())
    if (s.spec.name == name) return !s.applies || s.applies(settings);
  return true;
}

void check_training_values(const TrainingSettings& settings) {
  for (const TrainingSetting& s : training_settings()) {
    if (s.applies && !s.applies(settings)) continue;
    const ParamSpec& spec = s.spec;
    if (spec.type == ParamType::Choice) {
      const std::string& value = settings.*std::get<std::string S::*>(s.field);
      if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end())
        throw ValueError("training: unknown " + spec.name + " '" + value + "' (known: " + join(spec.choices) + ")");
      continue;
    }
    // Numbers against the ranges the form enforces (a project file may hold anything). The
    // unsigned seed takes any value.
    if ((spec.type != ParamType::Int && spec.type != ParamType::Float) ||
        std::holds_alternative<uint64_t S::*>(s.field))
      continue;
    const ParamValue value = get(settings, s.field);
    if (const std::string reason = check_param_value(spec, value); !reason.empty())
      throw ValueError("training: " + spec.name + " " + reason + ", got " + to_string(value));
  }
}

}  // namespace plexus::graph
