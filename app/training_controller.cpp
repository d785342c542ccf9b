#include "training_controller.h"

#include <QDeadlineTimer>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QThread>

#include <time.h>

#include <algorithm>
#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include "autograd/grad_mode.h"
#include "data/csv.h"
#include "graph/diff.h"
#include "session/continuation.h"
#include "session/optimizer_groups.h"
#include "session/resume.h"
#include "session/run.h"
#include "session/run_edit.h"
#include "session/run_folder.h"
#include "session/run_log.h"
#include "session/trained_model.h"
#include "tensor/generator.h"
#include "train/checkpoint.h"
#include "train/partial_load.h"
#include "train/trainer.h"
#include "util/overloaded.h"
#include "util/threads.h"

namespace plexus::app {
namespace fs = std::filesystem;

namespace {

fs::path to_path(const QString& s) { return fs::path(s.toStdString()); }

// Deliveries of a run come between these intervals, paced so that showing them (the slots and
// the drawing they cause) takes the UI thread about kUiShare of one core: on a machine whose
// cores all train, every moment the UI thread runs is taken from a training thread.
constexpr int kMinTickMs = 100, kMaxTickMs = 1000;
constexpr double kUiShare = 0.03;

// The CPU time the calling thread has used, in seconds.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

// Copies on the CPU, without autograd history: the worker goes on changing the originals.
WeightsSnapshot snapshot(const nn::Module& model, int epoch, int64_t batch, bool final, bool after_edit = false) {
  NoGradGuard no_grad;
  nn::NamedTensors state;
  for (const auto& [name, t] : model.state()) state.emplace_back(name, t.device().is_cpu() ? t.clone() : t.to(Device::cpu()));
  return {epoch, batch, final, std::make_shared<const nn::NamedTensors>(std::move(state)), after_edit};
}

RunInfo describe(const session::TrainingRun& run, train::MachinePeak peak) {
  RunInfo info;
  info.peak = std::move(peak);
  info.device =
      QString::fromStdString(session::device_text(parse_device(run.settings.device), run.trainer_options.precision));
  info.epochs = int(run.settings.epochs);
  info.batchesPerEpoch = run.train_loader->size();
  info.trainSize = run.data.train->size();
  // The examples evaluated every epoch: the validation split (the test split only at the end).
  const std::shared_ptr<const data::Dataset> evaluated = run.data.validation ? run.data.validation : run.data.test;
  info.evalSize = run.data.validation ? run.data.validation->size() : 0;
  info.testSize = run.data.test ? run.data.test->size() : 0;
  info.classification = run.compiled.classification;
  for (const std::string& name : run.class_names) info.classNames << QString::fromStdString(name);
  info.parameters = run.compiled.model->num_parameters();
  info.trainedParameters = QString::fromStdString(session::trained_parameters_text(*run.compiled.model));
  info.datasetPath = QString::fromStdString(run.dataset.path);
  info.evalSplit = run.data.validation;
  info.trainSplit = run.data.train;
  info.testSplit = run.data.test;
  info.datasetInfo = run.data.info;
  info.normalization = run.normalization;
  info.vocabulary = run.vocabulary;
  info.preparation = run.preparation;
  if (const auto* csv = dynamic_cast<const data::CsvDataset*>(evaluated.get()))
    for (const std::string& name : csv->feature_names()) info.featureNames << QString::fromStdString(name);
  return info;
}

SkippedFiles skippedFiles(const session::TrainingRun& run) {
  std::vector<data::SkippedFile> all = run.data.skipped();
  SkippedFiles out{int64_t(all.size()), {}, QString::fromStdString(run.dataset.bad_files)};
  all.resize(std::min(all.size(), SkippedFiles::kListed));
  out.files = std::move(all);
  return out;
}

}  // namespace

// The worker thread's whole job. It talks to the controller only through post(), postBatch(),
// attach() and handOver(), which lock; everything else it touches is its own.
class TrainingController::Worker {
 public:
  Worker(TrainingController& controller, TrainingRequest request, QString peak_cache)
      : controller_(controller), request_(std::move(request)), peak_cache_(std::move(peak_cache)) {}

  void operator()() {
    Item end;
    try {
      end = execute();
    } catch (const std::bad_alloc&) {
      end = train::Failed{stage_ + ": out of memory"};
    } catch (const std::exception& e) {
      end = train::Failed{stage_ + ": " + e.what()};
    } catch (...) {
      end = train::Failed{stage_ + ": an unknown error"};
    }
    controller_.post(std::move(end));  // last: once the UI sees it, the thread is returning
  }

 private:
  // Sets a trainer for the UI's pause/stop while in scope.
  struct Attached {
    Attached(TrainingController& controller, train::Trainer& trainer) : controller(controller) {
      controller.attach(&trainer);
    }
    ~Attached() { controller.attach(nullptr); }
    TrainingController& controller;
  };

  Item execute() {
    // Sized once, explicitly, before the first gemm, as plexus-cli does: OpenBLAS's pool is
    // the only one, and the training runs on this thread alone.
    num_threads();
    const session::RunOptions options{.project_dir = to_path(request_.projectDir)};
    std::optional<session::RunRecord> from;
    if (!request_.continueFrom.isEmpty()) from = session::read_run(to_path(request_.continueFrom));
    // An interrupted run goes on with the project and settings in its folder.
    std::optional<session::ResumedRun> resumed;
    if (!request_.resumeRun.isEmpty()) resumed.emplace(session::make_resumed_run(to_path(request_.resumeRun), options));
    graph::Graph& graph = resumed ? resumed->project : request_.graph;
    std::optional<session::TrainingRun> built;
    if (!resumed)
      built.emplace(from ? session::make_continued_run(*from, graph, options) : session::make_training_run(graph, options));
    session::TrainingRun& run = resumed ? resumed->run : *built;
    if (!request_.resumeFrom.isEmpty())
      train::load_checkpoint(to_path(request_.resumeFrom), *run.compiled.model, run.optimizer.get());
    std::string initialised;  // the account of initFrom
    if (!request_.initFrom.isEmpty())
      initialised = train::init_from(to_path(request_.initFrom), *run.compiled.model, run.optimizer.get());
    // Predictions line up with dataset indices only when the eval loader keeps their order.
    run.trainer_options.record_predictions =
        run.compiled.classification && run.eval_loader && !run.eval_loader->options().shuffle;
    run.trainer_options.record_test_predictions = run.test_loader && !run.test_loader->options().shuffle;
    // Both outlive the run: `last` is saved through them (keep_last_checkpoint) at its boundaries.
    std::optional<session::RunLog> log;
    std::optional<session::RunCheckpoints> checkpoints;
    if (resumed) {
      session::reopen_run_folder(*resumed, log, checkpoints);
    } else {
      session::RunHeader header =
          session::run_header(run, to_path(request_.projectFile), options, from ? &*from : nullptr);
      if (!request_.initFrom.isEmpty())
        header.init_from = fs::absolute(to_path(request_.initFrom)).lexically_normal().string();
      log.emplace(to_path(request_.runDir), graph, std::move(header));
      checkpoints.emplace(to_path(request_.runDir), graph, run);
      session::keep_last_checkpoint(run, *checkpoints, *log);  // where the run resumes after a crash
    }
    // Here, on the thread and with the threads that train: measured once per machine (a
    // fraction of a second), then read from the cache.
    train::MachinePeak peak = train::machine_peak(parse_device(run.settings.device), to_path(peak_cache_),
                                                  run.trainer_options.precision);
    run.trainer_options.peak_gflops = peak.gflops;
    controller_.post(describe(run, peak));
    const SkippedFiles skipped = skippedFiles(run);
    if (skipped.count > 0) controller_.post(skipped);
    if (resumed)
      controller_.post(train::Notice{"Resumed the run, " + session::resume_point_text(resumed->point) + " (saved " +
                                     resumed->point.saved + "), in " + resumed->point.folder.string()});
    if (!initialised.empty()) {
      log->record(train::Notice{initialised});
      controller_.post(train::Notice{initialised});
    }

    stage_ = "Training failed";
    const train::RunResult result = trainAll(run, graph, *log, *checkpoints);
    train::remember_faster_run(peak, result, to_path(peak_cache_));
    // Pictures that failed to decode while training joined the list.
    if (SkippedFiles now = skippedFiles(run); now.count != skipped.count) controller_.post(std::move(now));
    if (result.status == train::RunStatus::Failed) {
      session::finish_run(*checkpoints, *log, result);  // the log's end line says why
      return train::Failed{stage_ + ": " + result.message};
    }
    if (result.test && run.trainer_options.record_test_predictions) judge(run, *result.test);

    // Exported weights say what using them needs (input shape, normalisation, class names), as
    // the run's checkpoints do.
    train::Metadata meta;
    session::write_model_metadata(meta, run.data.info, run.normalization, run.class_names, run.feature_names,
                                  run.vocabulary, run.preparation.get());
    controller_.handOver(run.compiled.model, std::move(meta));
    stage_ = "Training ended, but the final checkpoint could not be saved";
    if (const fs::path path = session::finish_run(*checkpoints, *log, result); !path.empty())
      controller_.post(CheckpointSaved{QString::fromStdString(path.string()), "final"});
    return train::Finished{result.status == train::RunStatus::Cancelled, result.epochs_completed, result.seconds};
  }

  // The final model's judging figures, from the test predictions the Trainer recorded: here,
  // where the splits are, rather than on the UI thread.
  void judge(const session::TrainingRun& run, const train::EpochEnd& test) {
    try {
      const session::TestEvaluation t{test, run.data.test, run.data.train, run.dataset.kind};
      controller_.post(session::evaluation_report(run.compiled.classification, t));
    } catch (const std::exception& e) {  // the run itself went well
      controller_.post(train::Notice{std::string("No test report: ") + e.what()});
    }
  }

  // Trains until the run ends. An edit made while paused interrupts the Trainer; the run goes on
  // from where it stopped with another one, over the edited model (or over the same one, paused,
  // when the edit is refused). The result covers the whole run.
  train::RunResult trainAll(session::TrainingRun& run, graph::Graph& graph, session::RunLog& log,
                            session::RunCheckpoints& checkpoints) {
    std::vector<train::EpochEnd> history;
    double seconds = 0;
    std::optional<train::RunPosition> at;
    for (;;) {
      train::TrainerOptions options = run.trainer_options;
      if (at) {
        options.first_epoch = at->epoch;
        options.resume_at = at;
      }
      const nn::Module& model = *run.compiled.model;
      train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), options);
      trainer.set_scheduler(run.scheduler.get());
      trainer.set_test_loader(run.test_loader.get());
      trainer.set_callback([&](const train::Event& e) {
        log.record(e);
        onEvent(model, checkpoints, e);
      });
      train::RunResult result = [&] {
        Attached attached(controller_, trainer);
        return trainer.run();
      }();
      history.insert(history.end(), result.history.begin(), result.history.end());
      seconds += result.seconds;
      if (result.status != train::RunStatus::Interrupted) {  // an edit still pending is endRun's
        result.history = std::move(history);
        result.seconds = seconds;
        return result;
      }
      at = result.position;
      applyEdit(run, graph, *at, log, checkpoints);
    }
  }

  // At `at`, between two Trainers: the run goes on with the edited graph, or says why not and
  // stays paused as it was. A weights request made while paused is answered first, with the
  // model before the edit.
  void applyEdit(session::TrainingRun& run, graph::Graph& graph, const train::RunPosition& at, session::RunLog& log,
                 session::RunCheckpoints& checkpoints) {
    std::optional<graph::Graph> edited = controller_.takeEdit();
    if (controller_.weights_requested_.exchange(false))
      controller_.post(snapshot(*run.compiled.model, at.epoch, at.batch, false));
    if (!edited) return;
    // The UI checked the settings against its request; the run's own stay (a continued run's
    // epochs count on from the run it continues).
    edited->dataset = graph.dataset;
    edited->training = graph.training;
    std::optional<session::EditedRun> next;
    try {
      next.emplace(session::make_edited_run(graph, *edited, run, at));
      log.edited(*edited, next->event);
    } catch (const std::exception& e) {
      controller_.paused_ = true;  // the next Trainer waits before its first batch
      controller_.post(EditRefused{QString::fromStdString(std::string("The edit was not applied: ") + e.what())});
      return;
    }
    session::hand_over_loaders(run, next->run);
    checkpoints.edited(*edited, next->run);
    run = std::move(next->run);  // the old model and optimizer go
    graph = *edited;
    // The folder's project.plexus is the edited one now: `last` follows at once, so that a crash
    // before its next save resumes the edited model (in its log, the edit's line is kept).
    train::RunPosition now = at;
    {
      std::lock_guard lock(default_generator().mutex());
      now.generator = default_generator().state();
    }
    checkpoints.boundary(now, train::Boundary::Edited, log.bytes());
    controller_.post(Edited{next->event, graph});
    controller_.post(snapshot(*run.compiled.model, at.epoch, at.batch, false, true));
  }

  // On this thread, after every event. The end of the run is taken from run()'s result.
  void onEvent(const nn::Module& model, session::RunCheckpoints& checkpoints, const train::Event& event) {
    if (const auto* b = std::get_if<train::BatchEnd>(&event)) {
      controller_.postBatch(*b);
      if (controller_.weights_requested_.exchange(false)) controller_.post(snapshot(model, b->epoch, b->batch, false));
    } else if (const auto* e = std::get_if<train::EpochEnd>(&event)) {
      controller_.post(*e);
      if (controller_.weights_requested_.exchange(false)) controller_.post(snapshot(model, e->epoch, 0, false));
      if (const fs::path path = checkpoints.epoch_ended(*e); !path.empty())
        controller_.post(CheckpointSaved{QString::fromStdString(path.string()), "best"});
    } else if (const auto* t = std::get_if<train::TestEnd>(&event)) {
      controller_.post(*t);
    } else if (const auto* n = std::get_if<train::Notice>(&event)) {
      controller_.post(*n);
    } else if (const auto* s = std::get_if<train::NodeStats>(&event)) {
      controller_.postStats(*s);
    }
  }

  TrainingController& controller_;
  TrainingRequest request_;
  QString peak_cache_;
  std::string stage_ = "Cannot start training";  // what failed, for the message
};

TrainingController::TrainingController(QObject* parent) : QObject(parent) {
  // For queued connections to objects on other threads.
  qRegisterMetaType<RunInfo>();
  qRegisterMetaType<std::vector<train::BatchEnd>>();
  qRegisterMetaType<train::EpochEnd>();
  qRegisterMetaType<train::TestEnd>();
  qRegisterMetaType<session::EvaluationReport>();
  qRegisterMetaType<train::NodeStats>();
  qRegisterMetaType<train::Finished>();
  qRegisterMetaType<WeightsSnapshot>();
  qRegisterMetaType<SkippedFiles>();
  qRegisterMetaType<train::GraphEdit>();
  qRegisterMetaType<graph::Graph>();
  // A coarse timer lines up with Qt's other timers (fewer wake-ups of the UI thread); it may
  // fire up to 5% early.
  tick_.setTimerType(Qt::CoarseTimer);
  connect(&tick_, &QTimer::timeout, this, &TrainingController::onTick);
  // Shared with plexus-cli where XDG_CACHE_HOME is the same (train::default_peak_cache).
  if (const QString caches = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation); !caches.isEmpty())
    peak_cache_ = caches + "/plexus/machine-peak.json";
}

TrainingController::~TrainingController() {
  if (!thread_) return;
  stop_ = true;
  {
    std::lock_guard lock(mu_);
    if (trainer_) trainer_->cancel();
  }
  thread_->wait();  // what it posts afterwards is discarded with this object
}

void TrainingController::start(const TrainingRequest& request) {
  if (running_) {
    qWarning("TrainingController::start: a run is already active");
    return;
  }
  stop_ = false;
  paused_ = false;
  weights_requested_ = false;
  graph_ = request.graph;
  resumed_run_ = !request.resumeRun.isEmpty();
  {
    std::lock_guard lock(mu_);
    model_.reset();
    edit_.reset();
  }
  running_ = true;
  thread_.reset(QThread::create(Worker(*this, request, peak_cache_)));
  thread_->setObjectName("plexus-training");
  thread_->start();
  tick_cpu_ = thread_cpu_seconds();
  tick_.start(kMinTickMs);
  emit stateChanged();
}

void TrainingController::pause() {
  if (!running_ || paused_) return;
  paused_ = true;
  {
    std::lock_guard lock(mu_);
    if (trainer_) trainer_->pause();
  }
  emit stateChanged();
}

void TrainingController::resume() {
  if (!running_ || !paused_) return;
  paused_ = false;
  {
    std::lock_guard lock(mu_);
    if (trainer_) trainer_->resume();
  }
  emit stateChanged();
}

QString TrainingController::resume(const graph::Graph& graph) {
  if (!running_ || !paused_) return {};
  if (resumed_run_) {
    resume();
    return {};
  }
  if (const std::string why = session::edit_refusal(graph_, graph); !why.empty())
    return QString::fromStdString(why);
  // Names and positions need no new model; a node's training settings need a new optimizer.
  if (const graph::GraphDiff d = graph::diff(graph_, graph); d.same_structure() && !d.any_node_settings()) {
    resume();
    return {};
  }
  before_edit_ = std::exchange(graph_, graph);
  paused_ = false;
  {
    std::lock_guard lock(mu_);
    edit_ = graph;
    if (trainer_) trainer_->interrupt();
  }
  emit stateChanged();
  return {};
}

std::optional<graph::Graph> TrainingController::takeEdit() {
  std::lock_guard lock(mu_);
  std::optional<graph::Graph> out = std::move(edit_);
  edit_.reset();
  return out;
}

void TrainingController::stop() {
  if (!running_) return;
  stop_ = true;
  {
    std::lock_guard lock(mu_);
    if (trainer_) trainer_->cancel();
  }
  deliverAll();
}

bool TrainingController::waitForFinished(int ms) {
  if (!running_) return true;
  if (!thread_->wait(ms < 0 ? QDeadlineTimer(QDeadlineTimer::Forever) : QDeadlineTimer(ms))) return false;
  deliverAll();
  return true;
}

QString TrainingController::exportWeights(const QString& path) {
  if (running_) return tr("Training is running: stop it or let it finish before exporting the weights.");
  std::shared_ptr<nn::Module> model;
  train::Metadata meta;
  {
    std::lock_guard lock(mu_);
    model = model_;
    meta = model_meta_;
  }
  if (!model) return tr("There is no trained model to export yet.");
  try {
    train::save_weights(to_path(path), *model, meta);
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

void TrainingController::requestWeights() {
  if (running_) {
    weights_requested_ = true;
    return;
  }
  std::shared_ptr<nn::Module> model;
  {
    std::lock_guard lock(mu_);
    model = model_;
  }
  if (model) post(snapshot(*model, 0, 0, true));  // queued too, as a worker's would be
}

void TrainingController::post(Item item) {
  // The start and the end of a run are shown at once, and weights, which someone asked for
  // (an ended run's come when no tick runs); epochs and what comes with them ride the next
  // tick, so a burst of short epochs is drawn once.
  const bool at_once = std::holds_alternative<RunInfo>(item) || std::holds_alternative<WeightsSnapshot>(item) ||
                       std::holds_alternative<train::Finished>(item) || std::holds_alternative<train::Failed>(item);
  uint64_t mark = 0;
  {
    std::lock_guard lock(mu_);
    outbox_.push_back(std::move(item));
    mark = ++posted_;
  }
  if (!at_once) return;
  // Up to this item only: batches posted after it wait for the tick.
  QMetaObject::invokeMethod(this, [this, mark] { deliverUpTo(mark); }, Qt::QueuedConnection);
}

void TrainingController::postBatch(const train::BatchEnd& batch) {
  std::lock_guard lock(mu_);
  openBatches().batches.push_back(batch);
}

void TrainingController::postStats(const train::NodeStats& stats) {
  std::lock_guard lock(mu_);
  openBatches().stats.push_back(stats);
}

TrainingController::Batches& TrainingController::openBatches() {
  if (!outbox_.empty())
    if (auto* open = std::get_if<Batches>(&outbox_.back())) return *open;
  ++posted_;
  return std::get<Batches>(outbox_.emplace_back(Batches{}));
}

void TrainingController::attach(train::Trainer* trainer) {
  std::lock_guard lock(mu_);
  trainer_ = trainer;
  if (!trainer) return;
  if (paused_) trainer->pause();
  if (stop_) trainer->cancel();
  if (edit_) trainer->interrupt();  // made while the last edit was being applied
}

void TrainingController::handOver(std::shared_ptr<nn::Module> model, train::Metadata meta) {
  std::lock_guard lock(mu_);
  model_ = std::move(model);
  model_meta_ = std::move(meta);
}

void TrainingController::onTick() {
  deliverAll();
  // What the UI thread spent since the last tick, in the slots and the drawing they caused,
  // sets the next interval: costly drawing comes less often instead of slowing training.
  const double cpu = thread_cpu_seconds();
  const double spent = cpu - tick_cpu_;
  tick_cpu_ = cpu;
  if (tick_.isActive())  // the run may have ended in this delivery
    tick_.setInterval(std::clamp(int(1000 * spent / kUiShare), kMinTickMs, kMaxTickMs));
}

void TrainingController::deliverAll() {
  uint64_t mark = 0;
  {
    std::lock_guard lock(mu_);
    mark = posted_;
  }
  deliverUpTo(mark);
}

// Emits, in order, the items posted up to `mark` (a count). Items posted meanwhile wait for
// the next call, so a worker faster than the UI cannot keep this loop going.
void TrainingController::deliverUpTo(uint64_t mark) {
  {
    std::lock_guard lock(mu_);
    deliver_until_ = std::max(deliver_until_, mark);
  }
  if (delivering_) return;  // a slot called stop(): the loop further up goes on to the new mark
  delivering_ = true;
  const auto done = qScopeGuard([this] { delivering_ = false; });
  Item item;
  while (takeNext(item)) emitItem(item);
}

bool TrainingController::takeNext(Item& item) {
  std::lock_guard lock(mu_);
  if (taken_ == deliver_until_) return false;
  item = std::move(outbox_.front());
  outbox_.pop_front();
  ++taken_;
  return true;
}

void TrainingController::emitItem(const Item& item) {
  std::visit(Overloaded{
                 [this](const RunInfo& info) { emit started(info); },
                 [this](const Batches& b) {
                   if (!b.batches.empty()) emit batches(b.batches);
                   for (const train::NodeStats& s : b.stats) emit nodeStats(s);
                 },
                 [this](const train::EpochEnd& e) { emit epochEnded(e); },
                 [this](const train::TestEnd& t) { emit tested(t); },
                 [this](const session::EvaluationReport& r) { emit judged(r); },
                 [this](const CheckpointSaved& c) { emit checkpointSaved(c.path, c.kind); },
                 [this](const WeightsSnapshot& w) { emit weightsSnapshot(w); },
                 [this](const SkippedFiles& s) { emit filesSkipped(s); },
                 [this](const train::Notice& n) { emit notice(QString::fromStdString(n.text)); },
                 [this](const Edited& e) { emit graphEdited(e.edit, e.graph); },
                 [this](const EditRefused& r) {
                   graph_ = before_edit_;
                   emit stateChanged();  // paused again
                   emit editRefused(r.message);
                 },
                 [this](const train::Finished& f) {
                   endRun();
                   emit finished(f);
                 },
                 [this](const train::Failed& f) {
                   endRun();
                   emit failed(QString::fromStdString(f.message));
                 },
             },
             item);
}

// The run's last item is being delivered: join the worker (posting it was its last act), so
// a slot of finished() or failed() may start the next run or export the weights. An edit the
// worker never took came too late: resumed while the last evaluation ran, or paused and edited
// after the last batch (the run ends on its own while the UI thinks it paused). The run's graph
// is then the one that trained, as after a refused edit. A weights request the worker never
// served (made after its last batch) is answered with the final model, as after the run.
void TrainingController::endRun() {
  thread_->wait();
  thread_.reset();
  tick_.stop();
  running_ = false;
  paused_ = false;
  if (weights_requested_.exchange(false)) requestWeights();
  const bool edit_lost = takeEdit().has_value();
  if (edit_lost) graph_ = before_edit_;
  emit stateChanged();
  if (edit_lost)
    emit notice(tr("the run ended before the edit made while paused could be applied: the edited graph stays in the "
                   "editor, untrained"));
}

}  // namespace plexus::app
