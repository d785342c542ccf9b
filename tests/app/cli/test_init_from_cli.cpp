// `plexus-cli train FILE --init-from C` end to end on generated digits: a project whose middle
// layer was widened and whose head was replaced starts from a run's final checkpoint (and from a
// weights file), prints which tensors were kept, reset and ignored, and its run folder records
// where it started. Starting points given twice are a usage error.
#include <QtTest>

#include <filesystem>

#include "support/cli_support.h"
#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "session/run.h"
#include "session/run_log.h"
#include "train/checkpoint.h"
#include "support/mlp_fixture.h"
#include "support/work_dir.h"

using namespace plexus;
namespace fs = std::filesystem;
using testing::at;
using testing::run_cli;

class TestInitFromCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;

 private slots:
  void initTestCase() {
    QVERIFY(work_.isValid());
    data::write_synthetic_digits(work_ / "digits", 200, 40);
    graph::save_project(work_ / "a.plexus", testing::partial_load_mlp((work_ / "digits").string(), 16, "fc3"));
    graph::save_project(work_ / "b.plexus", testing::partial_load_mlp((work_ / "digits").string(), 24, "head"));
  }

  void startsFromTheMatchingTensorsOfACheckpoint() {
    const auto first = run_cli({"train", at(work_ / "a.plexus"), "--quiet", "--run-dir", at(work_ / "run-a")});
    QVERIFY2(first.code == 0, qPrintable(first.out + first.err));
    const fs::path checkpoint = work_ / "run-a" / "final.safetensors";

    const auto second = run_cli({"train", at(work_ / "b.plexus"), "--quiet", "--init-from", at(checkpoint), "--run-dir",
                                 at(work_ / "run-b")});
    QVERIFY2(second.code == 0, qPrintable(second.out + second.err));
    const QString report =
        "initialised from " + at(checkpoint) +
        ": kept 2 tensors (optimizer state of 2); reset fc2.weight ([24, 32] here, [16, 32] in the checkpoint), "
        "fc2.bias ([24] here, [16] in the checkpoint), head.weight ([10, 24] here, none in the checkpoint), head.bias "
        "([10] here, none in the checkpoint); ignored fc3.weight (no such node here), fc3.bias (no such node here)";
    QVERIFY2(second.out.contains(report + "\n"), qPrintable(second.out));

    const session::RunRecord run = session::read_run(work_ / "run-b");
    QCOMPARE(run.header.init_from, fs::absolute(checkpoint).lexically_normal().string());
    QCOMPARE(run.status, session::RunStatus::Completed);
    QVERIFY(!run.notices.empty());
    QCOMPARE(QString::fromStdString(run.notices.front()), report);
  }

  void startsFromAWeightsFile() {
    session::TrainingRun a = session::make_training_run(graph::load_project(work_ / "a.plexus"));
    train::save_weights(work_ / "a-weights.safetensors", *a.compiled.model);
    const auto r = run_cli({"train", at(work_ / "b.plexus"), "--quiet", "--init-from", at(work_ / "a-weights.safetensors")});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("kept 2 tensors; reset fc2.weight ([24, 32] here, [16, 32] in the weights file)"),
             qPrintable(r.out));
  }

  void oneStartingPointAtATime() {
    const auto r = run_cli({"train", at(work_ / "b.plexus"), "--init-from", "x.safetensors", "--resume", "y.safetensors"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--continue, --resume and --init-from each start from a checkpoint: give one of them"),
             qPrintable(r.err));
    const auto missing = run_cli({"train", at(work_ / "b.plexus"), "--init-from", at(work_ / "missing.safetensors")});
    QCOMPARE(missing.code, 1);
    QVERIFY2(missing.err.contains("missing.safetensors"), qPrintable(missing.err));
  }
};

QTEST_GUILESS_MAIN(TestInitFromCli)
#include "test_init_from_cli.moc"
