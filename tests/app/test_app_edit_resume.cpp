// Pause, edit, Resume in the real window, offscreen: a run paused mid-epoch whose middle layer is
// widened in the document goes on, in the same run folder, with the edited model; the nodes
// whose parameter shapes did not change keep their weights bit for bit (the model before the
// edit against the edited one as it starts), the widened ones start afresh in their new shapes;
// the curves carry a marker saying what changed, the run folder describes the final model and
// its log the edit, and every batch is trained once. Edits that cannot apply — settings changed,
// a graph that does not compile — leave the run paused as it was, with a message, and undoing
// them lets it go on.
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <filesystem>

#include "dashboard.h"
#include "dashboard/training_plots.h"
#include "data/synthetic_digits.h"
#include "editor/model/graph_document.h"
#include "graph/project.h"
#include "main_window.h"
#include "io/safetensors.h"
#include "session/resume.h"
#include "session/run.h"
#include "session/run_log.h"
#include "train/checkpoint.h"
#include "training_controller.h"
#include "support/app_fixture.h"
#include "support/mlp_fixture.h"

using namespace plexus;
using plexus::app::MainWindow;
using plexus::app::TrainingController;
using plexus::app::WeightsSnapshot;
using plexus::widgets::TrainingPlots;
namespace fs = std::filesystem;

namespace {

constexpr int kEpochs = 12;  // a margin: startPaused stops the run a few batches in
constexpr int64_t kBatches = 1800 / 10;  // 2000 examples, 10% validation, batches of 10

using Window = testing::TestWindow;

// in -> flat -> fc1(64) -> act -> fc2(16) -> act2 -> fc3(10) -> loss, Adam.
graph::Graph mlp(const std::string& data) {
  graph::Graph g = testing::mlp_graph(data, {{"fc1", 64}, {"fc2", 16}, {"fc3", 10}});
  g.training.optimizer = "adam";
  g.training.lr = 0.002;
  g.training.batch_size = 10;
  g.training.epochs = kEpochs;
  return g;
}

const Tensor& tensor(const WeightsSnapshot& w, const std::string& name) {
  for (const auto& [n, t] : *w.state)
    if (n == name) return t;
  static const Tensor none;
  return none;
}

}  // namespace

class TestAppEditResume : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_;

  // A window training the project, paused early in its first epoch. Pausing on the first
  // batches shown raced the run: the tick that shows them may come later than the whole run
  // ends on a loaded machine. So the run is paused as it starts (the worker's Trainer waits
  // before its first batch), asked for its weights, and resumed: the snapshot is posted at
  // once after the next batch, and pausing on it stops the run a few batches in.
  void startPaused(Window& w) {
    QVERIFY(w.openFile(project_));
    QVERIFY(w.startTraining());
    w.pauseAction()->trigger();
    QVERIFY(w.training()->isPaused());
    QVERIFY(QTest::qWaitForWindowExposed(&w));  // drawn while paused, not while the run goes on
    QSignalSpy snapshots(w.training(), &TrainingController::weightsSnapshot);
    QMetaObject::Connection pauser = connect(w.training(), &TrainingController::weightsSnapshot, &w, [&w] {
      if (!w.training()->isPaused()) w.pauseAction()->trigger();
    });
    w.training()->requestWeights();
    w.pauseAction()->trigger();  // Resume
    QVERIFY(!w.training()->isPaused());
    QVERIFY(snapshots.wait(30000));
    disconnect(pauser);
    QVERIFY(w.training()->isPaused() && w.training()->isRunning());
  }

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.path() + "/recovery");
    data::write_synthetic_digits(fs::path(dir_.path().toStdString()) / "digits", 2000, 100);
    project_ = dir_.path() + "/edit.plexus";
    graph::save_project(project_.toStdString(), mlp("digits"));
  }

  // Each test starts without run folders, whatever an earlier one left behind when it failed.
  void init() {
    for (const fs::path& run : session::list_runs(project_.toStdString())) fs::remove_all(run);
  }

  void anEditedRunGoesOnKeepingTheUnchangedNodes() {
    Window w;
    w.show();
    std::vector<train::BatchEnd> batches;
    connect(w.training(), &TrainingController::batches, &w,
            [&](const std::vector<train::BatchEnd>& b) { batches.insert(batches.end(), b.begin(), b.end()); });
    QSignalSpy snapshots(w.training(), &TrainingController::weightsSnapshot);
    QSignalSpy edited(w.training(), &TrainingController::graphEdited);
    QSignalSpy finished(w.training(), &TrainingController::finished);
    startPaused(w);
    snapshots.clear();  // startPaused's own

    // The model at the pause, then the edit: fc2 widened (fc3 takes 24 inputs now).
    w.training()->requestWeights();
    w.document()->setParam("fc2", "out_features", int64_t(24));
    w.pauseAction()->trigger();  // Resume
    QVERIFY(!w.training()->isPaused());
    QVERIFY(edited.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(snapshots.size() >= 2, 10000);
    const auto before = snapshots.at(snapshots.size() - 2).at(0).value<WeightsSnapshot>();
    const auto after = snapshots.last().at(0).value<WeightsSnapshot>();
    QVERIFY(!before.afterEdit && after.afterEdit);

    // Unchanged nodes: bit for bit. fc2 and fc3's weight: afresh, in their new shapes.
    for (const char* name : {"fc1.weight", "fc1.bias", "fc3.bias"})
      QCOMPARE(tensor(after, name).to_vector(), tensor(before, name).to_vector());
    QCOMPARE(tensor(before, "fc2.weight").shape(), Shape({16, 64}));
    QCOMPARE(tensor(after, "fc2.weight").shape(), Shape({24, 64}));
    QCOMPARE(tensor(after, "fc3.weight").shape(), Shape({10, 24}));

    const auto edit = edited.at(0).at(0).value<train::GraphEdit>();
    qInfo("edited after batch %lld of epoch %d", (long long)edit.batch, edit.epoch);
    // `last` holds the edited model as soon as the edit is applied (a few batches into the
    // first epoch, long before its end would save it): a crash now resumes the edited run.
    {
      const std::vector<fs::path> runs = session::list_runs(project_.toStdString());
      QCOMPARE(runs.size(), size_t(1));
      const fs::path last = runs[0] / session::kLastCheckpointFile;
      QVERIFY2(fs::exists(last), last.c_str());
      const io::SafetensorsHeader header = io::read_safetensors_header(last);
      const io::SafetensorsEntry* fc2 = header.find(train::kCheckpointModelPrefix + "fc2.weight");
      QVERIFY(fc2);
      QCOMPARE(fc2->shape, Shape({24, 64}));
    }
    QCOMPARE(edit.kept, int64_t(3));
    QCOMPARE(edit.reset, int64_t(3));
    QVERIFY2(QString::fromStdString(edit.carried).startsWith("kept 3 tensors (optimizer state of 3); reset fc2.weight "
                                                             "([24, 64] here, [16, 64] before the edit)"),
             edit.carried.c_str());
    QCOMPARE(edit.changes.size(), size_t(1));
    QVERIFY2(QString::fromStdString(edit.changes[0]).contains("out_features 16 → 24"), edit.changes[0].c_str());
    QCOMPARE(w.training()->runGraph().find("fc2")->params.at("out_features"), graph::ParamValue(int64_t(24)));

    // The curves mark it, with what changed.
    TrainingPlots* plots = w.dashboard()->plots();
    const int run = plots->runIds().back();
    const auto markers = plots->markers(run);
    QCOMPARE(markers.size(), size_t(1));
    QCOMPARE(markers[0].first, edit.step());
    QVERIFY2(markers[0].second.contains("out_features 16 → 24") && markers[0].second.contains("kept 3 tensors, reset 3"),
             qPrintable(markers[0].second));

    // The same run goes on to its end, every batch trained once, in order.
    QVERIFY(finished.wait(120000));
    QVERIFY(!finished.at(0).at(0).value<train::Finished>().cancelled);
    QCOMPARE(int64_t(batches.size()), kEpochs * kBatches);
    for (size_t i = 0; i < batches.size(); ++i) {
      QCOMPARE(batches[i].epoch, int(int64_t(i) / kBatches) + 1);
      QCOMPARE(batches[i].batch, int64_t(i) % kBatches + 1);
    }

    // One run folder, describing the final model, with the edit in its log.
    const std::vector<fs::path> runs = session::list_runs(project_.toStdString());
    QCOMPARE(runs.size(), size_t(1));
    const session::RunRecord record = session::read_run(runs[0]);
    QCOMPARE(record.status, session::RunStatus::Completed);
    QCOMPARE(record.epochs_completed, kEpochs);
    QCOMPARE(record.edits.size(), size_t(1));
    QCOMPARE(record.edits[0].changes, edit.changes);
    const graph::Graph final_graph = graph::load_project(runs[0] / session::kRunProjectFile);
    QCOMPARE(final_graph.find("fc2")->params.at("out_features"), graph::ParamValue(int64_t(24)));
    const graph::Graph first_graph = graph::load_project(runs[0] / "project-before-edit-1.plexus");
    QCOMPARE(first_graph.find("fc2")->params.at("out_features"), graph::ParamValue(int64_t(16)));
    graph::Graph g = final_graph;
    g.dataset.path = (fs::path(dir_.path().toStdString()) / "digits").string();
    session::TrainingRun check = session::make_training_run(g);
    for (const char* kind : {"final", "best"})
      train::load_checkpoint(runs[0] / (std::string(kind) + ".safetensors"), *check.compiled.model, check.optimizer.get());

    // A window opened later shows the marker of the past run.
    Window later;
    QSignalSpy loaded(later.dashboard(), &app::Dashboard::runsLoaded);
    QVERIFY(later.openFile(project_) && loaded.wait(20000));
    const TrainingPlots* past = later.dashboard()->plots();
    QCOMPARE(past->runCount(), 1);
    QCOMPARE(past->markers(past->runIds()[0]).size(), size_t(1));
    QCOMPARE(past->markers(past->runIds()[0])[0].second, markers[0].second);
    fs::remove_all(runs[0]);
  }

  // A node frozen while paused (its lr_mult set to 0) is an edit too: the run goes on with the
  // node's weights as they were at the pause, and they stay so while the others learn.
  void freezingANodeWhilePausedIsAnEdit() {
    Window w;
    w.show();
    QSignalSpy snapshots(w.training(), &TrainingController::weightsSnapshot);
    QSignalSpy edited(w.training(), &TrainingController::graphEdited);
    startPaused(w);
    snapshots.clear();  // startPaused's own
    w.training()->requestWeights();
    w.document()->setNodeSetting("fc2", "lr_mult", 0.0);
    w.pauseAction()->trigger();  // Resume
    QVERIFY(edited.wait(30000));
    const auto edit = edited.at(0).at(0).value<train::GraphEdit>();
    QCOMPARE(edit.changes, std::vector<std::string>{"Linear 'fc2': lr_mult 1 → 0"});
    QCOMPARE(edit.kept, int64_t(6));
    QCOMPARE(w.training()->runGraph().find("fc2")->lr_mult, 0.0);
    QTRY_VERIFY_WITH_TIMEOUT(snapshots.size() >= 2, 10000);
    const auto before = snapshots.at(snapshots.size() - 2).at(0).value<WeightsSnapshot>();

    QSignalSpy batches(w.training(), &TrainingController::batches);
    QVERIFY(batches.wait(30000));  // trained on since
    // Answered at the next batch, or with the final model when the run ends first.
    const qsizetype taken = snapshots.size();
    w.training()->requestWeights();
    QTRY_VERIFY_WITH_TIMEOUT(snapshots.size() > taken, 10000);
    const auto later = snapshots.last().at(0).value<WeightsSnapshot>();
    for (const char* name : {"fc2.weight", "fc2.bias"})
      QCOMPARE(tensor(later, name).to_vector(), tensor(before, name).to_vector());
    QVERIFY(tensor(later, "fc1.weight").to_vector() != tensor(before, "fc1.weight").to_vector());
    w.training()->stop();
    QVERIFY(w.training()->waitForFinished(30000));
    for (const fs::path& run : session::list_runs(project_.toStdString())) fs::remove_all(run);
  }

  void editsThatCannotApplyLeaveTheRunPaused() {
    Window w;
    w.show();
    QSignalSpy refused(w.training(), &TrainingController::editRefused);
    QSignalSpy edited(w.training(), &TrainingController::graphEdited);
    QSignalSpy finished(w.training(), &TrainingController::finished);
    startPaused(w);

    // Settings: refused at once, still paused.
    graph::TrainingSettings s = w.document()->graph().training;
    s.lr = 0.5;
    w.document()->setTraining(s);
    w.pauseAction()->trigger();
    QVERIFY(w.training()->isPaused());
    QCOMPARE(w.errors.size(), 1);
    QVERIFY2(w.errors[0].contains("training.lr 0.002 → 0.5"), qPrintable(w.errors[0]));
    w.document()->undoStack()->undo();

    // A graph that does not compile: the worker says why, the run stays paused as it was.
    w.document()->disconnect(w.document()->graph().edges.back());  // the loss loses its target
    w.pauseAction()->trigger();
    QVERIFY(refused.wait(30000));
    QVERIFY(w.training()->isPaused() && w.training()->isRunning());
    QCOMPARE(w.errors.size(), 2);
    QVERIFY2(w.errors[1].startsWith("The edit was not applied: "), qPrintable(w.errors[1]));
    QVERIFY(w.pauseAction()->isChecked());

    // Undone, it goes on with the model it had, to the end; the log has no edit.
    w.document()->undoStack()->undo();
    w.pauseAction()->trigger();
    QVERIFY(finished.wait(120000));
    QCOMPARE(edited.size(), 0);
    const std::vector<fs::path> runs = session::list_runs(project_.toStdString());
    QCOMPARE(runs.size(), size_t(1));
    const session::RunRecord record = session::read_run(runs[0]);
    QCOMPARE(record.status, session::RunStatus::Completed);
    QVERIFY(record.edits.empty());
    QVERIFY(!fs::exists(runs[0] / "project-before-edit-1.plexus"));
    fs::remove_all(runs[0]);
  }

  // Paused and edited after its last batch (here as its final checkpoint is shown: the worker has
  // trained everything), a run ends on its own: without the edit, saying so, and the run's graph
  // is the one that trained, not the edited one. The soak (test_app_soak) met this at random.
  void anEditTheRunEndedBeforeIsReportedAndNotTaken() {
    graph::Graph g = mlp("digits");
    g.training.epochs = 1;
    const QString project = dir_.path() + "/short.plexus";
    graph::save_project(project.toStdString(), g);
    Window w;
    w.show();
    QVERIFY(w.openFile(project));
    QSignalSpy edited(w.training(), &TrainingController::graphEdited);
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QSignalSpy notices(w.training(), &TrainingController::notice);
    connect(w.training(), &TrainingController::checkpointSaved, &w, [&w](const QString&, const QString& kind) {
      if (kind != "final") return;
      w.pauseAction()->trigger();
      QVERIFY(w.training()->isPaused());
      w.document()->setParam("fc2", "out_features", int64_t(24));
      w.pauseAction()->trigger();  // Resume, with the edit
    });
    QVERIFY(w.startTraining());
    QVERIFY(finished.wait(120000));
    QVERIFY(!finished.at(0).at(0).value<train::Finished>().cancelled);
    QCOMPARE(edited.size(), 0);
    QCOMPARE(w.training()->runGraph().find("fc2")->params.at("out_features"), graph::ParamValue(int64_t(16)));
    QCOMPARE(w.document()->graph().find("fc2")->params.at("out_features"), graph::ParamValue(int64_t(24)));
    QCOMPARE(notices.size(), 1);
    QVERIFY2(notices.at(0).at(0).toString().startsWith("the run ended before the edit made while paused could be applied"),
             qPrintable(notices.at(0).at(0).toString()));
    QVERIFY(w.errors.isEmpty());
    for (const fs::path& run : session::list_runs(project.toStdString())) fs::remove_all(run);
  }
};

QTEST_MAIN(TestAppEditResume)
#include "test_app_edit_resume.moc"
