#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>
#include <type_traits>

#include "autograd/grad_mode.h"
#include "dist/replicas.h"
#include "ops/ops.h"
#include "optim/clip.h"
#include "train/metrics.h"
#include "util/error.h"
#include "util/out_of_memory.h"
#include "util/subnormals.h"

namespace plexus::train {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class Cancelled {};  // unwinds the loop on cancel; never leaves run()
class NonFiniteLoss : public Error {  // of the global batch: every rank of a run fails alike
 public:
  using Error::Error;
};
struct Interrupted {  // the same on interrupt(), with where
  RunPosition position;
};

// Runs `f` (a step, the loader fetching a batch, an evaluation) and says where an allocation
// refused inside it happened: "out of memory at epoch 3, batch 17, in the forward pass of Linear
// 'fc2': cannot allocate 3.0 GiB for a tensor of shape ...". `batch` 0 and `doing` null are left
// out. The text is built only on failure: a steady step allocates nothing here.
template <class F>
auto saying_where_memory_ran_out(int epoch, int64_t batch, const char* doing, const NodeInfos& nodes, F&& f) {
  const auto where = [&](const std::string& node, const std::string& op) {
    std::string text = "out of memory at epoch " + std::to_string(epoch);
    if (batch > 0) text += ", batch " + std::to_string(batch);
    if (doing) text += std::string(", ") + doing;
    if (!node.empty()) text += ", in the forward pass of " + node_label(nodes, node);
    else if (!op.empty()) text += ", in the backward pass (the gradient of " + op + ")";
    return text;
  };
  try {
    return f();
  } catch (const OutOfMemoryError& e) {
    throw OutOfMemoryError(where(e.node, e.op) + ": " + e.what(), e.bytes());
  } catch (const std::bad_alloc&) {  // a container outside the allocators: the size is not known
    throw OutOfMemoryError(where({}, {}) + ": the system refused an allocation (" + memory_situation() + ")", 0);
  }
}

int64_t batch_size_of(const Tensor& inputs) { return inputs.dim() ? inputs.shape()[0] : 1; }

// Appends each row's predicted class (argmax, as ConfusionMatrix counts it) and its softmax
// probability, 1 / sum_j exp(l_j - l_pred), and with two classes class 1's, 1 / (1 + exp(l_0 - l_1)):
// one host pass over logits already in memory.
void append_predictions(const Tensor& logits, std::vector<int32_t>& predicted, std::vector<float>& confidence,
                        std::vector<float>& positive) {
  const Tensor l = logits.to(Device::cpu()).contiguous();  // the model may live on a GPU
  const std::vector<float> pred = argmax(l, 1).to_vector();
  const int64_t classes = l.shape()[1];
  for (size_t i = 0; i < pred.size(); ++i) {
    const float* row = l.data() + int64_t(i) * classes;
    const float best = row[int64_t(pred[i])];
    double total = 0;
    for (int64_t j = 0; j < classes; ++j) total += std::exp(double(row[j]) - double(best));
    predicted.push_back(int32_t(pred[i]));
    confidence.push_back(float(1.0 / total));
    if (classes == 2) positive.push_back(float(1.0 / (1.0 + std::exp(double(row[0]) - double(row[1])))));
  }
}

// Each part's value beside its loss node's id.
template <class V>
std::vector<LossPart> named_parts(const LossParts& parts, const std::vector<V>& values) {
  std::vector<LossPart> out;
  for (size_t i = 0; i < values.size() && i < parts.count(); ++i) {
    if constexpr (std::is_same_v<V, Average>) out.push_back({parts.names[i], values[i].value()});
    else out.push_back({parts.names[i], double(values[i])});
  }
  return out;
}

LossFunction or_cross_entropy(LossFunction loss) {
  if (loss) return loss;
  return [](const Tensor& out, const Tensor& target) { return cross_entropy(out, target); };
}

// A data-parallel evaluation's figures: every rank's shard summed.
void sum_over_ranks(dist::Communicator& comm, Average& loss, std::vector<Average>& parts, ConfusionMatrix& confusion,
                    int64_t& top, int64_t& seen) {
  const int64_t classes = confusion.classes();
  std::vector<double> v{loss.value() * double(loss.count()), double(loss.count()), double(top), double(seen),
                        double(classes), classes ? 1.0 : 0.0};
  for (const Average& p : parts) v.push_back(p.value() * double(p.count()));
  comm.all_reduce_sum(v)->wait();
  loss = Average();
  if (v[1] > 0) loss.add(v[0] / v[1], int64_t(v[1]));
  for (size_t i = 0; i < parts.size(); ++i) {
    parts[i] = Average();
    if (v[1] > 0) parts[i].add(v[6 + i] / v[1], int64_t(v[1]));
  }
  top = int64_t(v[2]);
  seen = int64_t(v[3]);
  if (v[5] == 0) return;  // no rank counted classes
  const int64_t k = int64_t(v[4] / v[5]);  // the same on every rank that counted
  std::vector<double> counts(size_t(k * k), 0.0);
  if (classes == k)
    for (size_t i = 0; i < counts.size(); ++i) counts[i] = double(confusion.counts()[i]);
  comm.all_reduce_sum(counts)->wait();
  confusion = ConfusionMatrix(k, std::vector<int64_t>(counts.begin(), counts.end()));
}

}  // namespace

Trainer::Trainer(nn::Module& model, optim::Optimizer& optimizer, data::DataLoader& train_loader,
                 data::DataLoader* eval_loader, TrainerOptions options)
    : model_(model), opt_(optimizer), train_(train_loader), eval_(eval_loader), options_(std::move(options)) {
  if (options_.epochs < 1) throw ValueError("Trainer: epochs must be at least 1, got " + std::to_string(options_.epochs));
  if (options_.first_epoch < 1 || options_.first_epoch > options_.epochs)
    throw ValueError("Trainer: the first epoch must be between 1 and " + std::to_string(options_.epochs) + ", got " +
                     std::to_string(options_.first_epoch));
  if (options_.stats_every < 0)
    throw ValueError("Trainer: stats_every must be 0 or more, got " + std::to_string(options_.stats_every));
  if (options_.accumulate_steps < 1)
    throw ValueError("Trainer: accumulate_steps must be at least 1, got " + std::to_string(options_.accumulate_steps));
  options_.warmup.check();
  peak_gflops_ = options_.peak_gflops;
  if (const auto& at = options_.resume_at) {
    if (at->epoch != options_.first_epoch || at->batch < 0 || at->batch > train_.size())
      throw ValueError("Trainer: cannot go on at epoch " + std::to_string(at->epoch) + ", batch " +
                       std::to_string(at->batch) + " (first epoch " + std::to_string(options_.first_epoch) + ", " +
                       std::to_string(train_.size()) + " batches an epoch)");
    elapsed_ = at->elapsed;
    batches_done_ = at->batches_done;
  }
  options_.loss = or_cross_entropy(std::move(options_.loss));
}

void Trainer::publish(const Event& e) {
  if (callback_) callback_(e);
}

void Trainer::pause() { paused_ = true; }

void Trainer::resume() {
  {
    std::lock_guard lock(pause_mu_);
    paused_ = false;
  }
  pause_cv_.notify_all();
}

void Trainer::interrupt() {
  {
    std::lock_guard lock(pause_mu_);
    interrupted_ = true;
  }
  pause_cv_.notify_all();
}

void Trainer::cancel() {
  {
    std::lock_guard lock(pause_mu_);
    cancelled_ = true;
  }
  pause_cv_.notify_all();
}

bool Trainer::wait_while_paused() {
  if (paused_) {
    std::unique_lock lock(pause_mu_);
    pause_cv_.wait(lock, [&] { return !paused_ || cancelled_ || interrupted_; });
  }
  return !cancelled_;
}

RunPosition Trainer::position(int epoch, int64_t batch, const EpochSoFar& so_far, double seconds) const {
  RunPosition at;
  at.epoch = epoch;
  at.batch = batch;
  at.so_far = so_far;
  at.so_far.seconds = seconds;
  at.elapsed = elapsed_;
  at.batches_done = batches_done_;
  at.stopping = stopping_;
  if (options_.plateau) at.plateau = options_.plateau->state();
  return at;
}

void Trainer::boundary(RunPosition at, Boundary kind) {
  {
    std::lock_guard lock(default_generator().mutex());
    at.generator = default_generator().state();
  }
  if (options_.carry_state && kind != Boundary::EpochEnd) at.carried = model_.carried_state();
  options_.at_boundary(at, kind);
}

void Trainer::begin_stream() {
  if (!options_.carry_state) return;
  model_.set_carry_state(true);
  model_.reset_state();
}

double Trainer::reported_lr(double warmup_factor) const {
  if (!options_.base_lr) return (opt_.param_groups().empty() ? 0.0 : opt_.param_groups()[0].lr) * warmup_factor;
  const double base = *options_.base_lr;
  if (options_.plateau) return base * options_.plateau->scale() * warmup_factor;
  return (scheduler_ ? scheduler_->lr_at(scheduler_->last_epoch(), base) : base) * warmup_factor;
}

EpochEnd Trainer::train_epoch(int epoch, TrainingStep& step, std::string& graph_note) {
  model_.train();
  begin_stream();
  train_.set_epoch(epoch - 1);
  const int64_t batches = train_.size();
  // A run going on mid-epoch starts with the figures of the batches it skips.
  const bool resuming = options_.resume_at && epoch == options_.resume_at->epoch;
  if (resuming && options_.carry_state && !options_.resume_at->carried.empty())
    model_.load_carried_state(options_.resume_at->carried);
  EpochSoFar f = resuming ? options_.resume_at->so_far : EpochSoFar{};
  int64_t batch = resuming ? options_.resume_at->batch : 0;
  const auto start = Clock::now();
  const auto spent = [&] { return f.seconds + seconds_since(start); };
  // The range-for written out, to time the loader's begin() and ++: the wait for data.
  const auto waiting = [&](auto&& advance) {
    const auto t = Clock::now();
    saying_where_memory_ran_out(epoch, batch + 1, "loading the batch", options_.nodes, advance);
    f.data_wait += seconds_since(t);
  };
  const int64_t k = options_.accumulate_steps;
  // The first batch this Trainer trains starts an optimizer step wherever it falls (a run that
  // goes on mid-epoch has no gradients from before).
  bool fresh = true;
  data::DataLoader::Iterator it;
  waiting([&] { it = train_.begin_at(batch); });
  for (; it != train_.end(); waiting([&] { ++it; })) {
    data::Batch& b = *it;
    // Ranks stop together (StepPart::stop), so a cancel here only asks.
    const bool stop = !wait_while_paused();
    if (stop && !options_.comm) throw Cancelled();
    if (interrupted_) {
      throw Interrupted{position(epoch, batch, f, spent())};
    }
    StepPart part;
    const int64_t group = batch / k * k, group_end = std::min(batches, group + k);
    part.first = batch == group || fresh;
    part.last = batch + 1 == group_end;
    part.stop = stop;
    fresh = false;
    if (k > 1 || options_.comm) {
      int64_t rows = 0;
      for (int64_t j = group; j < group_end; ++j) rows += train_.batch_rows(j);
      part.weight = double(b.inputs.defined() ? batch_size_of(b.inputs) : 0) / double(rows);
    }
    ++batch;
    const auto t0 = Clock::now();
    StatsSampler* sampling = part.last && stats_ && stats_->due(batches_done_ + 1) ? stats_.get() : nullptr;
    if (sampling) sampling->begin();
    // Warm-up counts optimizer steps: with accumulation, one per accumulate_steps batches.
    const int64_t steps_per_epoch = (batches + k - 1) / k;
    const int64_t step_index = int64_t(epoch - 1) * steps_per_epoch + (batch - 1) / k;
    if (scheduler_ && scheduler_->per_step()) scheduler_->set_epoch(step_index);
    const double warmup = options_.warmup.factor(step_index);
    const StepResult r = saying_where_memory_ran_out(epoch, batch, nullptr, options_.nodes, [&] {
      const optim::ScaledLr warmed(opt_, warmup);  // the scheduler's lrs are back after the step
      return step.run(b.inputs, b.targets, sampling, part);
    });
    if (step.graph_note() != graph_note) {
      graph_note = step.graph_note();
      publish(Notice{graph_note});
    }
    const float value = r.loss;
    if (!r.updated) fail_non_finite(value, epoch, batch, b.inputs);

    const int64_t n = r.examples;
    f.loss.add(value, n);
    f.parts.resize(r.parts.size());
    for (size_t i = 0; i < r.parts.size(); ++i) f.parts[i].add(r.parts[i], n);
    f.seen += n;
    if (r.hits_counted) {
      f.correct += r.hits;
      f.positions += r.positions;
    }
    elapsed_ += seconds_since(t0);
    ++batches_done_;

    BatchEnd e;
    e.epoch = epoch;
    e.epochs = options_.epochs;
    e.batch = batch;
    e.batches = batches;
    e.loss = value;
    e.running_loss = f.loss.value();
    e.losses = named_parts(options_.loss_parts, r.parts);
    e.running_accuracy = f.positions ? double(f.correct) / double(f.positions) : 0.0;
    const double seconds = spent();
    e.samples_per_second = seconds > 0 ? double(f.seen) / seconds : 0.0;
    e.gflops = e.samples_per_second * options_.flops_per_example / 1e9;
    e.peak_gflops = raised_peak(e.gflops);
    const int64_t remaining = int64_t(options_.epochs - epoch) * batches + (batches - batch);
    e.eta_seconds = double(remaining) * elapsed_ / double(batches_done_);
    e.lr = reported_lr(warmup);
    publish(e);
    if (sampling) publish(sampling->finish(epoch, batch, batches_done_));
    if (options_.at_boundary && part.last) {
      boundary(position(epoch, batch, f, spent()), r.stop || cancelled_ ? Boundary::Stop : Boundary::Batch);
    }
    if (r.stop) throw Cancelled();
  }
  EpochEnd end;
  end.epoch = epoch;
  end.epochs = options_.epochs;
  end.train_loss = f.loss.value();
  end.train_losses = named_parts(options_.loss_parts, f.parts);
  end.train_accuracy = f.positions ? double(f.correct) / double(f.positions) : 0.0;
  end.data_wait_seconds = f.data_wait;
  end.train_seconds = spent();
  end.samples_per_second = end.train_seconds > 0 ? double(f.seen) / end.train_seconds : 0.0;
  end.gflops = end.samples_per_second * options_.flops_per_example / 1e9;
  end.peak_gflops = raised_peak(end.gflops);
  return end;
}

double Trainer::raised_peak(double gflops) {
  if (peak_gflops_ > 0) peak_gflops_ = std::max(peak_gflops_, gflops);
  return peak_gflops_;
}

void Trainer::fail_non_finite(float loss, int epoch, int64_t batch, const Tensor& inputs) {
  std::string message = "the loss became " + std::string(std::isnan(loss) ? "NaN" : "infinite") + " at epoch " +
                        std::to_string(epoch) + ", batch " + std::to_string(batch);
  if (stats_ && inputs.defined()) {
    const NodeStats sample = stats_->diagnose(inputs, epoch, batch, batches_done_ + 1);
    const auto first = std::find_if(sample.health.begin(), sample.health.end(),
                                    [](const HealthIssue& h) { return h.kind == HealthKind::NonFinite; });
    message += first != sample.health.end() ? "; the first non-finite output is " + node_label(options_.nodes, first->node)
                                            : "; every node's output is finite, the loss computed from them is not";
    publish(sample);
  }
  throw NonFiniteLoss(message + "; try a lower learning rate or gradient clipping");
}

EpochEnd Trainer::evaluate(data::DataLoader& loader) {
  begin_stream();  // evaluation starts from no state (and modules do not carry in eval mode)
  return train::evaluate(model_, loader, options_, &cancelled_);
}

EpochEnd evaluate(nn::Module& model, data::DataLoader& loader, const TrainerOptions& options,
                  const std::atomic<bool>* cancelled) {
  NoGradGuard no_grad;
  const SubnormalScope subnormals;
  const LossFunction loss = or_cross_entropy(options.loss);
  const bool was_training = model.is_training();
  model.eval();
  Average loss_avg;
  std::vector<Average> parts(options.loss_parts.count());  // as many on every rank
  ConfusionMatrix confusion;
  int64_t top = 0, seen = 0;
  std::vector<int32_t> predicted;
  std::vector<float> confidence, positive, outputs;
  const Device device = model.device();
  for (data::Batch& b : loader) {
    if (cancelled && *cancelled && !options.comm) break;
    if (!b.inputs.defined()) continue;  // this rank's part of a batch with fewer rows than ranks
    // The metrics run on the host: one copy of the outputs instead of several small reads.
    const Tensor out = model(b.inputs.to(device)).to(Device::cpu());
    loss_avg.add(loss(out, b.targets).item(), batch_size_of(b.inputs));
    if (options.loss_parts) {
      const std::vector<Tensor> values = options.loss_parts.values();
      for (size_t i = 0; i < parts.size() && i < values.size(); ++i) parts[i].add(values[i].item(), batch_size_of(b.inputs));
    }
    if (options.classification && class_targets_match(out, b.targets)) {  // every position counts
      const int64_t classes = out.shape().back();
      if (confusion.classes() == 0) confusion = ConfusionMatrix(classes);
      confusion.add(out, b.targets);
      top += top_k_correct(out, b.targets, std::min(options.top_k, classes));
      seen += b.targets.numel();
      // One prediction per example (the dataset preview's): only for [N, C] outputs.
      if (options.record_predictions && out.dim() == 2) append_predictions(out, predicted, confidence, positive);
    } else if (!options.classification && options.record_predictions && out.dim() == 2) {
      const std::vector<float> values = out.to_vector();
      outputs.insert(outputs.end(), values.begin(), values.end());
    }
  }
  model.train(was_training);
  if (options.comm) sum_over_ranks(*options.comm, loss_avg, parts, confusion, top, seen);
  EpochEnd e;
  e.has_eval = true;
  e.eval_loss = loss_avg.value();
  e.eval_losses = named_parts(options.loss_parts, parts);
  e.outputs = std::move(outputs);
  if (seen) {
    e.eval_accuracy = confusion.accuracy();
    e.eval_top5 = double(top) / double(seen);
    e.per_class_accuracy = confusion.per_class_accuracy();
    e.classes = confusion.classes();
    e.confusion = confusion.counts();
    e.predicted = std::move(predicted);
    e.confidence = std::move(confidence);
    e.positive_probability = std::move(positive);
  }
  return e;
}

RunResult Trainer::run() {
  RunResult result;
  result.epochs_completed = options_.first_epoch - 1;  // a continued run counts on from its predecessor
  const auto start = Clock::now();
  const bool grad_was_enabled = GradMode::enabled();
  GradMode::set_enabled(true);  // grad mode is per thread: a fresh worker thread sets its own
  if (options_.seed && !options_.resume_at) manual_seed(*options_.seed);
  if (options_.resume_at && options_.resume_at->generator) {  // resumed in another process
    std::lock_guard lock(default_generator().mutex());
    default_generator().set_state(*options_.resume_at->generator);
  }
  stopping_ = options_.resume_at ? options_.resume_at->stopping : EarlyStoppingState{};
  const PrecisionGuard precision(options_.precision);  // a CPU without AVX512_BF16 computes in FP32
  const SubnormalScope subnormals;  // the small loops on this thread too, as the pool's
  try {
    if (precision_on(model_.device(), options_.precision) != options_.precision && !options_.resume_at)
      publish(Notice{std::string("precision ") + precision_name(options_.precision) +
                     " needs a CPU with AVX512_BF16 (or PLEXUS_CPU_BF16 is off); this run computes in fp32"});
    TrainingStep step(model_, opt_,
                      {.loss = options_.loss, .loss_parts = options_.loss_parts,
                       .classification = options_.classification,
                       .clip_grad_norm = options_.clip_grad_norm, .clip_grad_value = options_.clip_grad_value,
                       .cuda_graphs = options_.cuda_graphs,
                       .carry_state = options_.carry_state, .accumulate_steps = options_.accumulate_steps,
                       .comm = options_.comm, .sync_batchnorm = options_.sync_batchnorm});
    if (options_.sync_batchnorm && options_.comm && train_.size() > 0 &&
        train_.batch_rows(train_.size() - 1) < options_.comm->size())
      throw ValueError("sync_batchnorm: the last batch has " + std::to_string(train_.batch_rows(train_.size() - 1)) +
                       " examples for " + std::to_string(options_.comm->size()) +
                       " processes, and every process needs some; choose another batch_size");
    if (options_.comm) dist::broadcast_state(*options_.comm, model_);
    if (options_.plateau && options_.resume_at && options_.resume_at->plateau)
      options_.plateau->restore(*options_.resume_at->plateau);
    if (options_.observe_outputs)
      stats_ = std::make_unique<StatsSampler>(model_, options_.observe_outputs, options_.stats_every, options_.nodes);
    std::string graph_note;  // the last one published
    for (int epoch = options_.first_epoch; epoch <= options_.epochs; ++epoch) {
      const auto epoch_start = Clock::now();
      EpochEnd e = train_epoch(epoch, step, graph_note);
      if (options_.comm) dist::sync_replicas(*options_.comm, model_, "after epoch " + std::to_string(epoch));
      if (eval_) {
        EpochEnd ev = saying_where_memory_ran_out(epoch, 0, "evaluating on the validation split", options_.nodes,
                                                  [&] { return evaluate(*eval_); });
        if (cancelled_ && !options_.comm) throw Cancelled();  // ranks stop together, at a step
        e.has_eval = true;
        e.eval_loss = ev.eval_loss;
        e.eval_losses = std::move(ev.eval_losses);
        e.eval_accuracy = ev.eval_accuracy;
        e.eval_top5 = ev.eval_top5;
        e.per_class_accuracy = ev.per_class_accuracy;
        e.classes = ev.classes;
        e.confusion = std::move(ev.confusion);
        e.predicted = std::move(ev.predicted);
        e.confidence = std::move(ev.confidence);
        e.positive_probability = std::move(ev.positive_probability);
      }
      e.lr = reported_lr(1);  // the schedule's, for the epoch
      if (scheduler_ && !scheduler_->per_step()) scheduler_->step();
      if (options_.plateau) options_.plateau->step(options_.early_stopping.monitor.value(e));
      if (options_.on_epoch_end)
        if (const std::string note = options_.on_epoch_end(e); !note.empty()) publish(Notice{note});
      e.seconds = seconds_since(epoch_start);
      result.history.push_back(e);
      result.epochs_completed = epoch;
      publish(e);
      // Patience running out at the last epoch ends the run as completed.
      const bool patience_out = options_.early_stopping.on() && options_.early_stopping.epoch_ended(stopping_, e);
      if (patience_out && epoch < options_.epochs) {
        result.stopped_early = true;
        result.best_epoch = stopping_.best_epoch;
        break;  // as after the last epoch: the test split and the final checkpoint follow
      }
      // After the last epoch the final checkpoint follows at once: a run killed before it
      // resumes from the last epoch's batches.
      if (options_.at_boundary && epoch < options_.epochs)
        boundary(position(epoch + 1, 0, {}, 0), Boundary::EpochEnd);
    }
    if (test_) {
      TrainerOptions test_options = options_;
      test_options.record_predictions = options_.record_test_predictions;
      begin_stream();
      const auto evaluate_test = [&] { return train::evaluate(model_, *test_, test_options, &cancelled_); };
      EpochEnd t =
          saying_where_memory_ran_out(options_.epochs, 0, "evaluating on the test split", options_.nodes, evaluate_test);
      if (cancelled_ && !options_.comm) throw Cancelled();
      t.epoch = t.epochs = result.epochs_completed;
      result.test = t;
      publish(TestEnd{std::move(t)});
    }
  } catch (const Cancelled&) {
    result.status = RunStatus::Cancelled;
  } catch (const Interrupted& i) {
    result.status = RunStatus::Interrupted;
    result.position = i.position;
  } catch (const dist::RankMismatch& ex) {  // the replicas drifted apart: every rank sees it
    result.status = RunStatus::Failed;
    result.message = ex.what();
    result.every_rank = true;
  } catch (const NonFiniteLoss& ex) {
    result.status = RunStatus::Failed;
    result.message = ex.what();
    result.every_rank = true;
  } catch (const std::bad_alloc&) {  // outside the steps and evaluations, which say where
    result.status = RunStatus::Failed;
    result.message = "out of memory during training (epoch " + std::to_string(result.epochs_completed + 1) + ")";
  } catch (const std::exception& ex) {
    result.status = RunStatus::Failed;
    result.message = ex.what();
  }
  stats_.reset();  // takes its observer off the model
  GradMode::set_enabled(grad_was_enabled);
  result.seconds = seconds_since(start);
  // run() itself never throws: a callback failing on the final event turns the result into a
  // failure that says why, and the callback is told so once more.
  if (result.status == RunStatus::Interrupted) return result;  // the run goes on elsewhere
  try {
    if (result.status == RunStatus::Failed) publish(Failed{result.message});
    else
      publish(Finished{result.status == RunStatus::Cancelled, result.epochs_completed, result.seconds,
                       result.stopped_early, result.best_epoch});
  } catch (const std::exception& ex) {
    result.status = RunStatus::Failed;
    result.message = std::string("reporting the end of the run failed: ") + ex.what();
    try {
      publish(Failed{result.message});
    } catch (const std::exception&) {
      // The result says why; a callback that cannot take a Failed either has nothing more to hear.
    }
  }
  return result;
}

}  // namespace plexus::train
