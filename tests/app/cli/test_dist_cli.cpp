// Data-parallel training end to end: `mpirun -np N plexus-cli train FILE` on generated digits
// against one process with the same global batch and seed (the same losses, the same accuracy),
// gradient accumulation against one larger batch (the same weights), and the faults: ranks
// started on different projects or datasets refuse, a rank that dies stops the others at once
// naming it, Ctrl-C stops every rank keeping the final checkpoint, and a distributed run
// goes on with another number of processes. Skipped in a build without MPI.
#include <QtTest>

#include <signal.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/cli_support.h"
#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "support/mlp_fixture.h"
#include "support/mpirun.h"
#include "support/same_run.h"
#include "session/resume.h"
#include "session/run_log.h"
#include "support/work_dir.h"

using namespace plexus;
namespace fs = std::filesystem;
using testing::CliResult;
using testing::at;
using testing::mpirun_flags;
using testing::rank_environment;
using testing::run_cli;

namespace {

void start_mpirun(QProcess& p, const QStringList& args) {
  p.setProcessEnvironment(rank_environment());
  p.start(PLEXUS_MPIEXEC, args);
  QVERIFY2(p.waitForStarted(), qPrintable(p.errorString()));
}

CliResult run_mpi(int ranks, const QStringList& cli_args, int timeout_ms = 10 * 60 * 1000) {
  QProcess p;
  p.setProcessEnvironment(rank_environment());
  p.start(PLEXUS_MPIEXEC, mpirun_flags(ranks) << testing::cli_path() << cli_args);
  const bool finished = p.waitForFinished(timeout_ms);
  return {finished && p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

std::vector<nlohmann::json> events(const fs::path& metrics, const std::string& kind) {
  std::vector<nlohmann::json> out;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("event", "") == kind) out.push_back(j);
  }
  return out;
}

std::vector<double> losses(const fs::path& metrics) {
  std::vector<double> out;
  for (const nlohmann::json& b : events(metrics, "batch")) out.push_back(b["loss"].get<double>());
  return out;
}

// The largest |a - b| / max(|b|, 1e-3) over every tensor of two checkpoints ("model.*" only).
double max_weight_difference(const fs::path& a, const fs::path& b) {
  const io::SafetensorsFile fa = io::load_safetensors(a), fb = io::load_safetensors(b);
  double worst = 0;
  int compared = 0;
  for (const auto& [name, t] : fa.tensors) {
    if (name.rfind("model.", 0) != 0) continue;
    const Tensor* u = fb.find(name);
    if (!u) return INFINITY;
    const std::vector<float> x = t.to_vector(), y = u->to_vector();
    if (x.size() != y.size()) return INFINITY;
    for (size_t i = 0; i < x.size(); ++i)
      worst = std::max(worst, std::abs(double(x[i]) - double(y[i])) / std::max(std::abs(double(y[i])), 1e-3));
    ++compared;
  }
  return compared ? worst : INFINITY;
}

// The pid of rank `rank` among mpirun's children (its environment names its rank).
pid_t rank_pid(qint64 mpirun, int rank) {
  std::ifstream children("/proc/" + std::to_string(mpirun) + "/task/" + std::to_string(mpirun) + "/children");
  for (pid_t pid; children >> pid;) {
    std::ifstream env("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
    for (std::string var; std::getline(env, var, '\0');)
      if (var == "OMPI_COMM_WORLD_RANK=" + std::to_string(rank)) return pid;
  }
  return 0;
}

}  // namespace

class TestDistCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;

  fs::path project(const std::string& name, int64_t batch, int64_t epochs = 2) {
    graph::Graph g = testing::mlp_graph((work_ / "digits").string(), {{"fc1", 32}, {"fc2", 10}});
    g.training.optimizer = "adam";
    g.training.lr = 0.01;
    g.training.batch_size = batch;
    g.training.epochs = epochs;
    g.training.seed = 7;
    const fs::path file = work_ / name;
    graph::save_project(file, g);
    return file;
  }

  // Kills rank 1 of the job `p` runs with SIGKILL; the job must end within 30 s, failing and
  // naming the rank. mpirun ends it at once; a survivor left to notice by itself would wait for
  // its rank timeout first.
  void killRankOne(QProcess& p) {
    const pid_t victim = rank_pid(p.processId(), 1);
    QVERIFY(victim > 0);
    QCOMPARE(::kill(victim, SIGKILL), 0);
    QVERIFY2(p.waitForFinished(30 * 1000), "the other rank was still running 30 s after rank 1 died");
    QVERIFY(p.exitCode() != 0);
    const QString said = QString::fromUtf8(p.readAllStandardError() + p.readAllStandardOutput());
    QVERIFY2(said.contains("rank 1"), qPrintable(said));
  }

 private slots:
  void initTestCase() {
    if (QString(PLEXUS_MPIEXEC).isEmpty()) QSKIP("skipped: this build has no MPI (install libopenmpi-dev)");
    QVERIFY(work_.isValid());
    // 1200 training examples: 1080 after the validation split, 11 batches of 100 (the last 80).
    data::write_synthetic_digits(work_ / "digits", 1200, 200);
    data::write_synthetic_digits(work_ / "other-digits", 1300, 200);
  }

  // The same global batch and seed on 1 process and on jobs of 1, 2 and 3 ranks (3: shares of 33/33/34 and a short
  // last batch): the same loss at every step, the same accuracy.
  void ranksTrainLikeOneProcess() {
    const fs::path file = project("mlp.plexus", 100);
    const CliResult one = run_cli({"train", at(file), "--quiet", "--threads", "1", "--metrics", at(work_ / "one.jsonl")});
    QVERIFY2(one.code == 0, qPrintable(one.out + one.err));
    const std::vector<double> reference = losses(work_ / "one.jsonl");
    QCOMPARE(reference.size(), size_t(22));
    const nlohmann::json ref_epoch = events(work_ / "one.jsonl", "epoch").back();
    const nlohmann::json ref_test = events(work_ / "one.jsonl", "test").back();

    for (int ranks : {1, 2, 3}) {  // 1: a job of one rank takes the job's path
      const fs::path metrics = work_ / ("ranks" + std::to_string(ranks) + ".jsonl");
      const CliResult r = run_mpi(ranks, {"train", at(file), "--quiet", "--threads", "1", "--metrics", at(metrics)});
      QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
      const QString said = ranks == 1 ? "data-parallel over 1 process " : QString("data-parallel over %1 processes").arg(ranks);
      QVERIFY2(r.out.contains(said), qPrintable(r.out));
      const std::vector<double> got = losses(metrics);
      QCOMPARE(got.size(), reference.size());  // rank 0 alone wrote the file
      for (size_t i = 0; i < 20; ++i)
        QVERIFY2(std::abs(got[i] - reference[i]) <= 1e-5 * std::abs(reference[i]),
                 qPrintable(QString("%1 ranks, step %2: loss %3 vs %4 alone").arg(ranks).arg(i + 1).arg(got[i], 0, 'g', 9)
                                .arg(reference[i], 0, 'g', 9)));
      const nlohmann::json epoch = events(metrics, "epoch").back(), test = events(metrics, "test").back();
      QVERIFY(std::abs(epoch["eval_accuracy"].get<double>() - ref_epoch["eval_accuracy"].get<double>()) <= 0.001);
      QVERIFY(std::abs(test["eval_accuracy"].get<double>() - ref_test["eval_accuracy"].get<double>()) <= 0.001);
      const double train_loss = ref_epoch["train_loss"].get<double>();
      QVERIFY(std::abs(epoch["train_loss"].get<double>() - train_loss) <= 1e-5 * train_loss);
    }
  }

  // Two batches of 50 per optimizer step give the weights one batch of 100 gives, alone and on
  // two processes; the losses of each pair average to the larger batch's.
  void accumulationEqualsOneLargerBatch() {
    // SGD: Adam's update divides by the gradient's own size, which magnifies the rounding of
    // near-zero gradients summed in another order into relative differences above 1e-5.
    fs::path file = project("acc.plexus", 100, 1);
    graph::Graph g = graph::load_project(file);
    g.training.optimizer = "sgd";
    g.training.lr = 0.1;
    graph::save_project(file, g);
    const CliResult big = run_cli({"train", at(file), "--quiet", "--threads", "1", "--metrics", at(work_ / "big.jsonl"),
                                   "--save", at(work_ / "big.safetensors")});
    QVERIFY2(big.code == 0, qPrintable(big.out + big.err));
    const CliResult small = run_cli({"train", at(file), "--quiet", "--threads", "1", "--batch-size", "50",
                                     "--accumulate-steps", "2", "--metrics", at(work_ / "small.jsonl"), "--save",
                                     at(work_ / "small.safetensors")});
    QVERIFY2(small.code == 0, qPrintable(small.out + small.err));
    QVERIFY2(small.out.contains("gradient accumulation: one optimizer step per 2 batches (100 examples)"), qPrintable(small.out));
    const double alone = max_weight_difference(work_ / "small.safetensors", work_ / "big.safetensors");
    QVERIFY2(alone <= 1e-5, qPrintable(QString("2 x 50 vs 100: weights differ by %1 (relative)").arg(alone)));

    const std::vector<double> l100 = losses(work_ / "big.jsonl"), l50 = losses(work_ / "small.jsonl");
    QCOMPARE(l50.size(), size_t(22));
    QCOMPARE(l100.size(), size_t(11));
    for (size_t k = 0; k < 10; ++k) {  // the last pair is 50 + 30 rows: a weighted mean
      const double pair = (l50[2 * k] + l50[2 * k + 1]) / 2;
      QVERIFY2(std::abs(pair - l100[k]) <= 1e-5 * l100[k], qPrintable(QString("step %1: %2 vs %3").arg(k + 1).arg(pair).arg(l100[k])));
    }

    const CliResult ranks = run_mpi(2, {"train", at(file), "--quiet", "--threads", "1", "--batch-size", "50",
                                        "--accumulate-steps", "2", "--save", at(work_ / "ranks.safetensors")});
    QVERIFY2(ranks.code == 0, qPrintable(ranks.out + ranks.err));
    const double spread = max_weight_difference(work_ / "ranks.safetensors", work_ / "big.safetensors");
    QVERIFY2(spread <= 1e-5, qPrintable(QString("2 ranks x 2 x 50 vs 100: weights differ by %1").arg(spread)));
  }

  // BatchNorm: each rank's own statistics by default (so not one process's losses), the global
  // batch's with sync_batchnorm (one process's losses again).
  void batchNormPerRankOrSynchronised() {
    graph::Graph g = graph::load_project(project("bn.plexus", 100, 1));
    g.nodes.push_back({"bn", "BatchNorm1d", "bn", {}, {}});
    for (graph::Edge& e : g.edges)
      if (e.from.node == "fc1") e.from.node = "bn";
    g.edges.push_back({{"fc1", "output"}, {"bn", "input"}});
    const fs::path file = work_ / "bn.plexus";
    graph::save_project(file, g);
    g.training.sync_batchnorm = true;
    const fs::path synced = work_ / "bn-sync.plexus";
    graph::save_project(synced, g);

    const CliResult one = run_cli({"train", at(file), "--quiet", "--threads", "1", "--metrics", at(work_ / "bn1.jsonl")});
    QVERIFY2(one.code == 0, qPrintable(one.out + one.err));
    const CliResult own = run_mpi(2, {"train", at(file), "--quiet", "--threads", "1", "--metrics", at(work_ / "bn2.jsonl")});
    QVERIFY2(own.code == 0, qPrintable(own.out + own.err));
    const CliResult sync = run_mpi(2, {"train", at(synced), "--quiet", "--threads", "1", "--metrics", at(work_ / "bns.jsonl")});
    QVERIFY2(sync.code == 0, qPrintable(sync.out + sync.err));
    const std::vector<double> ref = losses(work_ / "bn1.jsonl"), per_rank = losses(work_ / "bn2.jsonl"),
                              global = losses(work_ / "bns.jsonl");
    QCOMPARE(per_rank.size(), ref.size());
    QCOMPARE(global.size(), ref.size());
    double apart = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      QVERIFY2(std::abs(global[i] - ref[i]) <= 1e-5 * ref[i],
               qPrintable(QString("step %1: %2 synchronised vs %3 alone").arg(i + 1).arg(global[i]).arg(ref[i])));
      apart = std::max(apart, std::abs(per_rank[i] - ref[i]) / ref[i]);
    }
    QVERIFY2(apart > 1e-4, qPrintable(QString("per-rank statistics gave one process's losses (%1)").arg(apart)));
  }

  void ranksWithDifferentProjectsRefuse() {
    const fs::path a = project("a.plexus", 100), b = project("b.plexus", 60);
    QProcess p;
    QStringList args = mpirun_flags(1) << testing::cli_path() << "train" << at(a) << "--threads" << "1";
    args << ":" << "-np" << "1" << testing::cli_path() << "train" << at(b) << "--threads" << "1";
    start_mpirun(p, args);
    QVERIFY(p.waitForFinished(60 * 1000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY(p.exitCode() != 0);
    QVERIFY2(err.contains("rank 1's project differs from rank 0's"), qPrintable(err));
    QVERIFY2(err.contains("every rank must train the same project"), qPrintable(err));
  }

  void ranksWithDifferentDatasetsRefuse() {
    const fs::path a = project("d.plexus", 100);
    QProcess p;
    QStringList args = mpirun_flags(1) << testing::cli_path() << "train" << at(a) << "--threads" << "1";
    args << ":" << "-np" << "1" << testing::cli_path() << "train" << at(a) << "--threads" << "1" << "--data"
         << at(work_ / "other-digits");
    start_mpirun(p, args);
    QVERIFY(p.waitForFinished(60 * 1000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY(p.exitCode() != 0);
    QVERIFY2(err.contains("rank 1's dataset differs from rank 0's"), qPrintable(err));
  }

  void aDeadRankStopsTheOthers() {
    const fs::path file = project("long.plexus", 20, 100000);
    QProcess p;
    start_mpirun(p, mpirun_flags(2) << testing::cli_path() << "train" << at(file) << "--threads" << "1" << "--metrics"
                                   << at(work_ / "long.jsonl"));
    QTRY_VERIFY_WITH_TIMEOUT(losses(work_ / "long.jsonl").size() >= 5, 60 * 1000);
    killRankOne(p);
  }

  // A rank killed mid-run stops the job within --rank-timeout + 10 s naming it, and --resume
  // under mpirun completes the run (every rank from the `last` rank 0 wrote) with the weights
  // of a 2-process run never stopped.
  void aRunWithADeadRankResumes() {
    fs::path file = project("resumed.plexus", 20, 8);
    graph::Graph g = graph::load_project(file);
    g.training.checkpoint_minutes = 0.0005;  // 30 ms
    graph::save_project(file, g);
    const QStringList args{"train", at(file), "--quiet", "--threads", "1", "--rank-timeout", "20", "--run-dir"};
    const CliResult whole = run_mpi(2, QStringList(args) << at(work_ / "resumed-whole"));
    QVERIFY2(whole.code == 0, qPrintable(whole.out + whole.err));

    const fs::path run = work_ / "resumed-parts";
    QProcess p;
    start_mpirun(p, mpirun_flags(2) << testing::cli_path() << args << at(run));
    QTRY_VERIFY_WITH_TIMEOUT(fs::exists(run / session::kLastCheckpointFile) && losses(run / session::kRunLogFile).size() >= 70,
                             60 * 1000);
    killRankOne(p);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(session::read_run(run).status, session::RunStatus::Incomplete);

    const CliResult resumed = run_mpi(2, {"train", "--resume", at(run), "--quiet", "--threads", "1"});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.out + resumed.err));
    QVERIFY2(resumed.out.contains("resuming the run in"), qPrintable(resumed.out));
    const std::string weights = testing::tensor_difference(work_ / "resumed-whole" / "final.safetensors", run / "final.safetensors");
    QVERIFY2(weights.empty(), weights.c_str());
    const std::string log = testing::log_difference(work_ / "resumed-whole", run);
    QVERIFY2(log.empty(), log.c_str());
  }

  void ctrlCStopsEveryRankKeepingTheFinalCheckpoint() {
    const fs::path file = project("stop.plexus", 20, 100000);
    const fs::path run = work_ / "stopped-run";
    QProcess p;
    start_mpirun(p, mpirun_flags(2) << testing::cli_path() << "train" << at(file) << "--threads" << "1" << "--run-dir" << at(run));
    QTRY_VERIFY_WITH_TIMEOUT(fs::exists(run / session::kRunLogFile) && losses(run / session::kRunLogFile).size() >= 5,
                             60 * 1000);
    QCOMPARE(::kill(pid_t(p.processId()), SIGINT), 0);  // what Ctrl-C in mpirun's terminal sends
    QVERIFY2(p.waitForFinished(30 * 1000), "mpirun still running 30 s after Ctrl-C");
    const session::RunRecord r = session::read_run(run);
    QCOMPARE(r.status, session::RunStatus::Stopped);
    QVERIFY(r.has_final);
  }

  // A 2-process run's checkpoint goes on in one process and in three.
  void goesOnWithAnotherNumberOfProcesses() {
    const fs::path file = project("go-on.plexus", 100, 1);
    const fs::path first = work_ / "run-two";
    const CliResult two = run_mpi(2, {"train", at(file), "--quiet", "--threads", "1", "--run-dir", at(first)});
    QVERIFY2(two.code == 0, qPrintable(two.out + two.err));
    QVERIFY(fs::exists(first / "final.safetensors"));

    const CliResult alone = run_cli({"train", at(file), "--threads", "1", "--continue", at(first), "--run-dir",
                                     at(work_ / "run-alone"), "--metrics", at(work_ / "alone.jsonl")});
    QVERIFY2(alone.code == 0, qPrintable(alone.out + alone.err));
    const CliResult three = run_mpi(3, {"train", at(file), "--threads", "1", "--continue", at(first), "--run-dir",
                                        at(work_ / "run-three"), "--metrics", at(work_ / "three.jsonl")});
    QVERIFY2(three.code == 0, qPrintable(three.out + three.err));
    const std::vector<double> a = losses(work_ / "alone.jsonl"), b = losses(work_ / "three.jsonl");
    QCOMPARE(a.size(), b.size());
    QVERIFY(!a.empty());
    for (size_t i = 0; i < a.size(); ++i) QVERIFY2(std::abs(a[i] - b[i]) <= 1e-5 * a[i], qPrintable(QString::number(i)));
    QCOMPARE(events(work_ / "three.jsonl", "epoch").back()["epoch"].get<int>(), 2);  // numbered on from the first run
  }
};

QTEST_GUILESS_MAIN(TestDistCli)
#include "test_dist_cli.moc"
