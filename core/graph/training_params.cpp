#include "graph/training_params.h"

#include <algorithm>
#include <cstdint>

#include "optim_config/config.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::graph {
namespace {

using S = TrainingSettings;

// A row; the member may be one of a base (optim::OptimizerConfig, optim::ScheduleConfig).
template <class T, class Base>
TrainingSetting row(T Base::*member, ParamSpec spec, bool (*applies)(const S&) = nullptr) {
  return {std::move(spec), static_cast<T S::*>(member), applies, true, {}, false};
}

// A setting added after projects were saved: written only when set (SettingRow::omit_default).
TrainingSetting added_later(TrainingSetting r) {
  r.omit_default = true;
  return r;
}

ParamSpec real(std::string name, double value, double min, double max, std::string doc) {
  return real_spec(std::move(name), value, min, max, std::move(doc));
}
ParamSpec whole(std::string name, int64_t value, double min, double max, std::string doc) {
  return whole_spec(std::move(name), value, min, max, std::move(doc));
}
ParamSpec choice(std::string name, std::string value, std::vector<std::string> choices, std::string doc) {
  return choice_spec(std::move(name), std::move(value), std::move(choices), std::move(doc));
}

bool momentum_applies(const S& s) { return s.optimizer == "sgd" || s.optimizer == "rmsprop"; }
bool nesterov_applies(const S& s) { return s.optimizer == "sgd"; }
bool step_applies(const S& s) { return s.schedule == "step"; }
bool warmup_applies(const S& s) { return s.warmup_steps > 0; }

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
        added_later(row(&S::warmup_steps,
                        whole("warmup_steps", d.warmup_steps, 0, 1e9,
                              "Optimizer steps over which the learning rate rises linearly to the schedule's, from "
                              "warmup_start_factor times it (0 = no warm-up)."))),
        added_later(row(&S::warmup_start_factor,
                        real("warmup_start_factor", d.warmup_start_factor, 0, 1,
                             "The share of the learning rate the first warm-up step takes (with warmup_steps)."),
                        warmup_applies)),
        row(&S::batch_size, whole("batch_size", d.batch_size, 1, 1 << 20, "Examples per training step.")),
        row(&S::epochs, whole("epochs", d.epochs, 1, 1e6, "Passes over the training data.")),
        row(&S::validation_fraction,
            real("validation_fraction", d.validation_fraction, 0, 0.9,
                 "Share of the training data held out (seeded) to check every epoch and pick the best checkpoint; "
                 "the test split is only used at the end.")),
        // Unsigned in the file, any 64-bit value; the form's whole numbers are signed, 2^53 is plenty.
        row(&S::seed, whole("seed", int64_t(d.seed), 0, 9007199254740992.0,
                            "Seeds the initial weights, the shuffling and dropout: the same seed, the same run.")),
        row(&S::precision,
            choice("precision", d.precision, {"fp32", "bf16"},
                   "Arithmetic of products and convolutions on a GPU: fp32, or bf16 operands with fp32 accumulation "
                   "(weights and gradients stay fp32). The CPU always computes in fp32.")),
        row(&S::cuda_graphs, flag_spec("cuda_graphs", d.cuda_graphs,
                                       "On a GPU, replay the steady training step as one CUDA graph (fewer launches; "
                                       "steps that cannot be captured run one op at a time).")),
        row(&S::carry_state,
            flag_spec("carry_state", d.carry_state,
                      "Text datasets: recurrent layers carry their hidden state across consecutive batches of a text "
                      "stream (truncated backpropagation through time); batches are not shuffled.")),
        added_later(row(&S::accumulate_steps,
                        whole("accumulate_steps", d.accumulate_steps, 1, 4096,
                              "Gradient accumulation: one optimizer step per this many batches, as one batch of "
                              "batch_size × accumulate_steps examples would take (for large batches that do not fit "
                              "in memory)."))),
        added_later(row(&S::sync_batchnorm,
                        flag_spec("sync_batchnorm", d.sync_batchnorm,
                                  "Data-parallel runs (mpirun -np N): BatchNorm's batch statistics over the whole "
                                  "global batch (every process's rows, two small all-reduces per BatchNorm layer and "
                                  "step) instead of each process's own share."))),
        row(&S::stats_every,
            whole("stats_every", d.stats_every, 0, 1e6,
                  "Every how many training steps the per-node statistics are measured (0 = never).")),
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
  const TrainingSetting* s = find_setting(training_settings(), name);
  if (!s) return std::nullopt;
  return setting_value(settings, s->field);
}

void set_training_value(TrainingSettings& settings, const std::string& name, const ParamValue& value) {
  set_setting(training_settings(), "training", settings, name, value);
}

bool training_value_applies(const TrainingSettings& settings, const std::string& name) {
  for (const TrainingSetting& s : training_settings())
    if (s.spec.name == name) return !s.applies || s.applies(settings);
  return true;
}

void check_training_values(const TrainingSettings& settings) {
  check_setting_values(training_settings(), "training", settings);
}

}  // namespace plexus::graph
