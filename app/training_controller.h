#pragma once
// TrainingController: the GUI's training engine. A run lives on a worker thread the controller
// owns: the worker builds the run with session::make_training_run, owns the model and the
// optimizer, trains with core's Trainer and keeps the run folder with session::RunCheckpoints
// and session::RunLog, exactly as `plexus-cli train FILE --save-run` does.
// The UI thread only ever sees value snapshots, delivered as signals of this object:
//
//   started -> filesSkipped? -> (batches nodeStats*)* -> epochEnded (checkpointSaved "best")? -> ... ->
//   filesSkipped? -> tested? -> (checkpointSaved "final" -> finished) | failed
//
// (filesSkipped: an image folder's files left out, when there are any at the start, and again
// after training when pictures failed to decode meanwhile.)
//
// Deliveries are paced: the worker appends its events to a buffer that a timer on the UI thread
// drains every 100 ms to 1 s, so however fast training goes the UI gets at most 10 batches() a
// second. The interval follows what showing the last delivery cost the UI thread, so that it
// takes about 3% of one core (on a small machine every moment of it is taken from training):
// cheap drawing comes ten times a second, costly drawing less often. Epochs, checkpoints and
// test figures come with the batches, in order; started, weights, finished and failed at once.
// None is dropped or merged. pause(), resume() and stop() only set atomics
// the worker checks between batches. Errors of any kind end the run with failed(): the app
// never crashes and the controller can start again.
//
// requestWeights() asks for a copy of the model's weights (the Try-it panel's live model): the
// worker copies them at the next batch or epoch boundary and posts them like any other item,
// as weightsSnapshot(). The model itself never leaves the worker.
//
// Pause, edit, resume: resume(graph) with the project as edited while paused hands the edited
// graph to the worker, which goes on with it from where the run stopped (session/run_edit.h:
// the same run folder, epoch and batch; unchanged nodes keep their weights and optimizer state)
// and says so with graphEdited() followed by a weightsSnapshot() of the edited model as it
// starts (afterEdit), or with editRefused() and the run paused as it was.
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <variant>
#include <vector>

#include "data/dataset.h"
#include "data/image_folder.h"
#include "graph/graph.h"
#include "nn/module.h"
#include "session/evaluation_report.h"
#include "session/trained_model.h"
#include "train/checkpoint.h"
#include "train/events.h"
#include "train/peak.h"

class QThread;

namespace plexus::train {
class Trainer;
}

namespace plexus::app {

struct TrainingRequest {
  graph::Graph graph;
  QString projectDir;  // relative dataset paths are looked up here first ("" = current directory)
  QString runDir;      // checkpoints go here, created when missing ("" = no checkpoints)
  QString resumeFrom;  // checkpoint (model + optimizer) to load before training; "" = none
  // A run folder to continue (session::make_continued_run): its final checkpoint, its epoch
  // numbering, graph.training.epochs more epochs; "" = none. (These two have initialisers so
  // that a request written without them needs none: -Wmissing-field-initializers.)
  QString continueFrom = {};
  QString projectFile = {};  // for the run log's header ("" = not saved)
  // A checkpoint or weights file whose matching tensors (by node id and shape) start the run,
  // the rest as initialised (train::init_from; its account comes as a notice); "" = none.
  QString initFrom = {};
  // A run folder whose interrupted run goes on in that folder from its `last` checkpoint
  // (session::make_resumed_run: its own project and settings, which `graph` should be for the
  // UI's sake; runDir is that folder); "" = none.
  QString resumeRun = {};
};

// What a run is about to do, sent once its dataset is open and its model compiled.
struct RunInfo {
  QString device;            // "cpu, 2 threads" or "cuda:0 (NVIDIA H100 80GB HBM3)"
  int epochs = 0;
  int64_t batchesPerEpoch = 0;
  int64_t trainSize = 0;
  int64_t evalSize = 0;      // the validation split, evaluated every epoch (0: none)
  int64_t testSize = 0;      // the test split, evaluated once at the end
  QStringList classNames;    // index = class; empty for regression
  bool classification = false;
  int64_t parameters = 0;
  QString trainedParameters;  // "12,340 of 431,080 parameters train"; empty for a followed run
  QString datasetPath;       // as resolved
  // The validation examples evaluated each epoch, untransformed, in the order of
  // EpochEnd::predicted (null without a validation split): the dashboard shows them without
  // reading the dataset a second time. Read-only, so sharing it with the worker is safe.
  std::shared_ptr<const data::Dataset> evalSplit;
  // The training examples (after any train_subset) and the test examples, untransformed too:
  // the dashboard's preview shows them beside the validation examples.
  std::shared_ptr<const data::Dataset> trainSplit, testSplit;
  QStringList featureNames;  // CSV columns; empty for images
  // For using the run's weights outside training (the Try-it panel's session::TrainedModel).
  graph::DatasetInfo datasetInfo;  // per-example input shape, classes
  session::InputNormalization normalization;
  std::vector<std::string> vocabulary;  // labelled texts' input characters (typed text is encoded with them)
  std::shared_ptr<const data::TablePreparation> preparation;  // a CSV file's: how a typed row becomes an input
  // The device's peak the events' peak_gflops came from, when and on what it was measured.
  train::MachinePeak peak;
  // How long the run had gone on when it was first shown: 0 but for a run followed from its
  // folder (RunFollower), which reports only the header's account above, no splits.
  double elapsed = 0;
};

// The files of an image folder a run leaves out (graph::DatasetSplits::skipped): those the scan
// did not take, and with bad_files "skip" the bad pictures, then those that failed to decode.
struct SkippedFiles {
  static constexpr size_t kListed = 200;
  int64_t count = 0;                     // all of them
  std::vector<data::SkippedFile> files;  // the first kListed, each with why
  QString badFiles;                      // the dataset's bad_files setting: "strict" or "skip"
};

// A copy of a run's weights, on the CPU, by state name ("fc1.weight").
struct WeightsSnapshot {
  int epoch = 0;      // the epoch it was taken in, 1-based; with batch 0: at that epoch's end
  int64_t batch = 0;  // batches of that epoch trained by then
  bool final = false; // the model of a run that has ended
  std::shared_ptr<const nn::NamedTensors> state;
  bool afterEdit = false;  // the edited model as it starts, weights carried over (graphEdited came first)
};

class TrainingController : public QObject {
  Q_OBJECT

 public:
  explicit TrainingController(QObject* parent = nullptr);
  ~TrainingController() override;  // stops a run and joins its thread; no signal is emitted

  // Returns at once; the run's setup happens on the worker. Ignored (with a warning) while a
  // run is active.
  void start(const TrainingRequest& request);
  void pause();
  void resume();
  // Resumes a paused run with `graph`, the project as it is now. When its layers, nodes or edges
  // differ from the run's, the run goes on with them (see above); when its dataset or training
  // settings do, nothing happens and the reason is returned (the run stays paused). "" otherwise.
  // A resumed run (TrainingRequest::resumeRun) trains its folder's project, not the editor's:
  // it goes on as it was, whatever `graph` is.
  QString resume(const graph::Graph& graph);
  // The graph the run trains, edits included (as far as the UI has been told).
  const graph::Graph& runGraph() const { return graph_; }
  // Ends the run after the batch in flight (evaluation stops too) with finished(cancelled) and
  // a final checkpoint. The batches trained so far are delivered before stop() returns, so
  // at most one more batch event follows.
  void stop();

  bool isRunning() const { return running_; }  // from start() until finished/failed is emitted
  bool isPaused() const { return running_ && paused_; }
  // Waits for the worker (ms < 0: no limit), then delivers what is left, the end included.
  // False on timeout. For closing the app: stop(), then waitForFinished().
  bool waitForFinished(int ms);

  // Writes the last completed or stopped run's model as a weights file (train::save_weights).
  // Returns "" on success, else a message saying why not; refused while a run is active.
  QString exportWeights(const QString& path);

  // Asks for a weightsSnapshot(): during a run the worker copies the model at its next batch or
  // epoch boundary (requests until then are one; one the run ends before is answered with its
  // final model); otherwise the last completed or stopped run's model is copied now (nothing
  // when there is none). Delivered queued, in order, either way.
  void requestWeights();

 signals:
  void started(const plexus::app::RunInfo& info);
  // In order; at most one per tick (100 ms or more).
  void batches(const std::vector<plexus::train::BatchEnd>& batches);
  // Every TrainingSettings::stats_every steps (and once before a run fails for a non-finite
  // loss); in order, each right after the batches() that delivers its step, so that the node
  // statistics do not split a tick's batches.
  void nodeStats(const plexus::train::NodeStats& stats);
  void epochEnded(const plexus::train::EpochEnd& epoch);  // classification: with predictions
  // The final model on the test split, after the last epoch of a run that was not stopped.
  void tested(const plexus::train::TestEnd& test);
  // Right after tested(): the judging figures of those predictions (session/evaluation_report.h),
  // when the test loader kept the split's order.
  void judged(const plexus::session::EvaluationReport& report);
  void checkpointSaved(const QString& path, const QString& kind);  // kind: "best" or "final"
  void filesSkipped(const plexus::app::SkippedFiles& skipped);
  void finished(const plexus::train::Finished& result);  // completed, or stopped (cancelled)
  void failed(const QString& message);
  void notice(const QString& text);  // how the run executes (train::Notice)
  void weightsSnapshot(const plexus::app::WeightsSnapshot& weights);
  // The run goes on with `graph`, edited while paused, from the position `edit` names.
  void graphEdited(const plexus::train::GraphEdit& edit, const plexus::graph::Graph& graph);
  void editRefused(const QString& message);  // the edit was not applied; the run is paused as it was
  void stateChanged();  // running or paused changed

 private:
  struct CheckpointSaved {
    QString path, kind;
  };
  // Consecutive batches, and the node statistics sampled among them.
  struct Batches {
    std::vector<train::BatchEnd> batches;
    std::vector<train::NodeStats> stats;
  };
  struct Edited {
    train::GraphEdit edit;
    graph::Graph graph;
  };
  struct EditRefused {
    QString message;
  };
  // Worker -> UI, in order.
  using Item = std::variant<RunInfo, Batches, train::EpochEnd, train::TestEnd, session::EvaluationReport,
                            CheckpointSaved, WeightsSnapshot, SkippedFiles, train::Notice, Edited, EditRefused, train::Finished, train::Failed>;
  class Worker;  // the worker thread's job

  // Worker side.
  void post(Item item);  // delivered at once (queued to the UI thread)
  // Delivered by the next timer tick.
  void postBatch(const train::BatchEnd& batch);
  void postStats(const train::NodeStats& stats);
  Batches& openBatches();  // the outbox's last item when it is Batches, else a new one; under mu_
  void attach(train::Trainer* trainer);  // nullptr detaches; applies pending pause/stop
  void handOver(std::shared_ptr<nn::Module> model, train::Metadata meta);
  std::optional<graph::Graph> takeEdit();

  // UI side.
  void onTick();
  void deliverAll();
  void deliverUpTo(uint64_t mark);
  bool takeNext(Item& item);
  void emitItem(const Item& item);
  void endRun();

  // UI thread only.
  std::unique_ptr<QThread> thread_;
  QString peak_cache_;  // train::machine_peak's cache file, beside the user's other caches
  QTimer tick_{this};  // delivers what the worker posted, while a run is active
  double tick_cpu_ = 0;  // the UI thread's CPU seconds at the last tick
  bool running_ = false;
  bool delivering_ = false;
  bool resumed_run_ = false;  // the run is request.resumeRun's
  graph::Graph graph_;         // the run's (runGraph), as this side knows it
  graph::Graph before_edit_;   // graph_ before the edit last sent, for a refusal

  std::atomic<bool> paused_{false}, stop_{false}, weights_requested_{false};

  std::mutex mu_;  // guards everything below
  std::deque<Item> outbox_;
  uint64_t posted_ = 0, taken_ = 0, deliver_until_ = 0;  // item counts, for in-order partial delivery
  train::Trainer* trainer_ = nullptr;  // the worker's, while it trains
  std::optional<graph::Graph> edit_;   // an edited graph the worker has not taken yet
  std::shared_ptr<nn::Module> model_;  // the last run's, once its worker is done
  train::Metadata model_meta_;         // what exported weights carry (session::write_model_metadata)
};

}  // namespace plexus::app
