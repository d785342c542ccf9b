// `plexus-cli import-weights FILE WEIGHTS --out W` end to end: a file whose tensors carry another
// model's names ("model.0.weight", PyTorch style) is matched to a project, reported tensor by
// tensor, and written as a Plexus weights file that `train --init-from` takes; a project tensor
// left without weights writes nothing and exits 1 unless --partial; --dry-run writes nothing.
#include <QtTest>
#include <filesystem>

#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "session/run.h"
#include "support/cli_support.h"
#include "support/partial_load_fixture.h"
#include "support/work_dir.h"
#include "train/checkpoint.h"

using namespace plexus;
namespace fs = std::filesystem;
using testing::at;
using testing::run_cli;

class TestImportWeightsCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;
  io::NamedTensors a_;  // project a's initial state, under PyTorch-style names

 private slots:
  void initTestCase() {
    QVERIFY(work_.isValid());
    data::write_synthetic_digits(work_ / "digits", 200, 40);
    graph::save_project(work_ / "a.plexus", testing::partial_load_mlp((work_ / "digits").string(), 16, "fc3"));
    graph::save_project(work_ / "b.plexus", testing::partial_load_mlp((work_ / "digits").string(), 24, "head"));
    // a's tensors as a wrapped nn.Sequential would name them: model.0, model.1, model.2.
    session::TrainingRun a = session::make_training_run(graph::load_project(work_ / "a.plexus"));
    const std::map<std::string, std::string> module{{"fc1", "0"}, {"fc2", "1"}, {"fc3", "2"}};
    for (const auto& [name, t] : a.compiled.model->state()) {
      const size_t dot = name.find('.');
      a_.emplace_back("model." + module.at(name.substr(0, dot)) + name.substr(dot), t.clone());
    }
    io::save_safetensors(work_ / "torch.safetensors", a_);
  }

  void importsACompleteMatchAndTrainsFromIt() {
    const fs::path out = work_ / "a-imported.safetensors";
    const auto r =
        run_cli({"import-weights", at(work_ / "a.plexus"), at(work_ / "torch.safetensors"), "--out", at(out)});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("model.0.weight -> fc1.weight  [32, 784]"), qPrintable(r.out));
    QVERIFY2(r.out.contains("6 matched, 0 shape-mismatched, 0 left out, 0 missing\nwrote 6 imported tensors to "),
             qPrintable(r.out));
    const io::SafetensorsFile written = io::load_safetensors(out);
    QCOMPARE(written.find("fc2.bias")->to_vector(), a_[3].second.to_vector());
    QCOMPARE(written.metadata.at("imported_from"), std::string("torch.safetensors"));
    const auto train = run_cli({"train", at(work_ / "a.plexus"), "--quiet", "--init-from", at(out)});
    QVERIFY2(train.code == 0, qPrintable(train.out + train.err));
    QVERIFY2(train.out.contains("kept 6 tensors"), qPrintable(train.out));
  }

  void writesNothingForAnIncompleteMatchUnlessPartial() {
    // b: fc2 is [24, 32] here, [16, 32] in the file; "head" has no tensors there.
    const fs::path out = work_ / "b-imported.safetensors";
    const QStringList base{"import-weights", at(work_ / "b.plexus"), at(work_ / "torch.safetensors")};
    const auto refused = run_cli(base + QStringList{"--out", at(out)});
    QCOMPARE(refused.code, 1);
    QVERIFY2(refused.out.contains("shape-mismatched by order model.1.weight -> fc2.weight  expected [24, 32], got "
                                  "[16, 32]"),
             qPrintable(refused.out));
    QVERIFY2(refused.err.contains("nothing written"), qPrintable(refused.err));
    QVERIFY(!fs::exists(out));

    const auto dry = run_cli(base + QStringList{"--dry-run", "--json"});
    QCOMPARE(dry.code, 1);
    QVERIFY2(dry.out.contains("\"complete\": false"), qPrintable(dry.out));
    QVERIFY(!fs::exists(out));

    const auto partial = run_cli(base + QStringList{"--out", at(out), "--partial"});
    QVERIFY2(partial.code == 0, qPrintable(partial.out + partial.err));
    graph::Graph b = graph::load_project(work_ / "b.plexus");
    session::TrainingRun run = session::make_training_run(b);
    train::load_weights(out, *run.compiled.model);  // every tensor of b, with its shape
    QCOMPARE(testing::values(*run.compiled.model, "fc1.weight"), a_[0].second.to_vector());
  }

  void usage() {
    const auto r = run_cli({"import-weights", at(work_ / "a.plexus")});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("import-weights needs the project and the weights file"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestImportWeightsCli)
#include "test_import_weights_cli.moc"
