// Runs that other processes write, followed live in the real window, offscreen: a run that
// plexus-cli trains (caught mid-run: its epochs so far, its log gone quiet while it is held,
// then the rest as they are written, then its end); Run ▸ Train with N Processes driven through its dialog (mpirun plexus-cli, the
// project's relative dataset path resolved, the run followed to its end, the dialog's mpirun
// arguments remembered), Stop on a longer such run, mpirun failing with its last lines shown, and
// mpirun or plexus-cli missing. Skipped where mpirun is not installed.
#include <QDialogButtonBox>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <qcustomplot.h>

#include "support/cli_support.h"
#include "dashboard.h"
#include "dashboard/training_plots.h"
#include "dashboard/training_progress.h"
#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "main_window.h"
#include "support/app_fixture.h"
#include "support/mlp_fixture.h"
#include "process_run.h"
#include "run_follower.h"
#include "session/run_log.h"
#include "train_processes_dialog.h"

using namespace plexus;
using plexus::app::MainWindow;
using plexus::app::ProcessRun;
using plexus::app::RunFollower;
using plexus::app::TrainProcessesDialog;
using widgets::TrainingPlots;
namespace fs = std::filesystem;

namespace {

// The processes Train with N Processes starts here: one model trained data-parallel.
constexpr int kProcesses = 2;
constexpr int64_t kTrain = 2000, kTest = 100;
constexpr int kTimeoutMs = 120000;

struct Window : testing::TestWindow {
  Window() {
    showError = [this](const QString& title, const QString& text) { errors << title + ": " + text; };
  }
  TrainingPlots* plots() const { return dashboard()->plots(); }
  widgets::TrainingProgress* progress() const { return dashboard()->progress(); }
  // The run the dashboard shows last (the one followed).
  TrainingPlots::RunInfo lastRun() const { return plots()->runInfo(plots()->runIds().back()); }
  int lastRunEpochs() const { return plots()->graph(plots()->runIds().back(), TrainingPlots::Series::TrainLoss)->dataCount(); }
  bool busy() const { return processes()->isRunning() || follower()->isFollowing(); }

  // Run ▸ Train with N Processes, answered through its dialog as a person would.
  TrainProcessesDialog* openDialog() {
    trainProcessesAction()->trigger();
    for (TrainProcessesDialog* d : findChildren<TrainProcessesDialog*>())
      if (d->isVisible()) return d;
    return nullptr;
  }
  void train(TrainProcessesDialog* dialog, int processes, const QString& extra) {
    QSpinBox* box = dialog->processesBox();
    box->setFocus();
    QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(box, QString::number(processes));
    QLineEdit* edit = dialog->extraEdit();
    edit->clear();
    QTest::keyClicks(edit, extra);
    QPushButton* go = dialog->buttons()->findChild<QPushButton*>(QStringLiteral("trainButton"));
    QTest::mouseClick(go, Qt::LeftButton);
  }
};

std::string readAll(const QString& file) {
  std::ifstream in(file.toStdString(), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

int linesWith(const QString& file, const std::string& what) {
  const std::string text = readAll(file);
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

class TestAppFollow : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_, long_project_;

  QString path(const QString& name) const { return dir_.filePath(name); }

  // A project of the MLP on the generated digits, by the relative path "tiny" (next to it).
  QString writeProject(const QString& name, int64_t hidden, int64_t epochs) const {
    graph::Graph g = testing::mlp_graph("tiny", {{"fc1", hidden}, {"fc2", 10}});
    g.training.epochs = epochs;
    g.training.batch_size = 50;
    g.training.lr = 0.05;
    graph::save_project(path(name).toStdString(), g);
    return path(name);
  }

 private slots:
  void initTestCase() {
    if (QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty()) QSKIP("mpirun is not installed");
    testing::isolate_app(path(QStringLiteral("recovery")));
    // The processes this suite starts are MPI ranks: Open MPI does not free all it allocates, so
    // under AddressSanitizer their leak check would only report Open MPI (this process keeps its own).
    const QByteArray asan = qgetenv("ASAN_OPTIONS");
    qputenv("ASAN_OPTIONS", asan.isEmpty() ? QByteArray("detect_leaks=0") : asan + ":detect_leaks=0");
    data::write_synthetic_digits(fs::path(dir_.path().toStdString()) / "tiny", kTrain, kTest);
    project_ = writeProject(QStringLiteral("mlp.plexus"), 32, 3);
    long_project_ = writeProject(QStringLiteral("long.plexus"), 32, 100000);
  }

  // plexus-cli trains; the window follows its folder from the middle of the run on.
  void aRunThatPlexusCliWritesIsFollowedLive() {
    constexpr int kEpochs = 12;
    // Wide enough that an epoch takes a while: the run is caught before its end.
    const QString project = writeProject(QStringLiteral("wide.plexus"), 1024, kEpochs);
    const QString run = path(QStringLiteral("cli-run")), log = run + "/metrics.jsonl";
    QProcess cli;
    cli.start(plexus::testing::cli_path(), {QStringLiteral("train"), project, QStringLiteral("--run-dir"), run,
                           QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--quiet")});
    QVERIFY(cli.waitForStarted());
    // Held after its first epoch, so what the window finds is a run in the middle.
    QTRY_VERIFY_WITH_TIMEOUT(linesWith(log, "\"event\":\"epoch\"") >= 1, kTimeoutMs);
    ::kill(pid_t(cli.processId()), SIGSTOP);
    const int written = linesWith(log, "\"event\":\"epoch\"");
    QVERIFY2(written < kEpochs, "the run ended before it could be caught");

    Window w;
    QSignalSpy epochs(w.follower(), &RunFollower::epochEnded);
    QVERIFY(w.followRunFolder(run));
    QCOMPARE(epochs.size(), written);  // the first read shows what is there
    QVERIFY(w.follower()->isFollowing());
    QCOMPARE(w.lastRun().name, QStringLiteral("cli-run"));
    QVERIFY(w.lastRun().active);
    QCOMPARE(w.lastRunEpochs(), written);
    QCOMPARE(w.progress()->statusText(), QStringLiteral("Training"));
    QCOMPARE(w.progress()->epochBar()->maximum(), kEpochs);
    // One run at a time: nothing else starts while it is followed; Stop would stop following.
    QVERIFY(!w.trainAction()->isEnabled());
    QVERIFY(!w.trainProcessesAction()->isEnabled());
    QVERIFY(!w.followAction()->isEnabled());
    QVERIFY(w.stopAction()->isEnabled());
    QCOMPARE(w.stopAction()->text(), QStringLiteral("Stop &Following"));
    QVERIFY(!w.startTraining());
    // Held, its log has gone quiet: the dashboard says so instead of "Training".
    w.follower()->setStaleAfter(300);
    QTRY_VERIFY_WITH_TIMEOUT(w.progress()->statusText().startsWith(QStringLiteral("No update for")), 10000);
    QVERIFY(w.lastRun().active);

    ::kill(pid_t(cli.processId()), SIGCONT);
    QTRY_VERIFY_WITH_TIMEOUT(!w.follower()->isFollowing(), kTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(cli.state(), QProcess::NotRunning, kTimeoutMs);
    QCOMPARE(cli.exitCode(), 0);
    QCOMPARE(epochs.size(), kEpochs);
    for (int i = 0; i < kEpochs; ++i) QCOMPARE(epochs[i].at(0).value<train::EpochEnd>().epoch, i + 1);
    QCOMPARE(w.lastRunEpochs(), kEpochs);
    QCOMPARE(w.plots()->pointCount(w.plots()->runIds().back()), linesWith(log, "\"event\":\"batch\""));
    QCOMPARE(w.progress()->statusText(), QStringLiteral("Completed"));
    QCOMPARE(w.progress()->epochBar()->value(), kEpochs);
    QCOMPARE(w.lastRun().status, QStringLiteral("completed"));
    QVERIFY(w.lastRun().origin.continuable);  // its final checkpoint was seen
    QVERIFY(w.dashboard()->testText().startsWith(QStringLiteral("Test set, final model: accuracy")));
    QVERIFY(w.trainAction()->isEnabled());
    QVERIFY(w.followAction()->isEnabled());
    QVERIFY(w.errors.isEmpty());
  }

  void followingWhatIsNotARunFolderSaysWhy() {
    Window w;
    QVERIFY(!w.followRunFolder(dir_.path()));
    QCOMPARE(w.errors.size(), 1);
    QVERIFY2(w.errors.front().contains(QStringLiteral("not a run folder")), qPrintable(w.errors.front()));
    QVERIFY(!w.follower()->isFollowing());
  }

  void trainWithProcessesFollowsTheirRunToTheEnd() {
    Window w;
    QVERIFY(w.openFile(project_));
    TrainProcessesDialog* dialog = w.openDialog();
    QVERIFY(dialog);
    QCOMPARE(dialog->processesBox()->value(), 2);  // the default
    QCOMPARE(dialog->threadsBox()->value(), ProcessRun::defaultThreads(2));
    w.train(dialog, kProcesses, QStringLiteral("--bind-to none"));
    QTRY_VERIFY_WITH_TIMEOUT(!dialog->isVisible(), 10000);
    QVERIFY(w.errors.isEmpty());
    QVERIFY(w.processes()->isRunning());
    QVERIFY(w.follower()->isFollowing());
    QVERIFY(!w.trainAction()->isEnabled());
    QCOMPARE(w.stopAction()->text(), QStringLiteral("&Stop"));
    const QString run = w.follower()->folder();
    // Among the project's runs, named as the app's are.
    QCOMPARE(QFileInfo(run).absolutePath(), path(QStringLiteral("mlp.runs")));
    QCOMPARE(w.lastRun().name, QStringLiteral("Run 1"));

    QTRY_VERIFY_WITH_TIMEOUT(!w.busy(), kTimeoutMs);
    QVERIFY2(w.dashboard()->errorText().isEmpty(), qPrintable(w.dashboard()->errorText()));
    QCOMPARE(w.progress()->statusText(), QStringLiteral("Completed"));
    QCOMPARE(w.lastRun().status, QStringLiteral("completed"));
    QCOMPARE(w.lastRunEpochs(), 3);
    QVERIFY(w.trainAction()->isEnabled());
    // The project as it was handed over, its dataset where this window finds it.
    const graph::Graph launched = graph::load_project((run + "/launch.plexus").toStdString());
    QCOMPARE(QString::fromStdString(launched.dataset.path), QDir::cleanPath(path(QStringLiteral("tiny"))));
    const session::RunRecord record = session::read_run(run.toStdString());
    QCOMPARE(record.status, session::RunStatus::Completed);
    QVERIFY(record.has_final);

    // The mpirun arguments are remembered; the command says everything that runs.
    dialog = w.openDialog();
    QVERIFY(dialog);
    QCOMPARE(dialog->extraEdit()->text(), QStringLiteral("--bind-to none"));
    const QString command = dialog->commandText();
    QVERIFY2(command.contains(QStringLiteral("-np 2 ")), qPrintable(command));
    QVERIFY(command.contains(QStringLiteral("--bind-to none ")));
    QVERIFY(command.contains(QStringLiteral(" train ")));
    QVERIFY(command.contains(QStringLiteral("/launch.plexus --run-dir ")));
    QVERIFY(command.contains(QStringLiteral("--threads %1").arg(ProcessRun::defaultThreads(2))));
    QCOMPARE(command.contains(QStringLiteral("--allow-run-as-root")), ::geteuid() == 0);
    dialog->reject();
    QVERIFY(!w.busy());
  }

  // Stop: every rank ends after the same step, rank 0 keeps the final checkpoint, and the
  // dashboard says the run stopped.
  void stopEndsTheProcessesAndTheRunShowsItStopped() {
    Window w;
    QVERIFY(w.openFile(long_project_));
    TrainProcessesDialog* dialog = w.openDialog();
    QVERIFY(dialog);
    w.train(dialog, kProcesses, {});
    QVERIFY(w.processes()->isRunning());
    const int run = w.plots()->runIds().back();
    QTRY_VERIFY_WITH_TIMEOUT(w.plots()->pointCount(run) > 0, kTimeoutMs);  // it trains
    w.stopAction()->trigger();
    QVERIFY(w.processes()->stopRequested());
    QTRY_VERIFY_WITH_TIMEOUT(!w.busy(), ProcessRun::kStopGraceMs + ProcessRun::kKillAfterMs + 10000);
    QVERIFY2(w.progress()->statusText().startsWith(QStringLiteral("Stopped")), qPrintable(w.progress()->statusText()));
    QCOMPARE(w.plots()->runInfo(run).status, QStringLiteral("stopped"));
    QVERIFY(w.dashboard()->errorText().isEmpty());
    const std::vector<fs::path> runs = session::list_runs(long_project_.toStdString());  // newest first
    QVERIFY(!runs.empty());
    const session::RunRecord record = session::read_run(runs.front());
    QCOMPARE(record.status, session::RunStatus::Stopped);
    QVERIFY(record.has_final);
    QVERIFY(w.trainAction()->isEnabled());
  }

  void mpirunFailingShowsItsLastLines() {
    Window w;
    QVERIFY(w.openFile(project_));
    w.train(w.openDialog(), kProcesses, QStringLiteral("--no-such-option"));
    QTRY_VERIFY_WITH_TIMEOUT(!w.busy(), kTimeoutMs);
    const QString error = w.dashboard()->errorText();
    QVERIFY2(error.startsWith(QStringLiteral("The training processes failed (mpirun exited with status")), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("--no-such-option")), qPrintable(error));  // what mpirun said
    QCOMPARE(w.progress()->statusText(), QStringLiteral("Failed"));
    QVERIFY(w.trainAction()->isEnabled());
  }

  void missingProgramsAreNamedAndNothingStarts() {
    Window w;
    QVERIFY(w.openFile(project_));
    const QStringList before = QDir(path(QStringLiteral("mlp.runs"))).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    const QByteArray cli = qgetenv("PLEXUS_CLI");
    qputenv("PLEXUS_CLI", path(QStringLiteral("no-such-cli")).toUtf8());
    w.train(w.openDialog(), kProcesses, {});
    qputenv("PLEXUS_CLI", cli);
    QCOMPARE(w.errors.size(), 1);
    QVERIFY2(w.errors.front().contains(QStringLiteral("plexus-cli was not found at")), qPrintable(w.errors.front()));

    const QByteArray path_variable = qgetenv("PATH");
    qputenv("PATH", path(QStringLiteral("empty")).toUtf8());
    w.train(w.openDialog(), kProcesses, {});
    qputenv("PATH", path_variable);
    QCOMPARE(w.errors.size(), 2);
    QVERIFY2(w.errors.back().contains(QStringLiteral("mpirun was not found")), qPrintable(w.errors.back()));

    QVERIFY(!w.busy());
    QVERIFY(w.trainAction()->isEnabled());
    // No run folder is left behind.
    QCOMPARE(QDir(path(QStringLiteral("mlp.runs"))).entryList(QDir::Dirs | QDir::NoDotAndDotDot), before);
  }
};

QTEST_MAIN(TestAppFollow)
#include "test_app_follow.moc"
