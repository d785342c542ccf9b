// `plexus-cli sweep` end to end on generated digits: a random sweep runs its trials two at a
// time as processes and writes its table (printed, results.csv, results.json); a sweep killed
// with SIGKILL mid-way goes on (`sweep FILE` finds it) without rerunning its finished trials,
// whose files stay as they were; under `mpirun -np 2` both ranks run trials.
#include <signal.h>
#include <unistd.h>

#include <QElapsedTimer>
#include <QProcess>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "session/run_log.h"
#include "support/cli_support.h"
#include "support/mlp_fixture.h"
#include "support/mpirun.h"
#include "support/work_dir.h"
#include "sweep/sweep_folder.h"

using namespace plexus;
namespace fs = std::filesystem;
using testing::at;
using testing::CliResult;
using testing::run_cli;

namespace {

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every file of a trial's folder with its bytes: what a rerun would change.
std::map<std::string, std::string> files_of(const fs::path& folder) {
  std::map<std::string, std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(folder))
    if (e.is_regular_file()) out[e.path().filename().string()] = read_text(e.path());
  return out;
}

}  // namespace

class TestSweepCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;
  fs::path project_;

 private slots:
  void initTestCase() {
    QVERIFY(work_.isValid());
    data::write_synthetic_digits(work_ / "digits", 2000, 100);
    graph::Graph g = testing::mlp_graph((work_ / "digits").string(), {{"fc1", 16}, {"fc2", 10}});
    g.training.optimizer = "adam";
    g.training.lr = 0.01;
    g.training.batch_size = 30;
    g.training.epochs = 2;
    g.sweep.method = "random";
    g.sweep.trials = 4;
    g.sweep.parallel = 2;
    g.sweep.threads = 1;
    g.sweep.parameters = {{"lr", {}, 1e-3, 1e-1, "log"},
                          {"batch_size", {int64_t(20), int64_t(30)}},
                          {"fc1.out_features", {}, 8, 32, "linear"}};
    project_ = work_ / "mlp.plexus";
    graph::save_project(project_, g);
  }

  void aSweepRunsItsTrialsTwoAtATimeAndWritesItsTable() {
    const fs::path folder = work_ / "grid";
    const CliResult r = run_cli({"sweep", at(project_), "--sweep-dir", at(folder)});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("4 trials (random), 2 at a time x 1 threads"), qPrintable(r.out));
    QVERIFY2(r.out.contains("trial 4/4 completed") || r.out.contains("trial 3/4 completed"), qPrintable(r.out));
    QVERIFY2(r.out.contains("* best validation_accuracy: trial "), qPrintable(r.out));
    const sweep::SweepState s = sweep::read_sweep(folder);
    QVERIFY(s.complete());
    for (const sweep::TrialState& t : s.trials) {
      QCOMPARE(t.status, sweep::TrialStatus::Completed);
      QCOMPARE(t.epochs_done, 2);
      QVERIFY(t.score.has_value());
      // The trial trained with its own values: its run folder's project says so.
      const graph::Graph trained = graph::load_project(t.folder / session::kRunProjectFile);
      QCOMPARE(trained.training.batch_size, std::get<int64_t>((*t.assignment)[1].value));
      QCOMPARE(std::get<int64_t>(trained.find("fc1")->params.at("out_features")),
               std::get<int64_t>((*t.assignment)[2].value));
      QVERIFY(!trained.sweep.defined());
    }
    // Two at a time: trial 2 was taken before trial 1 finished.
    QVERIFY(fs::last_write_time(sweep::trial_folder(folder, 2) / sweep::kTrialFile) <
            fs::last_write_time(sweep::trial_folder(folder, 1) / session::kRunLogFile));
    const std::string csv = read_text(folder / "results.csv");
    QCOMPARE(std::count(csv.begin(), csv.end(), '\n'), 5L);
    QVERIFY2(csv.starts_with("trial,status,lr,batch_size,fc1.out_features,score,"), csv.c_str());
    const nlohmann::json j = nlohmann::json::parse(read_text(folder / "results.json"));
    QCOMPARE(j["best"].get<int64_t>(), int64_t(s.trials[*sweep::best_trial(s)].index));
    QCOMPARE(j["trials"].size(), size_t(4));
    // --json prints results.json's text; a complete sweep is not run again.
    const CliResult again = run_cli({"sweep", "--resume", at(folder), "--json"});
    QVERIFY2(again.code == 0, qPrintable(again.out + again.err));
    QCOMPARE(again.out.toStdString(), read_text(folder / "results.json"));
  }

  void aKilledSweepGoesOnWithoutRerunningFinishedTrials() {
    // Longer trials, so that the kill lands while trial 2 trains even on a loaded machine; one at
    // a time, so that trial 1 has finished by then.
    graph::Graph g = graph::load_project(project_);
    g.training.epochs = 40;
    g.sweep.trials = 3;
    const fs::path project = work_ / "long.plexus";
    graph::save_project(project, g);
    QProcess p;
    p.start(testing::cli_path(), {"sweep", at(project), "--parallel", "1"});
    QVERIFY(p.waitForStarted());
    QElapsedTimer t;
    t.start();
    fs::path folder;
    while (t.elapsed() < 5 * 60 * 1000 && p.state() != QProcess::NotRunning) {
      p.waitForFinished(20);
      if (folder.empty()) {
        const fs::path sweeps = work_ / "long.runs" / "sweeps";
        if (fs::exists(sweeps))
          for (const fs::directory_entry& e : fs::directory_iterator(sweeps)) folder = e.path();
        continue;
      }
      // Trial 2 has trained an epoch (and saved its last checkpoint) and not ended.
      const fs::path second_log = sweep::trial_folder(folder, 2) / session::kRunLogFile;
      const std::string log = fs::exists(second_log) ? read_text(second_log) : "";
      if (log.find("\"epoch\",") != std::string::npos && log.find("\"finished\"") == std::string::npos) break;
    }
    QVERIFY2(p.state() != QProcess::NotRunning, "the sweep ended before it could be killed mid-way");
    ::kill(pid_t(p.processId()), SIGKILL);
    QVERIFY(p.waitForFinished(10000));
    const sweep::SweepState killed = sweep::read_sweep(folder);
    QCOMPARE(killed.trials[0].status, sweep::TrialStatus::Completed);
    QCOMPARE(killed.trials[1].status, sweep::TrialStatus::Interrupted);
    QCOMPARE(killed.trials[2].status, sweep::TrialStatus::Pending);
    // Its trial died with it: the log stops growing.
    const fs::path second = sweep::trial_folder(folder, 2);
    const std::string log_then = read_text(second / session::kRunLogFile);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    QCOMPARE(read_text(second / session::kRunLogFile), log_then);
    const std::map<std::string, std::string> first_files = files_of(sweep::trial_folder(folder, 1));

    const CliResult r = run_cli({"sweep", at(project), "--parallel", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("going on with the unfinished sweep in " + at(folder)), qPrintable(r.out));
    QVERIFY2(!r.out.contains("trial 1/3"), qPrintable(r.out));  // not run again
    const sweep::SweepState s = sweep::read_sweep(folder);
    QVERIFY(s.complete());
    QCOMPARE(files_of(sweep::trial_folder(folder, 1)), first_files);
    QCOMPARE(s.trials[1].attempts, 2);
    QCOMPARE(s.trials[1].status, sweep::TrialStatus::Completed);
    QCOMPARE(s.trials[1].epochs_done, 40);
  }

  void whatTheSweepRefuses() {
    graph::Graph g = graph::load_project(project_);
    g.sweep = {};
    const fs::path plain = work_ / "plain.plexus";
    graph::save_project(plain, g);
    CliResult r = run_cli({"sweep", at(plain)});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("defines no sweep"), qPrintable(r.err));
    r = run_cli({"sweep", at(project_), "--resume", at(work_ / "grid")});
    QCOMPARE(r.code, 2);
    r = run_cli({"sweep", "--resume", at(work_.path())});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("not a sweep folder"), qPrintable(r.err));
  }

  void underMpirunEveryRankRunsTrials() {
    if (QString(PLEXUS_MPIEXEC).isEmpty()) QSKIP("skipped: this build has no MPI (install libopenmpi-dev)");
    const fs::path folder = work_ / "mpi";
    QStringList args = testing::mpirun_flags(2);
    args << testing::cli_path() << "sweep" << at(project_) << "--sweep-dir" << at(folder) << "--threads" << "1";
    QProcess p;
    p.setProcessEnvironment(testing::rank_environment());
    p.start(PLEXUS_MPIEXEC, args);
    QVERIFY(p.waitForFinished(10 * 60 * 1000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput()) + QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitCode() == 0, qPrintable(out));
    QVERIFY2(out.contains("1 at a time x 1 threads, 2 ranks"), qPrintable(out));
    QVERIFY2(out.contains("* best validation_accuracy"), qPrintable(out));
    const sweep::SweepState s = sweep::read_sweep(folder);
    QVERIFY(s.complete());
    std::set<std::string> processes;
    for (const sweep::TrialState& t : s.trials) processes.insert(t.claimed_by);
    QCOMPARE(processes.size(), size_t(2));
  }
};

QTEST_GUILESS_MAIN(TestSweepCli)
#include "test_sweep_cli.moc"
