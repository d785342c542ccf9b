// Runs that survive a killed window: a second Plexus (this suite in its --train-until-killed
// mode) trains a project in the real window and is killed with SIGKILL mid-run; a window
// opened on the project afterwards offers the interrupted run to resume ("Plexus closed during
// the last run, Run 1: it was interrupted at epoch 2, batch 17 of 80 …"), and so does its run
// list; Resume, clicked, trains on in the run's own folder to the end, and the run ends as one
// never interrupted: final.safetensors equal to `plexus-cli train`'s bit for bit, metrics.jsonl
// with every event once.
#include <QElapsedTimer>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include "dashboard.h"
#include "dashboard/resume_offer.h"
#include "dashboard/run_list.h"
#include "dashboard/training_plots.h"
#include "data/synthetic_digits.h"
#include "editor/model/graph_document.h"
#include "graph/project.h"
#include "session/resume.h"
#include "session/run_log.h"
#include "support/app_fixture.h"
#include "support/cli_support.h"
#include "support/mlp_fixture.h"
#include "support/same_run.h"
#include "training_controller.h"

using namespace plexus;
using widgets::RunList;
namespace fs = std::filesystem;

namespace {

QString at(const fs::path& p) { return QString::fromStdString(p.string()); }

// The child's whole life: the project opened and trained in the window until the test kills it.
int trainUntilKilled(const QString& project) {
  QStandardPaths::setTestModeEnabled(true);
  testing::TestWindow w;
  if (!w.openFile(project)) return 2;
  if (!w.startTraining()) return 3;
  return QApplication::exec();
}

// The run folder the project's newest run writes, once there is one.
std::optional<fs::path> newestRun(const fs::path& project) {
  const std::vector<fs::path> runs = session::list_runs(project);
  if (runs.empty()) return std::nullopt;
  return runs.front();
}

// Where the run in `folder` would resume from now; none while it has no `last` yet (or its log
// cannot be read in the middle of a line's write).
std::optional<session::ResumePoint> resumePointNow(const fs::path& folder) {
  try {
    return session::find_resume_point(folder);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

class TestAppResume : public QObject {
  Q_OBJECT

  QTemporaryDir recovery_;
  QTemporaryDir work_;
  fs::path project_, killed_;
  session::ResumePoint point_;

  // Opens the project in `w` and waits for its past runs.
  static bool open(testing::TestWindow& w, const fs::path& project) {
    QSignalSpy loaded(w.dashboard(), &app::Dashboard::runsLoaded);
    return w.openFile(at(project)) && loaded.wait(20000);
  }

 private slots:
  void initTestCase() {
    testing::isolate_app(recovery_.path());
    const fs::path work = work_.path().toStdString();
    data::write_synthetic_digits(work / "digits", 1600, 100);
    graph::Graph g = testing::resumable_mlp((work / "digits").string(), 512, 0.002, 20, 5);
    g.training.checkpoint_minutes = 0.0005;  // 30 ms: `last` every few batches
    project_ = work / "resumed.plexus";
    graph::save_project(project_, g);

    // The run never interrupted, for the weights the resumed one must end with.
    const testing::CliResult whole =
        testing::run_cli({"train", at(project_), "--run-dir", at(work / "whole"), "--quiet", "--threads", "1"}, 300000);
    QVERIFY2(whole.code == 0, qPrintable(whole.out + whole.err));

    // The window trains the project in a second process, killed once `last` is in the middle of
    // epoch 2 or 3.
    QProcess child;
    child.setProcessChannelMode(QProcess::ForwardedChannels);
    child.start(QCoreApplication::applicationFilePath(), {"--train-until-killed", at(project_)});
    QVERIFY(child.waitForStarted());
    std::optional<session::ResumePoint> point;
    QElapsedTimer waited;
    waited.start();
    while (child.state() == QProcess::Running && waited.elapsed() < 240000) {
      if (const std::optional<fs::path> run = newestRun(project_)) {
        killed_ = *run;
        point = resumePointNow(*run);
        if (point && point->epoch >= 2 && point->batch > 0) break;  // mid-epoch
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    QVERIFY2(child.state() == QProcess::Running, "the window's run ended (or never came) before it could be killed");
    child.kill();  // SIGKILL
    QVERIFY(child.waitForFinished());
    QCOMPARE(child.exitStatus(), QProcess::CrashExit);
    QVERIFY(point);
    QVERIFY2(!fs::exists(killed_ / "final.safetensors"), "killed after its end");
    QCOMPARE(session::read_run(killed_).status, session::RunStatus::Incomplete);
    point_ = *session::find_resume_point(killed_);  // as the kill left it: `last` may be newer than seen
    qInfo("killed %s", session::resume_point_text(point_).c_str());
  }

  // The offer can be put aside; the run list still shows where the run stopped, with Resume.
  void theInterruptedRunIsOfferedAndListed() {
    testing::TestWindow w;
    QVERIFY(open(w, project_));
    widgets::ResumeOffer* offer = w.dashboard()->resumeOffer();
    const QString where = QString::fromStdString(session::resume_point_text(point_));
    QVERIFY2(where.startsWith("interrupted at epoch "), qPrintable(where));
    QVERIFY2(offer->text().contains("Plexus closed during the last run, Run 1: it was " + where),
             qPrintable(offer->text()));
    const int run = offer->run();
    QCOMPARE(w.dashboard()->plots()->runInfo(run).origin.folder, at(killed_));

    RunList* list = w.dashboard()->runs();
    QTreeWidgetItem* item = list->itemForRun(run);
    QVERIFY(item);
    auto* link = qobject_cast<QLabel*>(list->itemWidget(item, RunList::StatusColumn));
    QVERIFY(link);
    QCOMPARE(link->text(), where + " — <a href=\"resume\">Resume</a>");
    list->setCurrentItem(item);
    QVERIFY(list->resumeAction()->isEnabled());
    QVERIFY(!list->continueAction()->isEnabled());  // no final checkpoint to continue from

    QTest::mouseClick(offer->dismissButton(), Qt::LeftButton);
    QVERIFY(offer->text().isEmpty());
    QVERIFY(list->resumeAction()->isEnabled());
    QVERIFY(w.errors.isEmpty());
  }

  // The acceptance: Resume clicked, the run trains on in its folder and ends as it would have.
  void resumeEndsAsTheUninterruptedRun() {
    testing::TestWindow w;
    QVERIFY(open(w, project_));
    widgets::ResumeOffer* offer = w.dashboard()->resumeOffer();
    QVERIFY(!offer->text().isEmpty());
    const int runs_before = w.dashboard()->plots()->runCount();
    QSignalSpy finished(w.training(), &app::TrainingController::finished);
    QSignalSpy failed(w.training(), &app::TrainingController::failed);
    QTest::mouseClick(offer->resumeButton(), Qt::LeftButton);
    QVERIFY(w.training()->isRunning());  // on the worker: the click returned at once
    QVERIFY(offer->text().isEmpty());
    // The run that trains is the interrupted one, its curves up to `last` drawn already (epoch 1
    // at least), no longer offering Resume.
    const int resumed = w.dashboard()->plots()->runIds().back();
    QVERIFY(w.dashboard()->plots()->runInfo(resumed).active);
    QCOMPARE(w.dashboard()->plots()->runInfo(resumed).origin.folder, at(killed_));
    QVERIFY(w.dashboard()->plots()->pointCount(resumed) > 0);
    QVERIFY(!w.dashboard()->runs()->itemWidget(w.dashboard()->runs()->itemForRun(resumed), RunList::StatusColumn));
    // Paused and resumed with the editor's project changed: the run goes on with its own.
    w.setPaused(true);
    graph::TrainingSettings changed = w.document()->graph().training;
    changed.lr *= 2;
    w.document()->setTraining(changed);
    w.setPaused(false);
    QVERIFY(!w.training()->isPaused());
    QVERIFY2(finished.wait(240000), failed.isEmpty() ? "no end" : qPrintable(failed.at(0).at(0).toString()));
    QVERIFY(!finished.at(0).at(0).value<train::Finished>().cancelled);
    QVERIFY(w.errors.isEmpty());

    // The same folder, no second run; the run's row, completed, in the place of the interrupted one.
    QCOMPARE(session::list_runs(project_).size(), size_t(1));
    QCOMPARE(w.dashboard()->plots()->runCount(), runs_before);
    const int run = w.dashboard()->plots()->runIds().back();
    const widgets::TrainingPlots::RunInfo info = w.dashboard()->plots()->runInfo(run);
    QCOMPARE(info.origin.folder, at(killed_));
    QCOMPARE(info.name, QString("Run 1"));
    QCOMPARE(info.status, QString("completed"));
    QVERIFY(info.origin.continuable);
    QVERIFY(!info.origin.resumable);

    QVERIFY(fs::exists(killed_ / "final.safetensors"));
    QCOMPARE(session::read_run(killed_).status, session::RunStatus::Completed);
    const fs::path whole = fs::path(work_.path().toStdString()) / "whole";
    const std::string weights = testing::tensor_difference(whole / "final.safetensors", killed_ / "final.safetensors");
    QVERIFY2(weights.empty(), weights.c_str());
    const std::string log = testing::log_difference(whole, killed_);
    QVERIFY2(log.empty(), log.c_str());
  }
};

int main(int argc, char** argv) {
  // One thread in both windows and in plexus-cli (--threads 1): the same sums in the same order.
  qputenv("PLEXUS_NUM_THREADS", "1");
  QApplication app(argc, argv);
  if (argc == 3 && qstrcmp(argv[1], "--train-until-killed") == 0)
    return trainUntilKilled(QString::fromLocal8Bit(argv[2]));
  TestAppResume test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_app_resume.moc"
