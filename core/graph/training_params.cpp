#include "graph/training_params.h"

#include <algorithm>
#include <cstdint>

#include "optim_config/config.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::graph {
namespace {

using S = TrainingSettings;

// A row under `section`; the member may be one of a base (optim::OptimizerConfig,
// optim::ScheduleConfig).
template <class T, class Base>
TrainingSetting row(const char* section, T Base::*member, ParamSpec spec, bool (*applies)(const S&) = nullptr) {
  return {std::move(spec), static_cast<T S::*>(member), applies, true, {}, false, section, false};
}

// A setting added after projects were saved: written only when set (SettingRow::omit_default).
TrainingSetting added_later(TrainingSetting r) {
  r.omit_default = true;
  return r;
}

// A setting few runs change: the form keeps it under "Advanced".
TrainingSetting advanced(TrainingSetting r) {
  r.advanced = true;
  return r;
}

bool momentum_applies(const S& s) { return s.optimizer == "sgd" || s.optimizer == "rmsprop"; }
bool nesterov_applies(const S& s) { return s.optimizer == "sgd"; }
bool step_applies(const S& s) { return s.schedule == "step"; }
bool gamma_applies(const S& s) { return s.schedule == "step" || s.schedule == "exponential"; }
bool warmup_applies(const S& s) { return s.warmup_steps > 0; }
bool linear_applies(const S& s) { return s.schedule == "warmup_linear"; }
bool onecycle_applies(const S& s) { return s.schedule == "onecycle"; }
bool plateau_applies(const S& s) { return s.schedule == "plateau"; }
bool stopping_applies(const S& s) { return s.early_stopping_patience > 0; }
bool monitor_applies(const S& s) { return stopping_applies(s) || plateau_applies(s); }

}  // namespace

const std::vector<std::string>& training_sections() {
  static const std::vector<std::string> sections{"Optimizer", "Schedule",   "Batches",
                                                       "Stopping",  "Monitoring", "Hardware"};
  return sections;
}

const std::vector<TrainingSetting>& training_settings() {
  static const std::vector<TrainingSetting> table = [] {
    const S d;
    std::vector<TrainingSetting> rows{
        row("Optimizer", &S::optimizer,
            choice_spec("optimizer", "Optimizer", d.optimizer, optim::optimizer_names(),
                        "How the weights follow their gradients.")),
        // Huge rates are allowed on purpose: a diverging run is stopped with a message.
        row("Optimizer", &S::lr,
            real_spec("lr", "Learning rate", d.lr, 1e-12, 1e9, "The step size of each update of the weights.")),
        row("Optimizer", &S::momentum,
            real_spec("momentum", "Momentum", d.momentum, 0, 0.9999,
                      "The share of the previous update carried into the next (SGD and RMSprop)."),
            momentum_applies),
        advanced(row("Optimizer", &S::nesterov,
                     flag_spec("nesterov", "Nesterov momentum", d.nesterov,
                               "Takes the gradient where momentum is about to carry the weights (SGD)."),
                     nesterov_applies)),
        row("Optimizer", &S::weight_decay,
            real_spec("weight_decay", "Weight decay", d.weight_decay, 0, 1,
                      "L2 penalty on the weights (decoupled for AdamW).")),
        added_later(row("Optimizer", &S::clip_norm,
                        real_spec("clip_norm", "Clip gradient norm", d.clip_norm, 0, 1e9,
                                  "Before every update the gradients are scaled down so that their total norm is at "
                                  "most this (torch's clip_grad_norm_); 0 = no clipping."))),
        advanced(added_later(row("Optimizer", &S::clip_value,
                                 real_spec("clip_value", "Clip gradient values", d.clip_value, 0, 1e9,
                                           "Before every update each gradient element is clamped into ± this "
                                           "(torch's clip_grad_value_, after the norm's clipping); 0 = none.")))),
        row("Schedule", &S::schedule,
            choice_spec("schedule", "Schedule", d.schedule, optim::schedule_names(),
                        "How the learning rate changes: constant (none); per epoch stepped down, cosine to zero, "
                        "exponential, or lowered when the monitored figure stops improving (plateau); per "
                        "optimizer step one cycle up and down (onecycle) or a linear warm-up then a linear "
                        "decay (warmup_linear).")),
        row("Schedule", &S::step_size,
            whole_spec("step_size", "Step every (epochs)", d.step_size, 1, 1e6,
                       "Epochs between learning-rate steps (step schedule)."),
            step_applies),
        row("Schedule", &S::gamma,
            real_spec("gamma", "Decay factor", d.gamma, 1e-6, 1,
                      "The factor the learning rate is multiplied by at each step (step schedule) or every "
                      "epoch (exponential)."),
            gamma_applies),
        added_later(row("Schedule", &S::warmup_steps,
                        whole_spec("warmup_steps", "Warm-up steps", d.warmup_steps, 0, 1e9,
                                   "Optimizer steps over which the learning rate rises linearly to the schedule's "
                                   "(0 = no warm-up). It starts from the warm-up start factor times it."))),
        advanced(added_later(row("Schedule", &S::warmup_start_factor,
                                 real_spec("warmup_start_factor", "Warm-up start factor", d.warmup_start_factor, 0, 1,
                                           "The share of the learning rate the first warm-up step takes."),
                                 warmup_applies))),
        added_later(row("Schedule", &S::end_factor,
                        real_spec("end_factor", "Final share of the rate", d.end_factor, 0, 1,
                                  "With warmup_linear, after the warm-up the learning rate falls linearly to "
                                  "this share of it at the run's last step."),
                        linear_applies)),
        added_later(row("Schedule", &S::pct_start,
                        real_spec("pct_start", "Rising share", d.pct_start, 0.001, 0.999,
                                  "One cycle: the share of the run's steps over which the learning rate rises to "
                                  "its maximum, the project's learning rate."),
                        onecycle_applies)),
        advanced(added_later(row("Schedule", &S::div_factor,
                                 real_spec("div_factor", "Start divisor", d.div_factor, 1, 1e9,
                                           "One cycle: the first step's learning rate is the maximum over this."),
                                 onecycle_applies))),
        advanced(added_later(row("Schedule", &S::final_div_factor,
                                 real_spec("final_div_factor", "Final divisor", d.final_div_factor, 1, 1e12,
                                           "One cycle: the last step's learning rate is the first's over this."),
                                 onecycle_applies))),
        added_later(row("Schedule", &S::plateau_factor,
                        real_spec("plateau_factor", "Plateau factor", d.plateau_factor, 1e-6, 0.999999,
                                  "Plateau schedule: the factor the learning rate is multiplied by when the monitored "
                                  "figure stops improving."),
                        plateau_applies)),
        added_later(row("Schedule", &S::plateau_patience,
                        whole_spec("plateau_patience", "Plateau patience (epochs)", d.plateau_patience, 0, 1e6,
                                   "Plateau schedule: epochs without improvement tolerated before the rate is "
                                   "lowered."),
                        plateau_applies)),
        advanced(added_later(row("Schedule", &S::plateau_threshold,
                                 real_spec("plateau_threshold", "Plateau threshold", d.plateau_threshold, 0, 1e9,
                                           "Plateau schedule: how much better than the best an epoch must be to "
                                           "count as an improvement (a share of it, or an amount: threshold "
                                           "mode)."),
                                 plateau_applies))),
        advanced(added_later(row("Schedule", &S::plateau_threshold_mode,
                                 choice_spec("plateau_threshold_mode", "Plateau threshold mode",
                                             d.plateau_threshold_mode, {"rel", "abs"},
                                             "Plateau schedule: the threshold as a share of the best (rel) or "
                                             "an amount (abs)."),
                                 plateau_applies))),
        advanced(added_later(row("Schedule", &S::plateau_cooldown,
                                 whole_spec("plateau_cooldown", "Plateau cooldown (epochs)", d.plateau_cooldown, 0,
                                            1e6,
                                            "Plateau schedule: epochs after a lowering before bad epochs count "
                                            "again."),
                                 plateau_applies))),
        advanced(added_later(row("Schedule", &S::plateau_min_lr,
                                 real_spec("plateau_min_lr", "Plateau minimum rate", d.plateau_min_lr, 0, 1e9,
                                           "Plateau schedule: the learning rate is never lowered below this."),
                                 plateau_applies))),
        row("Batches", &S::batch_size,
            whole_spec("batch_size", "Batch size", d.batch_size, 1, 1 << 20, "Examples per training step.")),
        row("Batches", &S::epochs, whole_spec("epochs", "Epochs", d.epochs, 1, 1e6, "Passes over the training data.")),
        row("Batches", &S::validation_fraction,
            real_spec("validation_fraction", "Validation share", d.validation_fraction, 0, 0.9,
                      "Share of the training data held out (seeded) to check every epoch and pick the best "
                      "checkpoint. The test split is only used at the end.")),
        // Unsigned in the file, any 64-bit value; the form's whole numbers are signed, 2^53 is plenty.
        row("Batches", &S::seed,
            whole_spec("seed", "Seed", int64_t(d.seed), 0, 9007199254740992.0,
                       "Seeds the initial weights, the shuffling and dropout: the same seed, the same run.")),
        row("Hardware", &S::precision,
            choice_spec("precision", "Precision", d.precision, {"fp32", "bf16"},
                        "Arithmetic of products and convolutions: fp32, or bf16 operands with fp32 accumulation "
                        "(a GPU, or a CPU with AVX512_BF16; any other CPU computes in fp32). Weights and "
                        "gradients stay fp32.")),
        advanced(row("Hardware", &S::cuda_graphs,
                     flag_spec("cuda_graphs", "CUDA graphs", d.cuda_graphs,
                               "On a GPU, replays the steady training step as one CUDA graph (fewer launches). "
                               "Steps that cannot be captured run one op at a time."))),
        advanced(row("Batches", &S::carry_state,
                     flag_spec("carry_state", "Carry recurrent state", d.carry_state,
                               "Text datasets: recurrent layers carry their hidden state across consecutive batches "
                               "of a text stream (truncated backpropagation through time); batches are not "
                               "shuffled."))),
        advanced(
            added_later(row("Batches", &S::accumulate_steps,
                            whole_spec("accumulate_steps", "Gradient accumulation steps", d.accumulate_steps, 1, 4096,
                                       "One optimizer step per this many batches, as one batch of batch size × "
                                       "this many examples would take. For large batches that do not fit in "
                                       "memory.")))),
        advanced(added_later(row("Hardware", &S::sync_batchnorm,
                                 flag_spec("sync_batchnorm", "Synchronised BatchNorm", d.sync_batchnorm,
                                           "Data-parallel runs (mpirun -np N): BatchNorm's batch statistics over the "
                                           "whole global batch instead of each process's own share. Two small "
                                           "all-reduces per BatchNorm layer and step.")))),
        added_later(row(
            "Batches", &S::class_balance,
            choice_spec("class_balance", "Class balance", d.class_balance, {"none", "weights", "sampler"},
                        "Imbalanced classes: 'weights' weighs each class's loss by n / (classes × its examples) of "
                        "the training split (CrossEntropy and NLL losses without weights of their own); "
                        "'sampler' draws the training batches with replacement, every class equally often. "
                        "Classification only."))),
        added_later(row("Stopping", &S::early_stopping_patience,
                        whole_spec("early_stopping_patience", "Early stopping patience (epochs)",
                                   d.early_stopping_patience, 0, 1e6,
                                   "The run ends after this many epochs in a row without an improvement of the "
                                   "monitored figure, and its best checkpoint is the best epoch by that figure "
                                   "(0 = off: every epoch runs).",
                                   "off"))),
        added_later(row("Stopping", &S::monitor,
                        choice_spec("monitor", "Monitored figure", d.monitor,
                                    optim::monitor_names(),
                                    "What early stopping and the plateau schedule watch. Without a validation "
                                    "split the validation figures are the training ones."),
                        monitor_applies)),
        advanced(added_later(row("Stopping", &S::monitor_mode,
                                 choice_spec("monitor_mode", "Better when", d.monitor_mode, {"auto", "min", "max"},
                                             "Whether the monitored figure is better lower (min) or higher (max); "
                                             "auto: higher for an accuracy, lower for a loss."),
                                 monitor_applies))),
        advanced(added_later(row("Stopping", &S::early_stopping_min_delta,
                                 real_spec("early_stopping_min_delta", "Smallest improvement",
                                           d.early_stopping_min_delta, 0, 1e9,
                                           "Early stopping: an epoch improves on the best only by more than this."),
                                 stopping_applies))),
        row("Monitoring", &S::stats_every,
            whole_spec("stats_every", "Statistics every (steps)", d.stats_every, 0, 1e6,
                       "Every how many training steps the per-node statistics are measured (0 = never).")),
        advanced(added_later(row(
            "Monitoring", &S::checkpoint_minutes,
            real_spec("checkpoint_minutes", "Resume checkpoint every (minutes)", d.checkpoint_minutes, 0, 10080,
                      "Minutes between two saves of the run's last checkpoint in the middle of an epoch, from which "
                      "an interrupted run resumes (it is saved at every epoch's end too); 0 = at epoch ends only. "
                      "A crash loses at most this much training, or one epoch, whichever is less.")))),
        row("Hardware", &S::device,
            choice_spec("device", "Device", d.device, {}, "Where training runs: cpu, cuda or cuda:N.")),
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
