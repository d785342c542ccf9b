// `plexus-cli sample` end to end: a checkpoint of a tiny text model (Embedding -> Linear over a
// five-symbol vocabulary), written with the metadata a run writes (session/run_folder.cpp), is
// sampled with the project's text file at hand and after it is deleted (the vocabulary is the
// checkpoint's own); a checkpoint of another kind of project is refused with a clear message.
#include <QtTest/QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <filesystem>

#include "graph/compiler.h"
#include "graph/project.h"
#include "session/trained_model.h"
#include "test_support.h"
#include "train/checkpoint.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

struct Result {
  int code = -1;
  QString out, err;
};

Result run_cli(const QStringList& args) {
  QProcess p;
  p.start(PLEXUS_CLI, args);
  const bool finished = p.waitForFinished(60 * 1000);
  return {finished && p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

const std::vector<std::string> kSymbols{"\n", "a", "e", "n", "\xC3\xA9"};  // the last: é
constexpr int64_t kSeqLen = 8;

std::string text_project(const std::string& data) {
  return R"({"format": 1, "nodes": [
      {"id": "in", "type": "Input", "name": "in", "params": {}, "position": [0, 0]},
      {"id": "embed", "type": "Embedding", "name": "embed", "params": {"num_embeddings": 5, "embedding_dim": 8}, "position": [200, 0]},
      {"id": "out", "type": "Linear", "name": "out", "params": {"out_features": 5}, "position": [400, 0]},
      {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}, "position": [600, 0]}],
    "edges": [{"from": ["in", "x"], "to": ["embed", "input"]}, {"from": ["embed", "output"], "to": ["out", "input"]},
              {"from": ["out", "output"], "to": ["loss", "input"]}, {"from": ["in", "y"], "to": ["loss", "target"]}],
    "dataset": {"kind": "text", "path": ")" + data + R"(", "seq_len": 8},
    "training": {"epochs": 1, "seed": 3}})";
}

// A run checkpoint as a run writes one: the project inside, then the model metadata.
void write_checkpoint(const fs::path& file, const graph::Graph& g, const graph::DatasetInfo& info,
                      const std::vector<std::string>& class_names) {
  const graph::CompiledGraph c = graph::compile(g, info, g.training.seed);
  train::Metadata meta{{"project", graph::serialize_project(g)}};
  session::write_model_metadata(meta, info, {{0.f}, {1.f}}, class_names);
  train::save_checkpoint(file, *c.model, nullptr, meta);
}

}  // namespace

class TestSampleCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  fs::path work_;

  QString at(const fs::path& p) const { return QString::fromStdString(p.string()); }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    work_ = tmp_.path().toStdString();
  }

  void samples_need_only_the_checkpoint() {
    const fs::path data = work_ / "names.txt";
    testing::write_raw(data, "anna\nene\nnena\n\xC3\xA9""an\n");
    const fs::path ckpt = work_ / "final.safetensors";
    try {
      const graph::Graph g = graph::parse_project(text_project(data.string()), "names.plexus");
      write_checkpoint(ckpt, g, {{kSeqLen}, {kSeqLen}, 5}, kSymbols);
    } catch (const std::exception& e) {
      // The "text" dataset kind (its seq_len) and cross-entropy over [N, T, V] come with the
      // sequence models' other parts.
      QSKIP(qPrintable(QString("a text model does not compile here yet: ") + e.what()));
    }

    const QStringList base{"sample", "--checkpoint", at(ckpt)};
    const Result five = run_cli(base + QStringList{"--count", "5", "--seed", "4"});
    QVERIFY2(five.code == 0, qPrintable(five.err));
    QCOMPARE(five.out.count('\n'), 5);  // one a line: each stops at its newline
    QCOMPARE(run_cli(base + QStringList{"--count", "5", "--seed", "4"}).out, five.out);  // seeded

    // Greedy: the same text every time; a prime starts every sample.
    const Result greedy = run_cli(base + QStringList{"--count", "3", "--temperature", "0", "--prime", "\xC3\xA9n", "--json"});
    QVERIFY2(greedy.code == 0, qPrintable(greedy.err));
    const QStringList lines = greedy.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    const QString first = QJsonDocument::fromJson(lines[0].toUtf8()).object()["text"].toString();
    QVERIFY2(first.startsWith(QString::fromUtf8("\xC3\xA9n")), qPrintable(first));
    for (int i = 0; i < 3; ++i) {
      const QJsonObject o = QJsonDocument::fromJson(lines[i].toUtf8()).object();
      QCOMPARE(o["sample"].toInt(), i + 1);
      QCOMPARE(o["text"].toString(), first);
    }

    // Without the text file: the vocabulary is the checkpoint's.
    fs::remove(data);
    const Result without = run_cli(base + QStringList{"--count", "5", "--seed", "4"});
    QVERIFY2(without.code == 0, qPrintable(without.err));
    QCOMPARE(without.out, five.out);

    const Result bad = run_cli(base + QStringList{"--prime", "anx"});
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.err.contains("prime") && bad.err.contains("character 2") && bad.err.contains("'x'"), qPrintable(bad.err));
  }

  void another_kind_of_project_is_refused() {
    const graph::Graph g = graph::load_project(fs::path(PLEXUS_SOURCE_DIR) / "examples" / "mnist_mlp.plexus");
    const fs::path ckpt = work_ / "mnist.safetensors";
    write_checkpoint(ckpt, g, {{1, 28, 28}, {}, 10}, {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"});
    const Result r = run_cli({"sample", "--checkpoint", at(ckpt)});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(at(ckpt) + " is a model of a 'mnist' project") && r.err.contains("text dataset"),
             qPrintable(r.err));
    const Result usage = run_cli({"sample"});
    QCOMPARE(usage.code, 2);
    QVERIFY2(usage.err.contains("sample needs --checkpoint FILE"), qPrintable(usage.err));
  }
};

QTEST_APPLESS_MAIN(TestSampleCli)
#include "test_sample_cli.moc"
