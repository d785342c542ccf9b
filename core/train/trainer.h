#pragma once
// Trainer: the epoch loop shared by plexus-cli and the GUI's worker thread.
//
// run() trains on the calling thread and reports through one channel, the callback (on that
// thread): a BatchEnd after every batch, an EpochEnd after every epoch (with evaluation on the
// validation loader, if any), a TestEnd with the test loader's figures when the run completed
// (if there is a test loader), then exactly one Finished or Failed. Another thread may call pause(), resume() and
// cancel() at any time: they only set atomics that run() checks between batches, so the
// model and optimizer are touched by the training thread alone.
//
// Devices. The model may live on the CPU or a CUDA device (Module::to); run() and evaluate()
// copy every batch to the device of the model's parameters, so loaders stay on the CPU.
//
// Per-node statistics (train/stats_sampler.h): with TrainerOptions::observe_outputs, steps 1,
// 1 + stats_every, 1 + 2·stats_every, ... (counted over the run, so the first sample comes at
// once) are measured and published as a NodeStats right after their BatchEnd.
//
// Errors never escape run(): a non-finite loss (naming epoch and batch), bad data, a shape
// mismatch or running out of memory end the run with a Failed event and a RunResult that
// says why; the model keeps the weights of the last good step. A non-finite loss, with
// observe_outputs, first runs that batch's forward pass again to publish a NodeStats whose
// NonFinite issue names the first node in graph order with a non-finite output, and the
// message names it too ("...; the first non-finite output is Linear 'fc2'").
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "data/dataloader.h"
#include "nn/module.h"
#include "optim/optimizer.h"
#include "optim/plateau.h"
#include "tensor/generator.h"
#include "ops/precision.h"
#include "optim/scheduler.h"
#include "optim/step_warmup.h"
#include "train/early_stopping.h"
#include "train/events.h"
#include "train/metrics.h"
#include "train/stats_sampler.h"
#include "train/step.h"

namespace plexus::train {

// The training figures of an epoch in progress, so far.
struct EpochSoFar {
  Average loss;
  std::vector<Average> parts;  // TrainerOptions::loss_parts
  // correct and positions: the accuracy (one position per example, or per step of a sequence
  // model's [N, T, C] output); seen: the examples (the speed).
  int64_t correct = 0, positions = 0, seen = 0;
  double seconds = 0, data_wait = 0;
};

// Where a run stands between two batches: what another Trainer needs to go on from there as if
// the two were one run (the GUI swaps in an edited model this way, see Trainer::interrupt).
// A position handed to TrainerOptions::at_boundary, or read back from a run folder's `last`
// checkpoint (session/resume.h), also carries what another process needs to go on bit for bit:
// the default generator's state (dropout) and the recurrent state carried into the next batch.
struct RunPosition {
  int epoch = 1;           // the epoch in progress
  int64_t batch = 0;       // batches of it trained
  EpochSoFar so_far;       // their figures
  double elapsed = 0;      // seconds of training in the run, for the ETA
  int64_t batches_done = 0;
  // Set: run() gives the default generator this state instead of leaving it as it is (the
  // same thread) or seeding it.
  std::optional<Generator::State> generator;
  // carry_state: the state the next batch starts from (nn::Module::carried_state), restored
  // after the epoch's reset when the run goes on mid-epoch; empty: none.
  nn::NamedTensors carried;
  // Early stopping's and a plateau schedule's state (TrainerOptions::early_stopping, ::plateau)
  // after the epochs before `epoch`; a run going on from here takes them back.
  EarlyStoppingState stopping;
  std::optional<optim::PlateauState> plateau;
};

// Where at_boundary is called: after a batch that ended an optimizer step, after an epoch but
// the last (its EpochEnd published; the position is then batch 0 of the next epoch), or after
// the batch a cancel stops at. Edited is a front end's own: the run goes on from there with a
// model edited while paused (session/run_edit.h), which `last` must hold at once.
enum class Boundary { Batch, EpochEnd, Stop, Edited };

struct TrainerOptions {
  int epochs = 1;               // the number of the last epoch
  // The number of the first epoch: a run continuing an earlier one that completed k epochs
  // starts at k + 1 (the loader's shuffle and the ETA follow the numbering).
  int first_epoch = 1;
  // Going on where an interrupted Trainer of the same run stopped: its epoch must be
  // first_epoch, whose first resume_at->batch batches are then skipped (the loader delivers
  // the rest of that epoch's order, DataLoader::begin_at) while the epoch's figures, the ETA and
  // the batch count carry on from it. The default generator is not seeded again: it carries on
  // too, on the same thread.
  std::optional<RunPosition> resume_at;
  LossFunction loss;            // default: cross_entropy (classification)
  // The loss's parts, when it is the weighted sum of several loss nodes' (StepOptions::loss_parts):
  // each is reported in BatchEnd::losses, EpochEnd::train_losses and ::eval_losses.
  LossParts loss_parts = {};
  bool classification = true;   // accuracy, top-k, per-class accuracy, confusion matrix
  int64_t top_k = 5;
  float clip_grad_norm = 0.f;   // 0 = no clipping
  float clip_grad_value = 0.f;  // 0 = none; else gradient elements clamped to ±this (after the norm's)
  // Ends the run once its monitor has not improved for `patience` epochs (off by default): the
  // run then counts as finished (RunResult::stopped_early), the test split is evaluated on the
  // final model, and Finished says so with the best epoch.
  EarlyStopping early_stopping;
  // A plateau schedule (optim/plateau.h), stepped after every epoch with early_stopping.monitor's
  // value; null for none. A per-step scheduler (LRScheduler::per_step) is set before every
  // optimizer step instead of stepped per epoch.
  optim::ReduceLROnPlateau* plateau = nullptr;
  std::optional<uint64_t> seed; // seeds the default generator (dropout) at the start of run()
  // Classification: evaluation also fills EpochEnd::predicted and ::confidence, from the same
  // forward pass; a regression EpochEnd::outputs. The eval loader must not shuffle for them to
  // line up with dataset indices.
  bool record_predictions = false;
  // The same for the test loader's evaluation (TestEnd), which the judging figures of the final
  // model rank and plot (session/evaluation_report.h).
  bool record_test_predictions = false;
  // On a CUDA device: replay the steady training step as a CUDA graph (train/step.h).
  bool cuda_graphs = true;
  // Products and convolutions (ops/precision.h); a CPU without AVX512_BF16 computes bf16 in
  // FP32 and says so with a Notice.
  Precision precision = Precision::FP32;
  // Recurrent layers carry their state across consecutive training batches (the train loader
  // must then deliver streams, see DataLoaderOptions::streams): run() turns carrying on and
  // resets the state at the start of every epoch and before every evaluation.
  bool carry_state = false;
  // For the events' speed figures (BatchEnd::gflops, ::peak_gflops): the FLOPs one example's
  // training step computes (graph::estimate_compute) and the peak GFLOP/s of the device it
  // runs on (train::machine_peak). 0 = not counted / not measured: the events say 0 too. A run
  // faster than the measured peak raises the peak its events report to its own rate: the
  // fastest rate seen on the machine is its peak, and a share of peak never passes 100 %.
  double flops_per_example = 0;
  double peak_gflops = 0;
  // Called on the training thread after each epoch's training and evaluation, before its
  // EpochEnd is published: what a kind of project adds to the event (a text project's
  // samples, from the live model). A text it returns is published as a Notice first ("" =
  // none). An exception fails the run.
  std::function<std::string(EpochEnd&)> on_epoch_end;
  // Per-node statistics every stats_every training steps (0 = never). They need
  // observe_outputs, which installs an observer on the model's nodes (a compiled graph's
  // layers::GraphModel::set_observer; session::make_training_run sets it): without it nothing
  // is measured. `nodes` gives the health issues each node's type and label.
  int64_t stats_every = 0;
  ObserveOutputs observe_outputs;
  NodeInfos nodes;
  // Gradient accumulation: one optimizer step per this many batches (the last step of an
  // epoch may span fewer), its gradient that of the mean loss over all their examples, as
  // one batch of them all would give. Events still come per batch.
  int accumulate_steps = 1;
  // Data-parallel training (dist/): the ranks of the run, null for this process alone. Every
  // rank runs the same Trainer over its shard of each batch (DataLoaderOptions::shard, for the
  // evaluation loaders too); the events' figures are the global batch's on every rank. run()
  // starts from rank 0's weights, checks the replicas at each epoch's end
  // (dist::sync_replicas), and a cancel() on any rank stops all of them after the same step.
  // pause() and interrupt() are for a process alone.
  dist::CommunicatorPtr comm = nullptr;
  // With comm: synchronised BatchNorm (StepOptions::sync_batchnorm); run() refuses it when a
  // batch has fewer rows than ranks.
  bool sync_batchnorm = false;
  // Learning-rate warm-up per optimizer step (optim/step_warmup.h), on top of the scheduler's
  // lrs. Steps count as (epoch − 1) × batches per epoch + batches before, so a run going on
  // (resume_at) or continuing another (first_epoch > 1) warms up where the runs as one would be.
  optim::StepWarmup warmup;
  // The lr the events report (BatchEnd::lr, EpochEnd::lr): base_lr through the scheduler and the
  // warm-up, i.e. the lr of a parameter trained at the project's own (every group's is a multiple
  // of it, session/optimizer_groups.h). Unset: group 0's lr, warmed up.
  std::optional<double> base_lr;
  // Called on the training thread between two optimizer steps (Boundary), with the position a
  // run resumed elsewhere goes on from: every event up to it is published, nothing after it has
  // run. Never inside an accumulated step. Saving the run's `last` checkpoint hangs here
  // (session/resume.h); an exception fails the run.
  std::function<void(const RunPosition&, Boundary)> at_boundary;
};

// Interrupted: interrupt() ended it between two batches, publishing neither Finished nor Failed;
// `position` says where, for a Trainer that goes on.
enum class RunStatus { Completed, Cancelled, Failed, Interrupted };

struct RunResult {
  RunStatus status = RunStatus::Completed;
  std::string message;          // why it failed
  std::optional<RunPosition> position;  // Interrupted: where
  int epochs_completed = 0;     // the number of the last completed epoch
  std::vector<EpochEnd> history;
  std::optional<EpochEnd> test; // the TestEnd figures, when there were any
  double seconds = 0;
  // Early stopping ended the run after epoch epochs_completed; best_epoch is the one it kept.
  bool stopped_early = false;
  int best_epoch = 0;
  // Failed alike on every rank of a data-parallel run (a non-finite loss of the global batch,
  // replicas found apart), so none is left waiting for the others.
  bool every_rank = false;
};

// Mean loss, and for classification accuracy, top-k, per-class accuracy and the confusion
// matrix (with predictions when options.record_predictions), of `model` on `loader`, in eval
// mode without gradients, with the loss and metric settings of `options`. Batches go to the
// device of the model's parameters. Stops early (partial figures) once `cancelled` is true.
// With options.comm, each rank evaluates its shard and the figures are summed over the ranks
// (no predictions; a cancel then only takes effect after the pass, as the ranks must agree).
EpochEnd evaluate(nn::Module& model, data::DataLoader& loader, const TrainerOptions& options,
                  const std::atomic<bool>* cancelled = nullptr);

class Trainer {
 public:
  Trainer(nn::Module& model, optim::Optimizer& optimizer, data::DataLoader& train_loader,
          data::DataLoader* eval_loader = nullptr, TrainerOptions options = {});

  void set_scheduler(optim::LRScheduler* scheduler) { scheduler_ = scheduler; }  // stepped per epoch
  // Evaluated once, after the last epoch of a completed run (TestEnd). Never chooses anything.
  void set_test_loader(data::DataLoader* loader) { test_ = loader; }
  // Called on the training thread for every event. An exception from the callback fails the
  // run (e.g. a checkpoint that cannot be written).
  void set_callback(std::function<void(const Event&)> callback) { callback_ = std::move(callback); }

  RunResult run();

  void pause();
  void resume();
  void cancel();
  // Ends run() at the next batch boundary (at once when paused there) with RunStatus::Interrupted
  // and no final event, so that the caller can go on from result.position with another model.
  void interrupt();
  bool is_paused() const { return paused_.load(); }
  bool is_cancelled() const { return cancelled_.load(); }

  // train::evaluate() with this trainer's model and options; stops early when cancelled.
  EpochEnd evaluate(data::DataLoader& loader);

 private:
  void publish(const Event& e);
  bool wait_while_paused();  // false when cancelled
  EpochEnd train_epoch(int epoch, TrainingStep& step, std::string& graph_note);
  // The peak to report beside a rate of `gflops`: the measured one, or this run's best rate
  // when that is higher (0 stays 0: no peak is made up where none was measured).
  double raised_peak(double gflops);
  [[noreturn]] void fail_non_finite(float loss, int epoch, int64_t batch, const Tensor& inputs);
  // Where the run stands after `batch` batches of `epoch`, whose figures are `so_far` over `seconds`.
  RunPosition position(int epoch, int64_t batch, const EpochSoFar& so_far, double seconds) const;
  void boundary(RunPosition at, Boundary kind);  // options_.at_boundary, with the generator and carried state
  void begin_stream();  // carry_state: a fresh state for the next pass over the data
  double reported_lr(double warmup_factor) const;  // see TrainerOptions::base_lr

  nn::Module& model_;
  optim::Optimizer& opt_;
  data::DataLoader& train_;
  data::DataLoader* eval_;
  data::DataLoader* test_ = nullptr;
  TrainerOptions options_;
  optim::LRScheduler* scheduler_ = nullptr;
  std::function<void(const Event&)> callback_;

  std::atomic<bool> paused_{false}, cancelled_{false}, interrupted_{false};
  std::mutex pause_mu_;
  std::condition_variable pause_cv_;
  double elapsed_ = 0;          // seconds of training so far, for the ETA
  double peak_gflops_ = 0;      // options_.peak_gflops, raised by a faster epoch of this run
  int64_t batches_done_ = 0;
  std::unique_ptr<StatsSampler> stats_;  // during run(), with observe_outputs
  EarlyStoppingState stopping_;
};

}  // namespace plexus::train
