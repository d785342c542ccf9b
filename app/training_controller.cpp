#include "training_controller.h"

#include <QDeadlineTimer>
#include <QScopeGuard>
#include <QThread>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <new>
#include <string>

#include "cuda/cuda.h"
#include "data/csv.h"
#include "graph/project.h"
#include "graph/run.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "util/threads.h"

namespace plexus::app {
namespace fs = std::filesystem;

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};

fs::path to_path(const QString& s) { return fs::path(s.toStdString()); }

std::string number(double v) {  // shortest text that reads back exactly
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

QString device_text(const std::string& device) {
  const Device d = parse_device(device);
  if (d.is_cpu()) return QString("cpu, %1 threads").arg(num_threads());
  return QString::fromStdString(d.str() + " (" + cuda::properties(d.index).name + ")");
}

QStringList class_names(const data::Dataset& dataset, int64_t classes) {
  const std::vector<std::string> names = dataset.class_names();
  QStringList out;
  for (int64_t i = 0; i < classes; ++i)
    out << (size_t(i) < names.size() ? QString::fromStdString(names[size_t(i)]) : QString::number(i));
  return out;
}

RunInfo describe(const graph::TrainingRun& run) {
  RunInfo info;
  info.device = device_text(run.settings.device);
  info.epochs = int(run.settings.epochs);
  info.batchesPerEpoch = run.train_loader->size();
  info.trainSize = run.data.train->size();
  info.evalSize = run.data.test->size();
  info.classification = run.compiled.classification;
  if (info.classification) info.classNames = class_names(*run.data.test, run.data.info.classes);
  info.parameters = run.compiled.model->num_parameters();
  info.datasetPath = QString::fromStdString(run.dataset.path);
  info.evalSplit = run.data.test;
  if (const auto* csv = dynamic_cast<const data::CsvDataset*>(run.data.test.get()))
    for (const std::string& name : csv->feature_names()) info.featureNames << QString::fromStdString(name);
  return info;
}

// best.safetensors (model + optimizer) whenever validation improves, final.safetensors at the
// end; each with the project and the metrics it was taken at. An empty folder disables both.
class Checkpoints {
 public:
  Checkpoints(const QString& dir, const graph::Graph& graph, const nn::Module& model, const optim::Optimizer& opt,
              bool classification)
      : dir_(to_path(dir)), model_(model), opt_(opt), classification_(classification) {
    if (dir_.empty()) return;
    fs::create_directories(dir_);
    graph::Graph project = graph;
    project.view.clear();  // the editor's view state says nothing about the weights
    project_ = graph::serialize_project(project);
  }

  // The path of the new best checkpoint, or "" when this epoch is not better.
  QString epochEnded(const train::EpochEnd& e) {
    const double s = score(e);
    if (dir_.empty() || !(s > best_)) return {};
    best_ = s;
    return save("best", e.epoch, &e, {});
  }

  QString finish(const train::RunResult& r) {
    if (dir_.empty()) return {};
    return save("final", r.epochs_completed, r.history.empty() ? nullptr : &r.history.back(),
                {{"cancelled", r.status == train::RunStatus::Cancelled ? "true" : "false"}});
  }

 private:
  // Higher is better: validation accuracy, or minus the loss for a regression.
  double score(const train::EpochEnd& e) const {
    if (classification_) return e.has_eval ? e.eval_accuracy : e.train_accuracy;
    return -(e.has_eval ? e.eval_loss : e.train_loss);
  }

  QString save(const std::string& kind, int epoch, const train::EpochEnd* e, train::Metadata meta) const {
    meta["checkpoint"] = kind;
    meta["project"] = project_;
    meta["epoch"] = std::to_string(epoch);
    if (e) {
      meta["epochs"] = std::to_string(e->epochs);
      meta["train_loss"] = number(e->train_loss);
      if (classification_) meta["train_accuracy"] = number(e->train_accuracy);
      if (e->has_eval) meta["eval_loss"] = number(e->eval_loss);
      if (e->has_eval && classification_) meta["eval_accuracy"] = number(e->eval_accuracy);
    }
    const fs::path file = dir_ / (kind + ".safetensors");
    train::save_checkpoint(file, model_, &opt_, meta);  // atomic: temp file, fsync, rename
    return QString::fromStdString(file.string());
  }

  fs::path dir_;
  const nn::Module& model_;
  const optim::Optimizer& opt_;
  bool classification_;
  std::string project_;
  double best_ = -std::numeric_limits<double>::infinity();
};

}  // namespace

// The worker thread's whole job. It talks to the controller only through post(), postBatch(),
// attach() and handOver(), which lock; everything else it touches is its own.
class TrainingController::Worker {
 public:
  Worker(TrainingController& controller, TrainingRequest request)
      : controller_(controller), request_(std::move(request)) {}

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
    graph::TrainingRun run = graph::make_training_run(request_.graph, {.project_dir = to_path(request_.projectDir)});
    nn::Module& model = *run.compiled.model;
    if (!request_.resumeFrom.isEmpty())
      train::load_checkpoint(to_path(request_.resumeFrom), model, run.optimizer.get());
    // Predictions line up with dataset indices only when the eval loader keeps their order.
    run.trainer_options.record_predictions = run.compiled.classification && !run.eval_loader->options().shuffle;
    Checkpoints checkpoints(request_.runDir, request_.graph, model, *run.optimizer, run.compiled.classification);
    controller_.post(describe(run));

    stage_ = "Training failed";
    train::Trainer trainer(model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
    trainer.set_scheduler(run.scheduler.get());
    trainer.set_callback([&](const train::Event& e) { onEvent(trainer, checkpoints, e); });
    const train::RunResult result = [&] {
      Attached attached(controller_, trainer);
      return trainer.run();
    }();
    if (result.status == train::RunStatus::Failed) return train::Failed{stage_ + ": " + result.message};

    controller_.handOver(run.compiled.model);
    stage_ = "Training ended, but the final checkpoint could not be saved";
    if (const QString path = checkpoints.finish(result); !path.isEmpty())
      controller_.post(CheckpointSaved{path, "final"});
    return train::Finished{result.status == train::RunStatus::Cancelled, result.epochs_completed, result.seconds};
  }

  // On this thread, after every event. The end of the run is taken from run()'s result.
  void onEvent(train::Trainer& trainer, Checkpoints& checkpoints, const train::Event& event) {
    // This callback is the consumer: left alone, the Trainer's own queue would keep every epoch.
    while (trainer.events().try_pop()) {
    }
    if (const auto* b = std::get_if<train::BatchEnd>(&event)) {
      controller_.postBatch(*b);
    } else if (const auto* e = std::get_if<train::EpochEnd>(&event)) {
      controller_.post(*e);
      if (const QString path = checkpoints.epochEnded(*e); !path.isEmpty())
        controller_.post(CheckpointSaved{path, "best"});
    }
  }

  TrainingController& controller_;
  TrainingRequest request_;
  std::string stage_ = "Cannot start training";  // what failed, for the message
};

TrainingController::TrainingController(QObject* parent) : QObject(parent) {
  // For queued connections to objects on other threads.
  qRegisterMetaType<RunInfo>();
  qRegisterMetaType<std::vector<train::BatchEnd>>();
  qRegisterMetaType<train::EpochEnd>();
  qRegisterMetaType<train::Finished>();
  // Ten deliveries a second look live, and every wake-up of the UI thread takes a core from
  // training on a small machine. A coarse timer lines up with Qt's other timers (fewer
  // wake-ups); it may fire up to 5% early, still well under 20 a second.
  tick_.setInterval(100);
  tick_.setTimerType(Qt::CoarseTimer);
  connect(&tick_, &QTimer::timeout, this, &TrainingController::deliverAll);
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
  {
    std::lock_guard lock(mu_);
    model_.reset();
  }
  running_ = true;
  thread_.reset(QThread::create(Worker(*this, request)));
  thread_->setObjectName("plexus-training");
  thread_->start();
  tick_.start();
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
  {
    std::lock_guard lock(mu_);
    model = model_;
  }
  if (!model) return tr("There is no trained model to export yet.");
  try {
    train::save_weights(to_path(path), *model);
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

void TrainingController::post(Item item) {
  uint64_t mark = 0;
  {
    std::lock_guard lock(mu_);
    outbox_.push_back(std::move(item));
    mark = ++posted_;
  }
  // Up to this item only: batches posted after it wait for the tick, or a fast run would get
  // a batches() signal per epoch more.
  QMetaObject::invokeMethod(this, [this, mark] { deliverUpTo(mark); }, Qt::QueuedConnection);
}

void TrainingController::postBatch(const train::BatchEnd& batch) {
  std::lock_guard lock(mu_);
  if (!outbox_.empty())
    if (auto* run = std::get_if<std::vector<train::BatchEnd>>(&outbox_.back())) {
      run->push_back(batch);
      return;
    }
  outbox_.push_back(std::vector<train::BatchEnd>{batch});
  ++posted_;
}

void TrainingController::attach(train::Trainer* trainer) {
  std::lock_guard lock(mu_);
  trainer_ = trainer;
  if (!trainer) return;
  if (paused_) trainer->pause();
  if (stop_) trainer->cancel();
}

void TrainingController::handOver(std::shared_ptr<nn::Module> model) {
  std::lock_guard lock(mu_);
  model_ = std::move(model);
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
                 [this](const std::vector<train::BatchEnd>& b) { emit batches(b); },
                 [this](const train::EpochEnd& e) { emit epochEnded(e); },
                 [this](const CheckpointSaved& c) { emit checkpointSaved(c.path, c.kind); },
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
// a slot of finished() or failed() may start the next run or export the weights.
void TrainingController::endRun() {
  thread_->wait();
  thread_.reset();
  tick_.stop();
  running_ = false;
  paused_ = false;
  emit stateChanged();
}

}  // namespace plexus::app
