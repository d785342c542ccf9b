// Runs that outlast the app, offscreen in the real window: runs trained in one window appear,
// with their curves, in a new window opened on the same project; their check boxes overlay
// them; Delete asks and removes the folder only when confirmed; Continue from This Run trains
// on from the final checkpoint with the epochs numbered on; Open Run Folder adds any run.
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include <filesystem>
#include <fstream>
#include <qcustomplot.h>

#include "dashboard.h"
#include "dashboard/run_list.h"
#include "dashboard/training_plots.h"
#include "data/synthetic_digits.h"
#include "editor/node_view.h"
#include "graph/project.h"
#include "main_window.h"
#include "session/run_log.h"
#include "training_controller.h"
#include "support/app_fixture.h"

using namespace plexus;
using plexus::app::MainWindow;
using plexus::app::TrainingController;
using widgets::RunList;
using widgets::TrainingPlots;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kTrain = 400, kTest = 100, kBatch = 50;

// Its confirmations answered `confirmAnswer` and recorded.
struct Window : testing::TestWindow {
  QStringList confirmations;
  bool confirmAnswer = false;
  Window() {
    confirm = [this](const QString&, const QString& text, const QString&) {
      confirmations << text;
      return confirmAnswer;
    };
  }
  TrainingPlots* plots() const { return dashboard()->plots(); }
  RunList* runList() const { return dashboard()->runs(); }
  // Opens the project and waits for its past runs to be read.
  bool open(const QString& project) {
    QSignalSpy loaded(dashboard(), &app::Dashboard::runsLoaded);
    return openFile(project) && loaded.wait(20000);
  }
  // Trains the open project to the end; the epochs it reported.
  std::vector<train::EpochEnd> trainToTheEnd(const std::function<bool()>& start) {
    QSignalSpy finished(training(), &TrainingController::finished);
    QSignalSpy epochs(training(), &TrainingController::epochEnded);
    if (!start() || !finished.wait(120000)) return {};
    std::vector<train::EpochEnd> out;
    for (const QList<QVariant>& e : epochs) out.push_back(e.at(0).value<train::EpochEnd>());
    return out;
  }
};

// The run folders of the project, oldest first.
QStringList runFolders(const QString& project) {
  QStringList out;
  for (const fs::path& p : session::list_runs(project.toStdString())) out.prepend(QString::fromStdString(p.string()));
  return out;
}

// Removes, when it goes, the run folders made while it lived: each test starts from the two runs
// of initTestCase, however the one before it ended.
struct NewRunsRemoved {
  explicit NewRunsRemoved(QString project) : project(std::move(project)), before(runFolders(this->project)) {}
  ~NewRunsRemoved() {
    for (const QString& folder : runFolders(project))
      if (!before.contains(folder)) fs::remove_all(folder.toStdString());
  }
  QString project;
  QStringList before;
};

int idOf(const TrainingPlots* plots, const QString& name) {
  for (int id : plots->runIds())
    if (plots->runInfo(id).name == name) return id;
  return -1;
}

}  // namespace

class TestAppRuns : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_;
  std::vector<double> best_accuracy_;  // of each run trained in the first window

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.path() + "/recovery");
    data::write_synthetic_digits(fs::path(dir_.path().toStdString()) / "tiny", kTrain, kTest);
    project_ = testing::save_example_mlp(dir_.filePath("tiny_mlp.plexus"), "tiny", 2, kBatch);

    // Two runs in a first session of the app.
    Window w;
    w.show();
    QVERIFY(w.open(project_));
    QCOMPARE(w.plots()->runCount(), 0);
    for (int i = 0; i < 2; ++i) {
      const std::vector<train::EpochEnd> epochs = w.trainToTheEnd([&] { return w.startTraining(); });
      QCOMPARE(epochs.size(), size_t(2));
      double best = 0;
      for (const auto& e : epochs) best = std::max(best, e.eval_accuracy);
      best_accuracy_.push_back(best);
    }
    QCOMPARE(runFolders(project_).size(), 2);
  }

  void pastRunsAppearWithTheirCurvesInANewWindow() {
    const NewRunsRemoved cleanup(project_);
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.open(project_));
    const TrainingPlots* plots = w.plots();
    QCOMPARE(plots->runCount(), 2);
    const QStringList folders = runFolders(project_);
    for (int i = 0; i < 2; ++i) {
      const int id = plots->runIds()[size_t(i)];
      const TrainingPlots::RunInfo info = plots->runInfo(id);
      QCOMPARE(info.name, QString("Run %1").arg(i + 1));  // oldest first
      QCOMPARE(info.status, QString("completed"));
      QVERIFY(info.origin.past && info.origin.continuable && info.visible && !info.active);
      QCOMPARE(info.origin.folder, folders[i]);
      QVERIFY(info.origin.started.isValid() && info.origin.started.secsTo(QDateTime::currentDateTime()) < 600);
      QCOMPARE(*info.bestEvalAccuracy, best_accuracy_[size_t(i)]);
      QCOMPARE(plots->pointCount(id), int(2 * kTrain / kBatch));  // every batch of both epochs
      QCOMPARE(plots->graph(id, TrainingPlots::Series::EvalAccuracy)->dataCount(), 2);
      QCOMPARE(plots->graph(id, TrainingPlots::Series::TrainLoss)->dataCount(), 2);
      QVERIFY(plots->graph(id, TrainingPlots::Series::SmoothedLoss)->visible());
      // The list tells past runs by their date.
      QTreeWidgetItem* item = w.runList()->itemForRun(id);
      QVERIFY(item);
      QCOMPARE(item->text(RunList::StartedColumn), info.origin.started.toString("yyyy-MM-dd HH:mm"));
      QCOMPARE(item->text(RunList::BestColumn), QString::number(100 * best_accuracy_[size_t(i)], 'f', 1) + '%');
      QVERIFY(item->toolTip(RunList::NameColumn).contains(QFileInfo(folders[i]).fileName()));
    }
    // A run of this session goes on from there, and says so.
    QVERIFY(!w.trainToTheEnd([&] { return w.startTraining(); }).empty());
    QCOMPARE(plots->runCount(), 3);
    const int latest = plots->runIds().back();
    QCOMPARE(plots->runInfo(latest).name, QString("Run 3"));
    QVERIFY(!plots->runInfo(latest).origin.past);
    QVERIFY(w.runList()->itemForRun(latest)->text(RunList::StartedColumn).startsWith("this session, "));
    QVERIFY(plots->runInfo(latest).origin.continuable);  // its final checkpoint is saved
    QCOMPARE(runFolders(project_).size(), 3);
  }

  void aRunStartedWhileThePastOnesAreReadIsNumberedAfterThem() {
    const NewRunsRemoved cleanup(project_);
    Window w;
    w.show();
    QSignalSpy loaded(w.dashboard(), &app::Dashboard::runsLoaded);
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QVERIFY(w.openFile(project_));
    QVERIFY(w.startTraining());  // before the past runs are read: they arrive through the event loop
    QCOMPARE(w.plots()->runInfo(w.plots()->runIds().front()).name, QString("Run 1"));
    QVERIFY(loaded.wait(20000));
    QVERIFY(finished.count() == 1 || finished.wait(120000));
    QStringList names;
    for (int id : w.plots()->runIds()) names << w.plots()->runInfo(id).name;
    QCOMPARE(names, QStringList({"Run 3", "Run 1", "Run 2"}));  // the live run first, as it began first
  }

  void theCheckBoxOverlaysAPastRun() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.open(project_));
    w.showDashboard();
    const int id = idOf(w.plots(), "Run 1");
    QTreeWidgetItem* item = w.runList()->itemForRun(id);
    const QRect row = w.runList()->visualItemRect(item);
    const QPoint box(row.left() + 10, row.center().y());  // the check box leads the name column
    QTest::mouseClick(w.runList()->viewport(), Qt::LeftButton, {}, box);
    QVERIFY(!w.plots()->runInfo(id).visible);
    QVERIFY(!w.plots()->graph(id, TrainingPlots::Series::SmoothedLoss)->visible());
    QVERIFY(!w.plots()->graph(id, TrainingPlots::Series::EvalLoss)->visible());
    QVERIFY(w.plots()->graph(idOf(w.plots(), "Run 2"), TrainingPlots::Series::SmoothedLoss)->visible());
    QTest::mouseClick(w.runList()->viewport(), Qt::LeftButton, {}, box);
    QVERIFY(w.plots()->graph(id, TrainingPlots::Series::EvalAccuracy)->visible());
  }

  void onlyTheNewestRunsAreOverlaidAndAnUnreadableOneIsListed() {
    const NewRunsRemoved cleanup(project_);
    const QStringList folders = runFolders(project_);
    const fs::path runs = fs::path(folders[0].toStdString()).parent_path();
    // Two older copies of the first run, and a run whose log is garbage.
    fs::copy(folders[0].toStdString(), runs / "20000101-000000-000");
    fs::copy(folders[0].toStdString(), runs / "20000101-000000-001");
    fs::create_directories(runs / "20000101-000000-002");
    std::ofstream(runs / "20000101-000000-002" / session::kRunLogFile) << "lunch\n";
    Window w;
    w.show();
    QVERIFY(w.open(project_));
    QCOMPARE(w.plots()->runCount(), 5);
    const std::vector<int> ids = w.plots()->runIds();  // oldest first
    QVERIFY(!w.plots()->runInfo(ids[0]).visible && !w.plots()->runInfo(ids[1]).visible);
    QVERIFY(w.plots()->runInfo(ids[3]).visible && w.plots()->runInfo(ids[4]).visible);
    const TrainingPlots::RunInfo unreadable = w.plots()->runInfo(ids[2]);
    QVERIFY2(unreadable.status.startsWith("unreadable: ") && unreadable.status.contains("metrics.jsonl:1: not a line of JSON"),
             qPrintable(unreadable.status));
    QCOMPARE(w.plots()->pointCount(ids[2]), 0);
  }

  void deleteAsksAndRemovesTheFolderOnlyWhenConfirmed() {
    // A third run to delete, copied from the first.
    const NewRunsRemoved cleanup(project_);
    const QString doomed = QFileInfo(runFolders(project_)[0]).absolutePath() + "/20000101-000000-000";
    fs::copy(runFolders(project_)[0].toStdString(), doomed.toStdString());
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.open(project_));
    w.showDashboard();
    const int id = w.plots()->runIds().front();  // the oldest: the copy
    QCOMPARE(w.plots()->runInfo(id).origin.folder, doomed);
    w.runList()->setCurrentItem(w.runList()->itemForRun(id));
    w.runList()->setFocus();

    // Cancelled: nothing goes.
    w.confirmAnswer = false;
    QTest::keyClick(w.runList(), Qt::Key_Delete);
    QCOMPARE(w.confirmations.size(), 1);
    QVERIFY2(w.confirmations[0].contains(QDir::toNativeSeparators(doomed)) && w.confirmations[0].contains("Run 1"),
             qPrintable(w.confirmations[0]));
    // Nothing was started: a deletion takes the run's folder from it at once (Dashboard::deleteRun).
    QCOMPARE(w.plots()->runInfo(id).origin.folder, doomed);
    QVERIFY(QFileInfo::exists(doomed));
    QCOMPARE(w.plots()->runCount(), 3);

    // The Delete key of the canvas deletes nodes, not runs.
    w.showEditor();
    w.view()->setFocus();
    QTest::keyClick(w.view(), Qt::Key_Delete);
    QCOMPARE(w.confirmations.size(), 1);
    w.showDashboard();

    // Confirmed, from the context menu's action: the folder and the run go.
    w.confirmAnswer = true;
    QSignalSpy deleted(w.dashboard(), &app::Dashboard::runDeleted);
    QVERIFY(w.runList()->deleteAction()->isEnabled());
    w.runList()->deleteAction()->trigger();
    QVERIFY(deleted.wait(10000));
    QCOMPARE(deleted.at(0).at(1).toString(), QString());  // no error
    QVERIFY(!deleted.at(0).at(2).toBool());                // the folder itself went
    QVERIFY(!QFileInfo::exists(doomed));
    QCOMPARE(w.plots()->runCount(), 2);
    QVERIFY(!w.plots()->runInfo(id).origin.past);  // unknown now
    QVERIFY(!w.runList()->itemForRun(id));
    QCOMPARE(runFolders(project_).size(), 2);
  }

  void continueTrainsOnFromTheFinalCheckpoint() {
    const NewRunsRemoved cleanup(project_);
    Window w;
    w.show();
    QVERIFY(w.open(project_));
    const int from = idOf(w.plots(), "Run 2");
    const QString from_folder = w.plots()->runInfo(from).origin.folder;
    w.runList()->setCurrentItem(w.runList()->itemForRun(from));
    QVERIFY(w.runList()->continueAction()->isEnabled());
    const std::vector<train::EpochEnd> epochs =
        w.trainToTheEnd([&] { return w.runList()->continueAction()->trigger(), w.training()->isRunning(); });
    QCOMPARE(epochs.size(), size_t(2));
    QCOMPARE(epochs.front().epoch, 3);  // the run had done 2
    QCOMPARE(epochs.back().epoch, 4);

    const int id = w.plots()->runIds().back();
    QCOMPARE(w.plots()->graph(id, TrainingPlots::Series::EvalLoss)->data()->begin()->key, 3.0);
    QVERIFY2(w.runList()->itemForRun(id)->toolTip(RunList::NameColumn).contains("Continues Run 2"),
             qPrintable(w.runList()->itemForRun(id)->toolTip(RunList::NameColumn)));
    const session::RunRecord r = session::read_run(runFolders(project_).back().toStdString());
    QCOMPARE(r.header.first_epoch, 3);
    QCOMPARE(r.header.continued_from, QFileInfo(from_folder).absoluteFilePath().toStdString());
    QCOMPARE(r.epochs.front().epoch, 3);
    QCOMPARE(r.status, session::RunStatus::Completed);
    // Trained on from the checkpoint, not from scratch: the first continued epoch starts where
    // the run it continues ended.
    const session::RunRecord before = session::read_run(from_folder.toStdString());
    QVERIFY(r.batches.front().loss < 0.5 * before.batches.front().loss);
  }

  void continuingWithAnotherGraphFailsAndSaysWhy() {
    graph::Graph g = graph::load_project(project_.toStdString());
    g.find("fc1")->params["out_features"] = int64_t(32);
    const QString narrow = dir_.filePath("narrow.plexus");
    graph::save_project(narrow.toStdString(), g);
    Window w;
    w.show();
    QVERIFY(w.open(narrow));
    QCOMPARE(w.plots()->runCount(), 0);
    QSignalSpy loaded(w.dashboard(), &app::Dashboard::runsLoaded);
    w.chooseRunFolder = [&](const QString&) { return runFolders(project_)[0]; };
    w.openRunFolder();
    QVERIFY(loaded.wait(10000));
    QSignalSpy failed(w.training(), &TrainingController::failed);
    QVERIFY(w.continueRun(w.plots()->runIds().back()));
    QVERIFY(failed.wait(30000));
    const QString message = failed.at(0).at(0).toString();
    QVERIFY2(message.contains("cannot continue the run in " + runFolders(project_)[0] + " with this project: node 'fc1' "
                              "(Linear): out_features is 32 here, 128 in the run"),
             qPrintable(message));
    QVERIFY(!QFileInfo::exists(dir_.filePath("narrow.runs")));  // nothing was kept
    const int failed_run = w.plots()->runIds().back();
    QVERIFY(w.plots()->runInfo(failed_run).origin.folder.isEmpty());  // so nothing to delete
    w.runList()->setCurrentItem(w.runList()->itemForRun(failed_run));
    QVERIFY(!w.runList()->deleteAction()->isEnabled());
  }

  void openRunFolderAddsAnyRunAndRefusesOtherFolders() {
    Window w;
    w.show();
    QVERIFY(w.open(project_));
    // Another project's run, copied elsewhere.
    const QString elsewhere = dir_.filePath("elsewhere/some-run");
    fs::create_directories(fs::path(elsewhere.toStdString()).parent_path());
    fs::copy(runFolders(project_)[0].toStdString(), elsewhere.toStdString());
    const int before = w.plots()->runCount();
    w.chooseRunFolder = [&](const QString&) { return elsewhere; };
    QSignalSpy loaded(w.dashboard(), &app::Dashboard::runsLoaded);
    w.runList()->openAction()->trigger();
    QVERIFY(loaded.wait(10000));
    QCOMPARE(w.plots()->runCount(), before + 1);
    QCOMPARE(w.plots()->runInfo(w.plots()->runIds().back()).name, QString("some-run"));
    // Opening it again adds nothing.
    w.runList()->openAction()->trigger();
    QVERIFY(loaded.wait(10000));
    QCOMPARE(w.plots()->runCount(), before + 1);

    QSignalSpy failed(w.dashboard(), &app::Dashboard::runOpenFailed);
    w.chooseRunFolder = [&](const QString&) { return dir_.filePath("tiny"); };
    w.openRunFolder();
    QVERIFY(failed.wait(10000));
    QCOMPARE(w.errors.size(), 1);
    QVERIFY2(w.errors[0].contains("not a run folder"), qPrintable(w.errors[0]));
    QCOMPARE(w.plots()->runCount(), before + 1);
  }
};

QTEST_MAIN(TestAppRuns)
#include "test_app_runs.moc"
