// `plexus-cli sample` end to end: a checkpoint of a tiny text model (text_fixture.h), written
// with the metadata a run writes, is sampled without its text file (the vocabulary is the
// checkpoint's own); a checkpoint of another kind of project is refused with a clear message.
// Training that project on a small text file reports its losses per character, as a character
// model is judged: nats, bits/char (nats / ln 2) and perplexity (e^nats).
#include <QtTest/QtTest>

#include <QJsonDocument>
#include <QJsonObject>

#include <QRegularExpression>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "support/cli_support.h"
#include "graph/project.h"
#include "support/text_fixture.h"
#include "support/work_dir.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

using Result = testing::CliResult;
using testing::at;
using testing::run_cli;

}  // namespace

class TestSampleCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;

 private slots:
  void initTestCase() { QVERIFY(work_.isValid()); }

  void samples_need_only_the_checkpoint() {
    const fs::path ckpt = work_ / "final.safetensors";
    testing::write_text_checkpoint(ckpt);
    QVERIFY(!fs::exists(work_ / "names.txt"));

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

    const Result bad = run_cli(base + QStringList{"--prime", "anx"});
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.err.contains("prime") && bad.err.contains("character 2") && bad.err.contains("'x'"), qPrintable(bad.err));
  }

  void another_kind_of_project_is_refused() {
    const graph::Graph g = graph::load_project(fs::path(PLEXUS_SOURCE_DIR) / "examples" / "mnist_mlp.plexus");
    const fs::path ckpt = work_ / "mnist.safetensors";
    testing::write_run_checkpoint(ckpt, g, {{1, 28, 28}, {}, 10}, {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"});
    const Result r = run_cli({"sample", "--checkpoint", at(ckpt)});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(at(ckpt) + " is a model of a 'mnist' project") && r.err.contains("text dataset"),
             qPrintable(r.err));
    const Result usage = run_cli({"sample"});
    QCOMPARE(usage.code, 2);
    QVERIFY2(usage.err.contains("sample needs --checkpoint FILE"), qPrintable(usage.err));
  }

  void train_reports_loss_per_character() {
    // Names of the fixture's symbols, one a line.
    std::ofstream names(work_ / "names.txt", std::ios::binary);
    std::mt19937 gen(5);
    const std::vector<std::string> symbols{"a", "e", "n", "\xC3\xA9"};
    for (int i = 0; i < 400; ++i) {
      for (unsigned k = 0, n = 3 + gen() % 4; k < n; ++k) names << symbols[gen() % symbols.size()];
      names << '\n';
    }
    names.close();
    std::ofstream(work_ / "names.plexus") << testing::text_project_json();

    const Result r = run_cli({"train", at(work_ / "names.plexus"), "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QRegularExpression line(
        R"(\| val loss ([0-9.]+) nats \(([0-9.]+) bits/char, perplexity ([0-9.]+)\) next-char acc [0-9.]+%)");
    const QRegularExpressionMatch m = line.match(r.out);
    QVERIFY2(m.hasMatch(), qPrintable(r.out));
    const double nats = m.captured(1).toDouble();
    QVERIFY(std::abs(m.captured(2).toDouble() - nats / std::log(2.0)) < 1e-3);
    QVERIFY(std::abs(m.captured(3).toDouble() - std::exp(nats)) < 0.01 * std::exp(nats));
    QVERIFY2(r.out.contains(QRegularExpression(R"(epoch 1/1: train loss [0-9.]+ nats \([0-9.]+ bits/char, perplexity)")),
             qPrintable(r.out));
  }
};

QTEST_APPLESS_MAIN(TestSampleCli)
#include "test_sample_cli.moc"
