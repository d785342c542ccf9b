#include "session/lr_finder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/grad_mode.h"
#include "tensor/generator.h"
#include "train/partial_load.h"
#include "train/step.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::session {
namespace {

void check_options(const LrFinderOptions& o) {
  if (!(o.start_lr > 0) || !std::isfinite(o.start_lr))
    throw ValueError("lr finder: start lr must be a number > 0, got " + shortest_text(o.start_lr));
  if (!(o.end_lr > o.start_lr) || !std::isfinite(o.end_lr))
    throw ValueError("lr finder: end lr must be a number > the start lr (" + shortest_text(o.start_lr) + "), got " +
                     shortest_text(o.end_lr));
  if (o.steps < kMinSteps)
    throw ValueError("lr finder: steps must be at least " + std::to_string(kMinSteps) + ", got " +
                     std::to_string(o.steps));
  if (!(o.smoothing >= 0 && o.smoothing < 1))
    throw ValueError("lr finder: smoothing must be in [0, 1), got " + shortest_text(o.smoothing));
  if (!(o.divergence > 1) || !std::isfinite(o.divergence))
    throw ValueError("lr finder: divergence must be a number > 1, got " + shortest_text(o.divergence));
}

// Restores the thread's grad mode (a worker thread's is its own).
class GradModeScope {
 public:
  explicit GradModeScope(bool on) : prev_(GradMode::enabled()) { GradMode::set_enabled(on); }
  ~GradModeScope() { GradMode::set_enabled(prev_); }
  GradModeScope(const GradModeScope&) = delete;
  GradModeScope& operator=(const GradModeScope&) = delete;

 private:
  bool prev_;
};

}  // namespace

LrSuggestion suggest_learning_rate(const std::vector<LrPoint>& points, bool diverged, int64_t planned_steps) {
  const int64_t before = int64_t(points.size()) - (diverged ? 1 : 0);  // points before divergence
  const int64_t first = std::max<int64_t>(planned_steps / 10, 0);
  const int64_t last = before - kTailSkip;  // one past the last point considered
  LrSuggestion s;
  if (last - first < 2) {
    s.note = "too few points before the loss " + std::string(diverged ? "diverged" : "ended") + " (" +
             std::to_string(before) + ", of which the first " + std::to_string(first) + " and the last " +
             std::to_string(kTailSkip) + " are left out): try a smaller start lr or more steps";
    return s;
  }
  double steepest = 0;
  for (int64_t i = first; i + 1 < last; ++i) {
    const LrPoint& a = points[size_t(i)];
    const LrPoint& b = points[size_t(i + 1)];
    const double slope = (b.smoothed - a.smoothed) / (std::log(b.lr) - std::log(a.lr));
    if (std::isfinite(slope) && slope < steepest) {
      steepest = slope;
      s.index = i;
    }
  }
  if (s.index < 0) {
    s.note = "the smoothed loss never fell between lr " + shortest_text(points[size_t(first)].lr) + " and " +
             shortest_text(points[size_t(last - 1)].lr) +
             ": the range may start too high (the loss diverges at once) or end too low";
    return s;
  }
  s.lr = points[size_t(s.index)].lr;
  return s;
}

LrFinderResult find_learning_rate(const graph::Graph& graph, const LrFinderOptions& options,
                                  const RunOptions& run_options, const LrProgress& progress) {
  check_options(options);
  TrainingRun run = make_training_run(graph, run_options);
  LrFinderResult result;
  if (!options.init_from.empty())
    result.initialised = train::init_from(options.init_from, *run.compiled.model, run.optimizer.get());
  const int64_t batches = run.train_loader->size();
  if (batches < kMinSteps)
    throw ValueError("lr finder: the training split has " + std::to_string(batches) + " batches of " +
                     std::to_string(run.settings.batch_size) + " and the finder needs at least " +
                     std::to_string(kMinSteps) + ": use a smaller batch_size or more data");
  const int64_t steps = std::min(options.steps, batches);
  result.planned_steps = steps;

  // Each group keeps its ratio to the project's lr (a node's lr_mult), as in training.
  optim::Optimizer& opt = *run.optimizer;
  std::vector<double> ratios;
  for (const optim::ParamGroup& g : opt.param_groups()) ratios.push_back(g.lr / run.settings.lr);

  const GradModeScope grad(true);
  manual_seed(run.settings.seed);  // dropout, as a run's
  nn::Module& model = *run.compiled.model;
  model.train();
  train::TrainingStep step(model, opt,
                           {.loss = run.trainer_options.loss,
                            .loss_parts = run.trainer_options.loss_parts,
                            .classification = run.trainer_options.classification,
                            .clip_grad_norm = run.trainer_options.clip_grad_norm,
                            .clip_grad_value = run.trainer_options.clip_grad_value,
                            .cuda_graphs = false,  // the lr changes every step
                            .carry_state = run.trainer_options.carry_state});
  if (run.trainer_options.carry_state) model.set_carry_state(true);  // a text's streams, as in training

  double average = 0, lowest = std::numeric_limits<double>::infinity();
  int64_t i = 0;
  for (data::Batch& b : *run.train_loader) {
    if (i == steps) break;
    if (options.cancel && options.cancel->load()) {
      result.cancelled = true;
      break;
    }
    const double t = double(i) / double(steps - 1);
    const double lr = options.start_lr * std::pow(options.end_lr / options.start_lr, t);
    for (size_t g = 0; g < ratios.size(); ++g) opt.param_groups()[g].lr = lr * ratios[g];
    const train::StepResult r = step.run(b.inputs, b.targets);
    LrPoint p{lr, r.loss, 0};
    const bool finite = r.updated && std::isfinite(p.loss);
    if (finite) {
      average = options.smoothing * average + (1 - options.smoothing) * p.loss;
      p.smoothed = average / (1 - std::pow(options.smoothing, double(i + 1)));
    } else {
      p.smoothed = std::numeric_limits<double>::infinity();
    }
    lowest = std::min(lowest, p.smoothed);
    result.points.push_back(p);
    ++i;
    if (progress) progress(p, i, steps);
    if (!finite || (lowest > 0 && p.smoothed > options.divergence * lowest)) {
      result.diverged = true;
      break;
    }
  }
  if (!result.cancelled) result.suggestion = suggest_learning_rate(result.points, result.diverged, steps);
  return result;
}

}  // namespace plexus::session
