// Runs that survive kill -9: `plexus-cli train --run-dir DIR` killed with SIGKILL at random
// moments (some while its `last` checkpoint is being written), then `--resume DIR`, itself
// killed again now and then, until the run completes. Every resumed run ends with the
// uninterrupted run's weights and optimizer state bit for bit, and its metrics.jsonl holds every
// event once with the same figures. Also what --resume refuses.
#include <unistd.h>

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QScopeGuard>
#include <QtTest>
#include <filesystem>
#include <thread>

#include "data/synthetic_digits.h"
#include "graph/dataset_params.h"
#include "graph/project.h"
#include "session/resume.h"
#include "support/cli_support.h"
#include "support/mlp_fixture.h"
#include "support/same_run.h"
#include "support/work_dir.h"

using namespace plexus;
namespace fs = std::filesystem;
using testing::CliResult;
using testing::run_cli;

namespace {

QString at(const fs::path& p) { return QString::fromStdString(p.string()); }

// A temporary of an atomic save of `last` is in `folder`: the save is under way.
bool saving_last(const fs::path& folder) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(folder, ec))
    if (e.path().filename().string().rfind(".last.safetensors.tmp-", 0) == 0) return true;
  return false;
}

}  // namespace

class TestResumeCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;
  fs::path project_;
  qint64 whole_ms_ = 0;  // the uninterrupted run's time

  QStringList train_args(const fs::path& folder) const {
    return {"train", at(project_), "--run-dir", at(folder), "--quiet", "--threads", "1"};
  }
  static QStringList resume_args(const fs::path& folder) {
    return {"train", "--resume", at(folder), "--quiet", "--threads", "1"};
  }

  // Starts plexus-cli with `args` and kills it with SIGKILL: after `delay_ms`, or (`mid_save`)
  // as soon as it is seen saving `last`. True when it was killed (false: it had ended).
  bool start_and_kill(const QStringList& args, const fs::path& folder, qint64 delay_ms, bool mid_save, bool& hit_save) {
    QProcess p;
    p.start(testing::cli_path(), args);
    if (!p.waitForStarted()) qFatal("cannot start plexus-cli");
    QElapsedTimer t;
    t.start();
    hit_save = false;
    while (p.state() != QProcess::NotRunning && t.elapsed() < (mid_save ? 3 * whole_ms_ : delay_ms)) {
      if (mid_save && saving_last(folder)) {
        hit_save = true;
        break;
      }
      if (!mid_save) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      p.waitForFinished(0);
    }
    const bool running = p.state() != QProcess::NotRunning;
    p.kill();  // SIGKILL
    p.waitForFinished(10000);
    return running;
  }

 private slots:
  void initTestCase() {
    QVERIFY(work_.isValid());
    data::write_synthetic_digits(work_ / "digits", 2000, 60);
    // Dropout (the default generator) and shifted pictures (augmentation), Adam, a schedule.
    graph::Graph g = testing::mlp_graph((work_ / "digits").string(), {{"fc1", 128}, {"fc2", 10}});
    g.nodes.push_back({"drop", "Dropout", "drop", {{"p", 0.2}}, {}});
    for (graph::Edge& e : g.edges)
      if (e.from.node == "act") e.from.node = "drop";
    g.edges.push_back({{"act", "output"}, {"drop", "input"}});
    graph::set_dataset_value(g.dataset, "augment.shift", int64_t(1));
    g.training.optimizer = "adam";
    g.training.lr = 0.005;
    g.training.batch_size = 20;
    g.training.epochs = 3;
    g.training.seed = 11;
    g.training.schedule = "step";
    g.training.step_size = 1;
    g.training.checkpoint_minutes = 0.0002;  // 12 ms: `last` every few batches
    project_ = work_ / "mlp.plexus";
    graph::save_project(project_, g);

    QElapsedTimer t;
    t.start();
    const CliResult whole = run_cli(train_args(work_ / "whole"));
    whole_ms_ = t.elapsed();
    QVERIFY2(whole.code == 0, qPrintable(whole.out + whole.err));
    qInfo("the uninterrupted run took %lld ms", (long long)whole_ms_);
    QVERIFY(fs::exists(work_ / "whole" / session::kLastCheckpointFile));
  }

  // 20 runs killed at random moments (every other one while it saves `last`), each resumed,
  // and killed again now and then, until it completes as the uninterrupted run did.
  void killedRunsResumeToTheUninterruptedRun() {
    QRandomGenerator random(46);
    // Mostly after the start-up (reading the data), while it trains.
    const auto moment = [&] { return whole_ms_ / 4 + qint64(random.bounded(whole_ms_ * 3 / 4 + 1)); };
    int mid_save = 0, before_first_save = 0, resumes = 0;
    for (int trial = 0; trial < 20; ++trial) {
      const fs::path folder = work_ / ("trial" + std::to_string(trial));
      bool hit = false;
      bool killed = start_and_kill(train_args(folder), folder, moment(), trial % 2 == 1, hit);
      mid_save += hit;
      // Killed before its first `last`: nothing to resume (said, naming the folder), the run starts again.
      while (killed && !fs::exists(folder / session::kLastCheckpointFile)) {
        ++before_first_save;
        const CliResult r = run_cli(resume_args(folder));
        QVERIFY2(r.code != 0 && r.err.contains(at(folder)), qPrintable(r.out + r.err));
        fs::remove_all(folder);
        killed = start_and_kill(train_args(folder), folder, moment(), false, hit);
      }
      // Every third trial is killed once more while it resumes.
      if (killed && trial % 3 == 0) {
        ++resumes;
        start_and_kill(resume_args(folder), folder, moment(), trial % 2 == 1, hit);
        mid_save += hit;
      }
      // Killed after its end line (while the process ended): the run has completed, and says so.
      if (killed && session::read_run(folder).status == session::RunStatus::Completed) {
        const CliResult r = run_cli(resume_args(folder));
        QVERIFY2(r.code != 0 && r.err.contains("has completed"), qPrintable(r.out + r.err));
        killed = false;
      }
      if (killed) {
        ++resumes;
        const CliResult r = run_cli(resume_args(folder));
        QVERIFY2(r.code == 0, qPrintable(QString("trial %1: %2%3").arg(trial).arg(r.out, r.err)));
        QVERIFY2(r.out.contains("resuming the run in"), qPrintable(r.out));
      }
      const std::string weights =
          testing::tensor_difference(work_ / "whole" / "final.safetensors", folder / "final.safetensors");
      QVERIFY2(weights.empty(), qPrintable(QString("trial %1: %2").arg(trial).arg(QString::fromStdString(weights))));
      const std::string log = testing::log_difference(work_ / "whole", folder);
      QVERIFY2(log.empty(), qPrintable(QString("trial %1: %2").arg(trial).arg(QString::fromStdString(log))));
    }
    qInfo("%d resumes; %d kills while `last` was being saved; %d runs killed before their first save", resumes,
          mid_save, before_first_save);
    QVERIFY2(mid_save > 0, "no trial was killed while it saved `last`");
  }

  // A real full disk: a 3 MB tmpfs holds `best` and `last` of this model (1.2 MB each with
  // Adam's state) but not a third copy while one is replaced. The run stops naming the file
  // and the reason; once the file system is larger, --resume completes it bit for bit.
  void aRealFullDiskStopsTheRunAndItResumes() {
    const fs::path disk = work_ / "small-disk";
    fs::create_directories(disk);
    const QString mount = at(disk);
    if (geteuid() != 0 || QProcess::execute("mount", {"-t", "tmpfs", "-o", "size=3m", "tmpfs", mount}) != 0)
      QSKIP("skipped: cannot mount a small tmpfs here (needs root and mount rights)");
    const auto unmount = qScopeGuard([&] { QProcess::execute("umount", {mount}); });
    const fs::path folder = disk / "run";
    const CliResult full = run_cli(train_args(folder));
    QVERIFY2(full.code != 0, qPrintable(full.out + full.err));
    QVERIFY2(full.err.contains("No space left on device") && full.err.contains(at(folder)), qPrintable(full.err));
    QVERIFY(session::find_resume_point(folder));  // the `last` before is whole
    QCOMPARE(QProcess::execute("mount", {"-o", "remount,size=64m", mount}), 0);
    const CliResult r = run_cli(resume_args(folder));
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    const std::string weights =
        testing::tensor_difference(work_ / "whole" / "final.safetensors", folder / "final.safetensors");
    QVERIFY2(weights.empty(), weights.c_str());
    const std::string log = testing::log_difference(work_ / "whole", folder);
    QVERIFY2(log.empty(), log.c_str());
  }

  // SIGTERM (as Ctrl-C) stops the run after the current batch, saving `last` there; the stopped
  // run resumes to the uninterrupted run's end.
  void aStoppedRunResumes() {
    const fs::path folder = work_ / "stopped";
    QProcess p;
    p.start(testing::cli_path(), train_args(folder));
    QVERIFY(p.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(fs::exists(folder / session::kLastCheckpointFile), 60 * 1000);
    p.terminate();  // SIGTERM
    QVERIFY(p.waitForFinished(60 * 1000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    const std::optional<session::ResumePoint> point = session::find_resume_point(folder);
    QVERIFY(point);
    QCOMPARE(point->status, session::RunStatus::Stopped);
    const CliResult r = run_cli(resume_args(folder));
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("stopped at epoch"), qPrintable(r.out));
    const std::string weights = testing::tensor_difference(work_ / "whole" / "final.safetensors", folder / "final.safetensors");
    QVERIFY2(weights.empty(), weights.c_str());
    const std::string log = testing::log_difference(work_ / "whole", folder);
    QVERIFY2(log.empty(), log.c_str());
  }

  void aCompletedRunIsNotResumed() {
    const CliResult r = run_cli(resume_args(work_ / "whole"));
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("has completed: nothing to resume"), qPrintable(r.err));
  }

  void optionsThatChangeTheRunAreRefused() {
    const CliResult r = run_cli({"train", "--resume", at(work_ / "whole"), "--lr", "0.1"});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("--lr cannot change them"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestResumeCli)
#include "test_resume_cli.moc"
