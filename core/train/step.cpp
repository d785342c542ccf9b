#include "train/step.h"

#include <cmath>
#include <optional>

#include "autograd/grad_mode.h"
#include "cuda/step_graph.h"
#include "dist/reducer.h"
#include "ops/ops.h"
#include "ops/replica_sum.h"
#include "optim/clip.h"
#include "train/metrics.h"
#include "util/error.h"

namespace plexus::train {
TrainingStep::TrainingStep(nn::Module& model, optim::Optimizer& optimizer, StepOptions options)
    : model_(model), opt_(optimizer), options_(std::move(options)), device_(model.device()) {
  if (!options_.loss) throw ValueError("TrainingStep: no loss function");
  if (options_.accumulate_steps < 1)
    throw ValueError("TrainingStep: accumulate_steps must be at least 1, got " + std::to_string(options_.accumulate_steps));
  // The optimizer's parameters: a frozen node's have no gradient to sum.
  if (options_.comm) reducer_ = std::make_unique<dist::GradientReducer>(*options_.comm, opt_.parameters());
  if (!device_.is_cuda() || !options_.cuda_graphs) return;
  if (options_.comm)
    note_ = "CUDA graphs not used: the gradients are summed over " + std::to_string(options_.comm->size()) +
            (options_.comm->size() == 1 ? " process" : " processes") + " between backward and the update";
  else if (options_.accumulate_steps > 1)
    note_ = "CUDA graphs not used: an optimizer step spans " + std::to_string(options_.accumulate_steps) +
            " batches (accumulate_steps)";
  else if (options_.clip_grad_norm > 0 || options_.clip_grad_value > 0)
    note_ = "CUDA graphs not used: gradient clipping runs outside the captured step";
  else if (options_.carry_state)
    note_ = "CUDA graphs not used: carry_state starts each step from the hidden state the previous step left";
  else if (!opt_.replayable())
    note_ = "CUDA graphs not used: the " + opt_.kind() + " update is not one fused kernel per parameter";
  else
    graphs_possible_ = true;
}

TrainingStep::~TrainingStep() = default;

bool TrainingStep::replaying() const { return graph_ && graph_->captured(); }

Tensor TrainingStep::statistics(const Tensor& out, const Tensor& target, const Tensor& loss) {
  if (loss.numel() != 1) throw ShapeError("the loss must be a scalar, got shape " + to_string(loss.shape()));
  NoGradGuard no_grad;
  Tensor stats = loss.reshape({1});
  if (options_.loss_parts) {
    std::vector<Tensor> parts{stats};
    for (const Tensor& p : options_.loss_parts.values()) parts.push_back(p.to(stats.device()).reshape({1}));
    if (parts.size() != options_.loss_parts.count() + 1)
      throw ValueError("the loss has " + std::to_string(parts.size() - 1) + " parts, not the " +
                       std::to_string(options_.loss_parts.count()) + " announced");
    stats = concat(parts);
  }
  if (options_.classification && class_targets_match(out, target))  // every position counts
    stats = concat({stats, sum(eq(argmax(out, -1), target)).reshape({1})});
  return stats;
}

StepResult TrainingStep::read(const Tensor& stats, bool update_ran) const {
  const std::vector<float> v = stats.to_vector();
  StepResult r;
  r.loss = v[0];
  r.parts.assign(v.begin() + 1, v.begin() + 1 + std::ptrdiff_t(options_.loss_parts.count()));
  r.hits_counted = v.size() > 1 + options_.loss_parts.count();
  if (r.hits_counted) r.hits = int64_t(v[1 + options_.loss_parts.count()]);
  r.updated = update_ran && std::isfinite(r.loss);
  return r;
}

void TrainingStep::count(StepResult& r, const Tensor& x, const Tensor& y) {
  r.examples = x.dim() ? x.shape()[0] : 1;
  r.positions = r.hits_counted ? y.numel() : 0;
}

std::vector<double> TrainingStep::figures(const StepResult& r, bool stop) const {
  std::vector<double> v{double(r.loss) * double(r.examples), double(r.hits), double(r.examples), double(r.positions),
                        r.hits_counted ? 1.0 : 0.0, r.updated ? 0.0 : 1.0, stop ? 1.0 : 0.0};
  // An empty part (no rows on this rank) has no parts: zeros, so every rank sends as many.
  for (size_t i = 0; i < options_.loss_parts.count(); ++i)
    v.push_back(i < r.parts.size() ? double(r.parts[i]) * double(r.examples) : 0.0);
  return v;
}

void TrainingStep::take_sums(StepResult& r, const std::vector<double>& v) {
  r.examples = int64_t(v[2]);
  r.loss = r.examples ? float(v[0] / v[2]) : 0.f;
  r.hits = int64_t(v[1]);
  r.positions = int64_t(v[3]);
  r.hits_counted = v[4] > 0;
  r.updated = v[5] == 0;  // every rank finite, so every rank goes on or none does
  r.stop = v[6] > 0;
  r.parts.resize(v.size() - 7);
  for (size_t i = 0; i < r.parts.size(); ++i) r.parts[i] = r.examples ? float(v[7 + i] / v[2]) : 0.f;
}

StepResult TrainingStep::eager(const Tensor& x, const Tensor& y, StepProbe* probe, const StepPart& part) {
  std::optional<ReplicaSumGuard> synced;
  if (options_.sync_batchnorm && options_.comm)
    synced.emplace([comm = options_.comm](Tensor& t) { comm->all_reduce_sum(t)->wait(); });
  StepResult r;
  r.updated = true;  // an empty part (data-parallel) has nothing to be non-finite
  Tensor loss;
  if (x.defined()) {
    const Tensor out = model_(x);
    loss = options_.loss(out, y);
    // One read from the device per batch, before the update: a non-finite loss skips it.
    r = read(statistics(out, y, loss), true);
    count(r, x, y);
  }
  r.stop = part.stop;
  // Data-parallel, the figures are summed while backward runs: the ranks meet once a step,
  // after backward. A loss not finite on some rank then skips the update on every rank.
  std::vector<double> sums;
  std::unique_ptr<dist::Request> summing;
  if (options_.comm) {
    sums = figures(r, part.stop);
    summing = options_.comm->all_reduce_sum(sums);
  } else if (!r.updated) {
    return r;
  }
  if (part.first) opt_.zero_grad();
  const bool reduce = reducer_ && part.last;
  if (reduce) reducer_->begin();
  if (loss.defined() && r.updated) (part.weight == 1 ? loss : loss * float(part.weight)).backward();
  if (reduce) reducer_->finish();
  if (summing) {
    summing->wait();
    take_sums(r, sums);
  }
  if (!r.updated || !part.last) return r;
  if (probe) probe->after_backward();
  if (options_.clip_grad_norm > 0) optim::clip_grad_norm_(opt_.parameters(), options_.clip_grad_norm);
  if (options_.clip_grad_value > 0) optim::clip_grad_value_(opt_.parameters(), options_.clip_grad_value);
  opt_.step();
  if (probe) probe->after_update();
  return r;
}

void TrainingStep::stop_graphs(const std::string& why) {
  graphs_possible_ = false;
  graph_.reset();
  static_x_ = static_y_ = static_stats_ = Tensor();
  note_ = "CUDA graphs not used: " + why;
}

bool TrainingStep::try_capture(const Tensor& inputs, const Tensor& targets) {
  graph_ = std::make_unique<cuda::CapturedStep>(device_.index);
  static_x_ = empty(inputs.shape(), device_);
  static_y_ = empty(targets.shape(), device_);
  static_x_.copy_(inputs);
  static_y_.copy_(targets);
  const std::optional<std::string> failed = graph_->capture([&] {
    const Tensor out = model_(static_x_);
    const Tensor loss = options_.loss(out, static_y_);
    static_stats_ = statistics(out, static_y_, loss);
    graph_->skip_update_unless_finite(static_stats_.narrow(0, 0, 1));
    opt_.zero_grad();
    loss.backward();
    opt_.step();
  });
  if (failed) {
    stop_graphs(*failed);
    return false;
  }
  note_ = "the training step runs as a CUDA graph (captured after " + std::to_string(options_.warmup_steps) +
          " eager steps of batch shape " + to_string(inputs.shape()) + ")";
  return true;
}

StepResult TrainingStep::replay(const Tensor& inputs, const Tensor& targets) {
  static_x_.copy_(inputs);
  static_y_.copy_(targets);
  graph_->replay([&] { opt_.step(); });
  StepResult r = read(static_stats_, true);
  count(r, inputs, targets);
  return r;
}

StepResult TrainingStep::run(const Tensor& inputs, const Tensor& targets, StepProbe* probe, StepPart part) {
  if (!inputs.defined() && !options_.comm) throw ValueError("TrainingStep: a batch without inputs");
  if (graphs_possible_ && !probe) {
    if (replaying() && inputs.shape() == static_x_.shape() && targets.shape() == static_y_.shape())
      return stopping(replay(inputs, targets), part);
    if (!graph_) {
      const bool same = inputs.shape() == last_x_ && targets.shape() == last_y_;
      same_shape_steps_ = same ? same_shape_steps_ + 1 : 1;
      last_x_ = inputs.shape();
      last_y_ = targets.shape();
      // The first steps allocate the optimizer's state and let the caches settle.
      if (same_shape_steps_ > options_.warmup_steps && try_capture(inputs, targets)) return stopping(replay(inputs, targets), part);
      if (++uncaptured_steps_ == kShapeNoteAfter && graphs_possible_)
        note_ = "CUDA graphs not used so far: the batch shape keeps changing (now " + to_string(inputs.shape()) +
                "); a graph replays one shape";
    }
  }
  if (!inputs.defined()) return eager(inputs, targets, probe, part);
  return eager(inputs.to(device_), targets.to(device_), probe, part);
}

}  // namespace plexus::train
