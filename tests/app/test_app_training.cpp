// The GUI's training engine (app::TrainingController) end to end on a tiny generated
// MNIST-format dataset: signals and their order, coalescing, checkpoints that load back,
// pause / resume / stop, failures that leave the controller usable, destruction mid-run, copies
// of the weights on request and the responsiveness of the UI thread while it trains. Nothing
// here is timed: the checks wait for signals and count deliveries (the controller's timer ticks),
// so a loaded machine makes them slower, never wrong.
#include <QtTest>

#include <QRegularExpression>
#include <QScopeGuard>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>

#include "session/run.h"
#include "session/run_log.h"
#include "session/trained_model.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "util/out_of_memory.h"
#include "training_controller.h"
#include "support/mlp_fixture.h"
#include "support/wide_project.h"

using namespace plexus;
using app::TrainingController;
using app::TrainingRequest;
namespace fs = std::filesystem;

namespace {

// The training file's 600 images: the default validation fraction (0.1) holds 60 out.
constexpr int64_t kTrainFile = 600, kVal = 60, kTrain = kTrainFile - kVal, kTest = 200;

// Input -> Flatten -> Linear(32) -> ReLU -> Linear(10) -> CrossEntropy on the "mnist" folder.
graph::Graph mlp(const fs::path& data, int64_t epochs, int64_t batch_size = 20, double lr = 0.05) {
  graph::Graph g = testing::mlp_graph(data.string(), {{"fc1", 32}, {"fc2", 10}});
  g.training.lr = lr;
  g.training.momentum = 0.5;
  g.training.batch_size = batch_size;
  g.training.epochs = epochs;
  return g;
}

// Everything a controller says, in order.
struct Recorder : QObject {
  explicit Recorder(TrainingController& c) {
    connect(&c, &TrainingController::started, this, [this](const app::RunInfo& i) {
      info = i;
      order << "started";
    });
    connect(&c, &TrainingController::batches, this, [this](const std::vector<train::BatchEnd>& b) {
      ++batch_signals;
      batches.insert(batches.end(), b.begin(), b.end());
      if (order.isEmpty() || order.back() != "batches") order << "batches";
    });
    connect(&c, &TrainingController::epochEnded, this, [this](const train::EpochEnd& e) {
      epochs.push_back(e);
      order << "epoch";
    });
    connect(&c, &TrainingController::checkpointSaved, this, [this](const QString& path, const QString& kind) {
      checkpoints.push_back({kind, path});
      order << "checkpoint " + kind;
    });
    connect(&c, &TrainingController::tested, this, [this](const train::TestEnd& t) {
      test = t;
      order << "tested";
    });
    connect(&c, &TrainingController::finished, this, [this](const train::Finished& f) {
      finished = f;
      order << "finished";
    });
    connect(&c, &TrainingController::failed, this, [this](const QString& m) {
      failed = m;
      order << "failed";
    });
  }
  bool done() const { return finished || failed; }
  QString checkpoint(const QString& kind) const {
    for (const auto& [k, path] : checkpoints)
      if (k == kind) return path;
    return {};
  }

  std::optional<app::RunInfo> info;
  int batch_signals = 0;
  std::vector<train::BatchEnd> batches;
  std::vector<train::EpochEnd> epochs;
  std::vector<std::pair<QString, QString>> checkpoints;  // kind, path
  std::optional<train::TestEnd> test;
  std::optional<train::Finished> finished;
  std::optional<QString> failed;
  QStringList order;
};

// The controller's delivery timer, its one QTimer: each tick delivers what the worker posted
// since the last one (training_controller.h).
QTimer* deliveryTimer(TrainingController& c) {
  const QList<QTimer*> timers = c.findChildren<QTimer*>(Qt::FindDirectChildrenOnly);
  return timers.size() == 1 ? timers.front() : nullptr;
}

// Waits for n more deliveries; false when one did not come within 10 s.
bool waitForTicks(TrainingController& c, int n) {
  QTimer* tick = deliveryTimer(c);
  if (!tick) return false;
  QSignalSpy ticks(tick, &QTimer::timeout);
  while (ticks.count() < n)
    if (!ticks.wait(10000)) return false;
  return true;
}

// Where a batch or a copy of the weights was taken, as batches trained since the run began
// (a copy at batch 0 was taken at the end of its epoch).
int64_t trained(int epoch, int64_t batch, int64_t batches_per_epoch) {
  return batch == 0 ? epoch * batches_per_epoch : (epoch - 1) * batches_per_epoch + batch;
}

int thread_count() { return int(std::distance(fs::directory_iterator("/proc/self/task"), fs::directory_iterator())); }

// The eval accuracy of a freshly compiled model with a checkpoint loaded.
double accuracy_of_checkpoint(const graph::Graph& g, const QString& file) {
  session::TrainingRun run = session::make_training_run(g);
  train::load_checkpoint(file.toStdString(), *run.compiled.model, run.optimizer.get());
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  return t.evaluate(*run.eval_loader).eval_accuracy;
}

// The test accuracy of a checkpoint, as `plexus-cli eval` computes it: the trained model with the
// normalisation stored in the checkpoint, on the test split.
double test_accuracy_of_checkpoint(const graph::Graph& g, const QString& file) {
  const session::TrainedModel m = session::load_trained_model(g, file.toStdString());
  session::TrainingRun run = session::make_training_run(g);
  train::TrainerOptions o = run.trainer_options;
  return train::evaluate(*m.compiled.model, *run.test_loader, o).eval_accuracy;
}

}  // namespace

class TestAppTraining : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  fs::path data_;
  std::vector<int32_t> test_labels_;

  TrainingRequest request(graph::Graph g, const QString& run_name = "run") const {
    return {std::move(g), "", tmp_.path() + "/runs/" + run_name, ""};
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    data_ = fs::path(tmp_.path().toStdString()) / "digits";
    fs::create_directories(data_);
    data::write_synthetic_digits_split(data_, "train", kTrainFile, 1);
    test_labels_ = data::write_synthetic_digits_split(data_, "t10k", kTest, 2);
  }

  void runsToCompletionWithEverySignal() {
    TrainingController c;
    Recorder rec(c);
    const graph::Graph g = mlp(data_, 3);
    QTimer* tick = deliveryTimer(c);
    QVERIFY(tick);
    int ticks = 0;
    connect(tick, &QTimer::timeout, this, [&] { ++ticks; });
    c.start(request(g, "full"));
    QVERIFY(c.isRunning());
    QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 60000);
    QVERIFY2(!rec.failed, qPrintable(rec.failed.value_or("")));
    QVERIFY(!c.isRunning());
    QVERIFY(!rec.finished->cancelled);
    QCOMPARE(rec.finished->epochs_completed, 3);

    // started first, with what the run is about.
    QCOMPARE(rec.order.front(), QString("started"));
    QCOMPARE(rec.info->epochs, 3);
    QCOMPARE(rec.info->batchesPerEpoch, kTrain / 20);
    QCOMPARE(rec.info->trainSize, kTrain);
    QCOMPARE(rec.info->evalSize, kVal);
    QCOMPARE(rec.info->testSize, kTest);
    QVERIFY(rec.info->evalSplit && rec.info->evalSplit->size() == kVal);
    QCOMPARE(rec.info->classNames, QStringList({"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
    QCOMPARE(rec.info->parameters, int64_t(784 * 32 + 32 + 32 * 10 + 10));
    QVERIFY2(rec.info->device.startsWith("cpu, "), qPrintable(rec.info->device));

    // Every batch arrived, in order, in few signals: at most one per delivery (a tick of the
    // controller's timer, or the end of the run) and one more per epoch, whose end splits them.
    QCOMPARE(int64_t(rec.batches.size()), 3 * kTrain / 20);
    for (size_t i = 0; i < rec.batches.size(); ++i) {
      QCOMPARE(rec.batches[i].epoch, int(i / (kTrain / 20)) + 1);
      QCOMPARE(rec.batches[i].batch, int64_t(i % (kTrain / 20)) + 1);
    }
    const int allowed = ticks + 1 + 3;
    qInfo("%d batches signals for %zu batches in %d deliveries (allowed %d)", rec.batch_signals, rec.batches.size(),
          ticks, allowed);
    QVERIFY(rec.batch_signals <= allowed);

    // Every epoch, with predictions that agree with its confusion matrix.
    QCOMPARE(rec.epochs.size(), size_t(3));
    const train::EpochEnd& last = rec.epochs.back();
    qInfo("eval accuracy after 3 epochs: %.1f%%", 100 * last.eval_accuracy);
    QVERIFY(last.eval_accuracy > 0.8);
    int64_t total = 0;
    for (int64_t n : last.confusion) total += n;
    QCOMPARE(total, kVal);
    QCOMPARE(last.predicted.size(), size_t(kVal));
    QCOMPARE(last.confidence.size(), size_t(kVal));
    std::vector<int64_t> confusion(100, 0);
    for (int64_t i = 0; i < kVal; ++i)
      ++confusion[size_t(int64_t(rec.info->evalSplit->get(i).target.item()) * 10 + last.predicted[size_t(i)])];
    QCOMPARE(confusion, last.confusion);
    QVERIFY(std::all_of(last.confidence.begin(), last.confidence.end(), [](float p) { return p > 0 && p <= 1; }));

    // Checkpoints: best when validation improved, final just before finished; both load back
    // into a freshly compiled model and give the accuracy they were saved with.
    QCOMPARE(rec.order.back(), QString("finished"));
    QCOMPARE(rec.order[rec.order.size() - 2], QString("checkpoint final"));
    QCOMPARE(rec.order[rec.order.size() - 3], QString("tested"));
    // The test split, once, with the final model: its confusion matrix counts every test image
    // against the test labels.
    QVERIFY(rec.test.has_value());
    int64_t tested = 0;
    for (int64_t n : rec.test->figures.confusion) tested += n;
    QCOMPARE(tested, kTest);
    QCOMPARE(test_accuracy_of_checkpoint(g, rec.checkpoint("final")), rec.test->figures.eval_accuracy);
    // The checkpoint's own normalisation is the run's, computed on the training split.
    QVERIFY(session::load_trained_model(g, rec.checkpoint("final").toStdString()).normalization ==
            session::make_training_run(g).normalization);
    const QString best = rec.checkpoint("best"), final_ = rec.checkpoint("final");
    QVERIFY(QFile::exists(best) && QFile::exists(final_));
    QVERIFY(best.endsWith("/full/best.safetensors") && final_.endsWith("/full/final.safetensors"));
    double best_accuracy = 0;
    for (const auto& e : rec.epochs) best_accuracy = std::max(best_accuracy, e.eval_accuracy);
    QCOMPARE(accuracy_of_checkpoint(g, best), best_accuracy);
    QCOMPARE(accuracy_of_checkpoint(g, final_), last.eval_accuracy);
    const train::Metadata meta = [&] {
      session::TrainingRun run = session::make_training_run(g);
      return train::load_checkpoint(final_.toStdString(), *run.compiled.model, run.optimizer.get());
    }();
    QCOMPARE(meta.at("epoch"), std::string("3"));
    QCOMPARE(std::stod(meta.at("test_accuracy")), rec.test->figures.eval_accuracy);
    QVERIFY(meta.at("project").find("\"CrossEntropy\"") != std::string::npos);

    // The trained weights export; they load into a compiled model.
    const QString weights = tmp_.path() + "/weights.safetensors";
    QCOMPARE(c.exportWeights(weights), QString());
    QVERIFY(QFile::exists(weights));
    session::TrainingRun fresh = session::make_training_run(g);
    train::load_weights(weights.toStdString(), *fresh.compiled.model);
    QVERIFY(!c.exportWeights("/nonexistent-dir/w.safetensors").isEmpty());
  }

  // How a run executes reaches the UI once, as notice(): here bf16 asked for on a CPU without
  // AVX512_BF16 (or with the kernel turned off, as here).
  void noticesReachTheUi() {
    qputenv("PLEXUS_CPU_BF16", "off");
    const auto restore = qScopeGuard([] { qunsetenv("PLEXUS_CPU_BF16"); });
    TrainingController c;
    Recorder rec(c);
    QStringList notices;
    connect(&c, &TrainingController::notice, &c, [&notices](const QString& text) { notices << text; });
    graph::Graph g = mlp(data_, 1);
    g.training.precision = "bf16";
    c.start(request(g, "notice"));
    QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 60000);
    QVERIFY2(!rec.failed, qPrintable(rec.failed.value_or("")));
    QCOMPARE(notices.size(), 1);
    QVERIFY2(notices[0].contains("needs a CPU with AVX512_BF16"), qPrintable(notices[0]));
  }

  void signalsReachObjectsOnOtherThreads() {
    QThread other;
    other.start();
    QObject receiver;
    receiver.moveToThread(&other);
    std::atomic<int> infos{0}, batches{0}, epochs{0}, finished{0};
    TrainingController c;
    connect(&c, &TrainingController::started, &receiver, [&](const app::RunInfo& i) { infos += i.evalSize == kVal; });
    connect(&c, &TrainingController::batches, &receiver,
            [&](const std::vector<train::BatchEnd>& b) { batches += int(b.size()); });
    connect(&c, &TrainingController::epochEnded, &receiver,
            [&](const train::EpochEnd& e) { epochs += e.predicted.size() == size_t(kVal); });
    connect(&c, &TrainingController::finished, &receiver, [&](const train::Finished& f) { finished += !f.cancelled; });
    c.start(request(mlp(data_, 2), "other-thread"));
    QTRY_VERIFY_WITH_TIMEOUT(finished == 1, 60000);
    other.quit();
    other.wait();
    QCOMPARE(infos.load(), 1);
    QCOMPARE(batches.load(), int(2 * kTrain / 20));
    QCOMPARE(epochs.load(), 2);
  }

  void resumesFromACheckpoint() {
    const graph::Graph g = mlp(data_, 1, 20, 1e-6);  // too small a step to learn anything itself
    TrainingController c;
    {
      Recorder rec(c);
      c.start(request(mlp(data_, 2), "resume-source"));
      QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 60000);
      QVERIFY(rec.finished);
    }
    Recorder rec(c);
    TrainingRequest r = request(g, "resumed");
    r.resumeFrom = tmp_.path() + "/runs/resume-source/final.safetensors";
    c.start(r);
    QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 60000);
    QVERIFY2(rec.finished, qPrintable(rec.failed.value_or("")));
    QVERIFY(rec.epochs.back().eval_accuracy > 0.8);

    Recorder bad(c);
    r.resumeFrom = tmp_.path() + "/runs/missing.safetensors";
    c.start(r);
    QTRY_VERIFY_WITH_TIMEOUT(bad.done(), 60000);
    QVERIFY(bad.failed);
    QVERIFY2(bad.failed->contains("missing.safetensors"), qPrintable(*bad.failed));
  }

  void stopEndsWithinOneBatch() {
    TrainingController c;
    Recorder rec(c);
    c.start(request(mlp(data_, 1000, 10), "stopped"));
    QTRY_VERIFY_WITH_TIMEOUT(rec.batches.size() >= 100, 30000);
    c.stop();
    const size_t at_stop = rec.batches.size();
    QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 30000);
    QVERIFY(rec.finished && rec.finished->cancelled);
    qInfo("%zu batch events after stop()", rec.batches.size() - at_stop);
    QVERIFY(rec.finished->epochs_completed < 1000);
    QVERIFY(rec.batches.size() <= at_stop + 1);
    QVERIFY(!rec.checkpoint("final").isEmpty());
    QVERIFY(!c.isRunning() && !c.isPaused());
  }

  void stopFromASlotDeliversTheRestInOrder() {
    TrainingController c;
    Recorder rec(c);
    connect(&c, &TrainingController::epochEnded, this, [&](const train::EpochEnd& e) {
      if (e.epoch == 2) c.stop();
    });
    c.start(request(mlp(data_, 1000, 10), "stopped-from-slot"));
    QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 30000);
    QVERIFY(rec.finished && rec.finished->cancelled);
    QVERIFY(rec.finished->epochs_completed >= 2 && rec.finished->epochs_completed < 1000);
    QCOMPARE(int(rec.epochs.size()), rec.finished->epochs_completed);
    QCOMPARE(rec.order.mid(rec.order.size() - 2), QStringList({"checkpoint final", "finished"}));
    for (size_t i = 1; i < rec.batches.size(); ++i)  // nothing reordered by the nested delivery
      QVERIFY(rec.batches[i].epoch * 100000 + rec.batches[i].batch >
              rec.batches[i - 1].epoch * 100000 + rec.batches[i - 1].batch);
  }

  void pauseHoldsAndResumeGoesOn() {
    TrainingController c;
    Recorder rec(c);
    int state_changes = 0;
    connect(&c, &TrainingController::stateChanged, this, [&] { ++state_changes; });
    c.start(request(mlp(data_, 1000, 10), "paused"));
    QTRY_VERIFY_WITH_TIMEOUT(rec.batches.size() >= 20, 30000);
    c.pause();
    QVERIFY(c.isPaused() && c.isRunning());
    // The first delivery after pause() brings what the worker posted before it; after that, a
    // paused worker adds at most the batch that was in flight, however many deliveries pass.
    QVERIFY(waitForTicks(c, 1));
    const size_t held = rec.batches.size();
    QVERIFY(waitForTicks(c, 5));
    QVERIFY2(rec.batches.size() <= held + 1, qPrintable(QString("%1 batches after %2").arg(rec.batches.size()).arg(held)));
    c.resume();
    QVERIFY(!c.isPaused());
    QTRY_VERIFY_WITH_TIMEOUT(rec.batches.size() > held + 20, 30000);
    c.stop();
    QVERIFY(c.waitForFinished(30000));
    QVERIFY2(rec.finished && rec.finished->cancelled, qPrintable(rec.order.join(", ") + rec.failed.value_or("")));
    QCOMPARE(state_changes, 4);  // started, paused, resumed, ended
  }

  void divergenceFailsAndTheControllerIsReusable() {
    TrainingController c;
    {
      Recorder rec(c);
      c.start(request(mlp(data_, 3, 20, 1e6), "diverged"));
      QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 60000);
      QVERIFY(rec.failed && !rec.finished);
      qInfo("failed: %s", qPrintable(*rec.failed));
      QVERIFY2(rec.failed->contains("loss became") &&
                   (rec.failed->contains("NaN") || rec.failed->contains("infinite")),
               qPrintable(*rec.failed));
      QVERIFY(!c.isRunning());
      QVERIFY(!c.exportWeights(tmp_.path() + "/diverged.safetensors").isEmpty());
    }
    Recorder rec(c);
    c.start(request(mlp(data_, 1), "after-failure"));
    QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 60000);
    QVERIFY2(rec.finished, qPrintable(rec.failed.value_or("")));
  }

  void outOfMemoryInAStepFailsAndTheControllerIsReusable() {
    // 300 points (216 to train; the validation split's 24 make 384 KiB) at batch 64 through a Linear 4096 wide:
    // its output, [64, 4096] float32, is 1 MiB, and nothing else the run allocates reaches 512 KiB
    // but that output, its gradient and those of a smaller last batch. Once the run has started,
    // the allocator's test hook refuses the next such request on the worker thread, in whichever
    // batch and pass it comes.
    const fs::path dir = fs::path(tmp_.path().toStdString()) / "wide";
    fs::create_directories(dir);
    const fs::path project = testing::write_wide_project(dir, 4096, 64, 300);
    const auto wide = [&](int64_t epochs, const QString& run) {
      graph::Graph g = graph::load_project(project);
      g.training.epochs = epochs;
      return TrainingRequest{std::move(g), QString::fromStdString(dir.string()), tmp_.path() + "/runs/" + run, ""};
    };
    const auto hook_off = qScopeGuard([] { refuse_allocations_from(0); });
    TrainingController c;
    {
      Recorder rec(c);
      connect(&c, &TrainingController::started, &rec, [] { refuse_allocations_from(512 << 10); });
      c.start(wide(1000, "wide-refused"));
      QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 120000);
      QVERIFY2(rec.failed && !rec.finished, qPrintable(rec.order.join(", ")));
      qInfo("failed: %s", qPrintable(*rec.failed));
      static const QRegularExpression where(
          "^Training failed: out of memory at epoch [0-9]+, batch [0-9]+, in the (forward pass of Linear 'wide'|"
          "backward pass \\(the gradient of [a-z_0-9]+\\)): cannot allocate [0-9.]+ [KM]iB for a tensor of shape "
          "\\[[0-9]+, 4096\\] float32 \\(the machine has ");
      QVERIFY2(where.match(*rec.failed).hasMatch(), qPrintable(*rec.failed));
      QVERIFY(!c.isRunning() && c.waitForFinished(10000));
    }
    Recorder rec(c);  // the hook refused once: the next run trains to its end
    c.start(wide(1, "wide-after"));
    QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 60000);
    QVERIFY2(rec.finished, qPrintable(rec.failed.value_or("")));
  }

  void graphErrorsAreListedAndNoThreadIsLeft() {
    graph::Graph g = mlp(data_, 1);
    std::erase_if(g.edges, [](const graph::Edge& e) { return e.to.node == "fc2"; });  // fc2 has no input
    TrainingController c;
    Recorder rec(c);
    const int threads_before = thread_count();
    c.start(request(g));
    QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 30000);
    QVERIFY(rec.failed);
    qInfo("failed: %s", qPrintable(*rec.failed));
    QVERIFY2(rec.failed->startsWith("Cannot start training: the graph has problems:") && rec.failed->contains("fc2"),
             qPrintable(*rec.failed));
    QVERIFY(!c.isRunning() && c.waitForFinished(0));
    QTRY_COMPARE_WITH_TIMEOUT(thread_count(), threads_before, 10000);  // joined, and gone once exited
    QCOMPARE(rec.order, QStringList{"failed"});
  }

  void missingDatasetIsNamed() {
    TrainingController c;
    Recorder rec(c);
    const std::string missing = (fs::path(tmp_.path().toStdString()) / "no-such-folder").string();
    graph::Graph g = mlp(missing, 1);
    c.start(request(g));
    QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 30000);
    QVERIFY(rec.failed);
    QVERIFY2(rec.failed->contains(QString::fromStdString(missing)), qPrintable(*rec.failed));
    QVERIFY(!c.isRunning());
  }

  void destroyingMidRunIsClean() {
    const int threads_before = thread_count();
    for (bool paused : {false, true}) {
      auto c = std::make_unique<TrainingController>();
      Recorder rec(*c);
      c->start(request(mlp(data_, 1000, 10), paused ? "destroyed-paused" : "destroyed"));  // a folder per run
      QTRY_VERIFY_WITH_TIMEOUT(rec.batches.size() >= 10, 30000);
      if (paused) c->pause();
      c.reset();
      // The run was stopped, not trained to its end: its folder says so, and how far it got.
      const session::RunRecord run = session::read_run(fs::path(tmp_.path().toStdString()) / "runs" /
                                                       (paused ? "destroyed-paused" : "destroyed"));
      qInfo("destroyed %s after %zu of 1000 epochs", paused ? "paused" : "running", run.epochs.size());
      QCOMPARE(run.status, session::RunStatus::Stopped);
      QVERIFY(run.epochs.size() < 1000);
      QCoreApplication::sendPostedEvents();  // nothing the worker posted may arrive now
      QVERIFY(!rec.done());
    }
    // The worker and its loader threads are gone (OpenBLAS keeps its pool, started earlier): they
    // have been joined, and leave the process's task list as they exit.
    QTRY_COMPARE_WITH_TIMEOUT(thread_count(), threads_before, 10000);
  }

  // The Try-it panel's live model: copies of the weights at batch boundaries, on request.
  void weightsAreCopiedOnRequest() {
    TrainingController c;
    Recorder rec(c);
    std::vector<app::WeightsSnapshot> snapshots;
    connect(&c, &TrainingController::weightsSnapshot, this,
            [&](const app::WeightsSnapshot& w) { snapshots.push_back(w); });
    const graph::Graph g = mlp(data_, 1000, 10);
    c.start(request(g, "snapshots"));
    QTRY_VERIFY_WITH_TIMEOUT(rec.batches.size() >= 20, 30000);

    // What a TrainedModel of the run needs besides its graph.
    QCOMPARE(rec.info->datasetInfo.input_shape, Shape({1, 28, 28}));
    QCOMPARE(rec.info->datasetInfo.classes, int64_t(10));
    QCOMPARE(rec.info->normalization, session::make_training_run(g).normalization);
    QCOMPARE(rec.info->normalization.mean.size(), size_t(1));

    c.requestWeights();
    QTRY_COMPARE_WITH_TIMEOUT(snapshots.size(), size_t(1), 10000);
    const app::WeightsSnapshot first = snapshots.front();
    QVERIFY(!first.final && first.epoch >= 1);  // at a batch, or at the end of an epoch (batch 0)
    session::TrainingRun fresh = session::make_training_run(g);
    const nn::NamedTensors expected = fresh.compiled.model->state();
    QCOMPARE(first.state->size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      QCOMPARE((*first.state)[i].first, expected[i].first);
      QCOMPARE((*first.state)[i].second.shape(), expected[i].second.shape());
      QVERIFY((*first.state)[i].second.device().is_cpu());
      QVERIFY(!(*first.state)[i].second.requires_grad());
    }
    const std::vector<float> first_values = (*first.state)[0].second.to_vector();
    const int64_t per_epoch = rec.info->batchesPerEpoch;
    const auto trained_by = [&](const train::BatchEnd& b) { return trained(b.epoch, b.batch, per_epoch); };
    QTRY_VERIFY_WITH_TIMEOUT(trained_by(rec.batches.back()) > trained(first.epoch, first.batch, per_epoch), 30000);

    // Requests while paused wait for the next batch boundary (the batch in flight, or the first
    // after resume()) and are answered once.
    c.pause();
    QVERIFY(waitForTicks(c, 1));  // what the worker posted before the pause is delivered
    snapshots.clear();
    const train::BatchEnd seen = rec.batches.back();
    for (int i = 0; i < 3; ++i) c.requestWeights();
    QVERIFY(waitForTicks(c, 3));
    QVERIFY(snapshots.size() <= 1);
    c.resume();
    QTRY_COMPARE_WITH_TIMEOUT(snapshots.size(), size_t(1), 30000);
    const app::WeightsSnapshot answer = snapshots.front();
    QVERIFY(trained(answer.epoch, answer.batch, per_epoch) >= trained_by(seen));  // not an older copy
    // Training went on, and the first copy did not follow it: a copy, not a view.
    QVERIFY((*answer.state)[0].second.to_vector() != first_values);
    QCOMPARE((*first.state)[0].second.to_vector(), first_values);

    // After the run (everything it posted delivered): the three requests had one answer, and
    // the final model, as its final checkpoint holds it, comes on request.
    c.stop();
    QVERIFY(c.waitForFinished(30000));
    QVERIFY(rec.finished);
    QCOMPARE(snapshots.size(), size_t(1));
    snapshots.clear();
    c.requestWeights();
    QCOMPARE(snapshots.size(), size_t(0));  // queued, like the worker's
    QTRY_COMPARE_WITH_TIMEOUT(snapshots.size(), size_t(1), 10000);
    QVERIFY(snapshots[0].final);
    train::load_checkpoint(rec.checkpoint("final").toStdString(), *fresh.compiled.model);
    const nn::NamedTensors saved = fresh.compiled.model->state();
    for (size_t i = 0; i < saved.size(); ++i)
      QCOMPARE((*snapshots[0].state)[i].second.to_vector(), saved[i].second.to_vector());

    // A controller that never trained has nothing to copy.
    TrainingController idle;
    QSignalSpy none(&idle, &TrainingController::weightsSnapshot);
    idle.requestWeights();
    QCoreApplication::sendPostedEvents();  // where an answer, queued, would be
    QCOMPARE(none.count(), 0);
  }

  // A request made after the last batch, while the UI still sees the run but its worker has
  // served its last request, is answered with the final model, not lost.
  void aRequestTheRunEndsBeforeGetsTheFinalModel() {
    TrainingController c;
    Recorder rec(c);
    std::vector<app::WeightsSnapshot> snapshots;
    connect(&c, &TrainingController::weightsSnapshot, this,
            [&](const app::WeightsSnapshot& w) { snapshots.push_back(w); });
    bool asked_while_running = false;
    connect(&c, &TrainingController::checkpointSaved, this, [&](const QString&, const QString& kind) {
      if (kind != "final") return;
      asked_while_running = c.isRunning();
      c.requestWeights();
    });
    const graph::Graph g = mlp(data_, 1);
    c.start(request(g, "late_request"));
    QVERIFY(c.waitForFinished(30000));
    QVERIFY(rec.finished && asked_while_running);
    QTRY_COMPARE_WITH_TIMEOUT(snapshots.size(), size_t(1), 10000);
    QVERIFY(snapshots[0].final);
    session::TrainingRun fresh = session::make_training_run(g);
    train::load_checkpoint(rec.checkpoint("final").toStdString(), *fresh.compiled.model);
    const nn::NamedTensors saved = fresh.compiled.model->state();
    QCOMPARE(snapshots[0].state->size(), saved.size());
    for (size_t i = 0; i < saved.size(); ++i)
      QCOMPARE((*snapshots[0].state)[i].second.to_vector(), saved[i].second.to_vector());
  }

  // While a run trains, the UI thread's event loop keeps turning: a 10 ms timer on it fires
  // between any two of the controller's deliveries, which stay coalesced.
  void uiThreadStaysResponsive() {
    TrainingController c;
    Recorder rec(c);
    QTimer* tick = deliveryTimer(c);
    QVERIFY(tick);
    int probes = 0, ticks = 0, ticks_without_probe = 0, probes_at_last_tick = 0;
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(10);
    connect(&probe, &QTimer::timeout, this, [&] { ++probes; });
    connect(tick, &QTimer::timeout, this, [&] {
      ++ticks;
      if (probes == probes_at_last_tick) ++ticks_without_probe;
      probes_at_last_tick = probes;
    });
    probe.start();
    c.start(request(mlp(data_, 150, 10), "responsive"));
    QTRY_VERIFY_WITH_TIMEOUT(rec.done(), 120000);
    probe.stop();
    QVERIFY2(rec.finished, qPrintable(rec.failed.value_or("")));
    qInfo("UI thread during a %zu-batch run: %d probes of 10 ms, %d deliveries, %d batches signals",
          rec.batches.size(), probes, ticks, rec.batch_signals);
    QVERIFY(ticks >= 3);  // the run spans several deliveries
    QCOMPARE(ticks_without_probe, 0);
    // Coalesced: one signal per delivery (ticks and the end), plus one per epoch at most.
    QVERIFY(rec.batch_signals <= ticks + 1 + 150);
  }
};

QTEST_GUILESS_MAIN(TestAppTraining)
#include "test_app_training.moc"
