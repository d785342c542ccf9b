// plexus-cli diff A B, end to end: project files and run folders compared, the lines graph::describe
// gives (or "no differences"), --json's object, and the exit statuses of unreadable input and bad
// usage.
#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <filesystem>
#include <fstream>

#include "support/cli_support.h"
#include "support/diff_fixture.h"
#include "graph/diff.h"
#include "session/run_log.h"
#include "support/work_dir.h"

using namespace plexus;
namespace fs = std::filesystem;

using testing::at;
using testing::run_cli;

class TestDiffCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString a_, b_;

  // The lines graph::describe gives for run A against run B.
  static QString described() {
    const graph::Graph a = testing::diff_before(), b = testing::diff_after();
    QStringList lines;
    for (const std::string& line : graph::describe(graph::diff(a, b), a, b)) lines << QString::fromStdString(line);
    return lines.join('\n') + '\n';
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    a_ = tmp_.filePath("a.plexus");
    b_ = tmp_.filePath("b.plexus");
    std::ofstream(a_.toStdString()) << testing::kDiffBefore;
    std::ofstream(b_.toStdString()) << testing::kDiffAfter;
  }

  void projectFilesPrintEveryDifference() {
    const testing::CliResult r = run_cli({"diff", a_, b_});
    QCOMPARE(r.code, 0);
    QCOMPARE(r.out, described());
    QVERIFY(r.out.contains("Linear 'hidden': out_features 128 → 64\n"));
    QCOMPARE(run_cli({"diff", a_, a_}).out, QString("no differences\n"));
  }

  void runFoldersCompareTheProjectTheyTrained() {
    const fs::path dir = tmp_.path().toStdString();
    for (const auto& [name, graph] : {std::pair{"run-a", testing::diff_before()}, {"run-b", testing::diff_after()}}) {
      session::RunLog log(dir / name, graph, session::RunHeader{});
      log.end(train::RunResult{});
    }
    const testing::CliResult r = run_cli({"diff", at(dir / "run-a"), at(dir / "run-b")});
    QCOMPARE(r.code, 0);
    QCOMPARE(r.out, described());
    // A run folder against a project file.
    QCOMPARE(run_cli({"diff", at(dir / "run-b"), b_}).out, QString("no differences\n"));
  }

  void jsonHoldsEachDifference() {
    const testing::CliResult r = run_cli({"diff", a_, b_, "--json"});
    QCOMPARE(r.code, 0);
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["summary"].toString(), QString::fromStdString(graph::summary(
                                          graph::diff(testing::diff_before(), testing::diff_after()))));
    QCOMPARE(j["same_structure"].toBool(true), false);
    QCOMPARE(j["added"].toArray(), (QJsonArray{QJsonObject{{"id", "drop2"}, {"type", "Dropout"}, {"name", "drop2"}}}));
    QCOMPARE(j["removed"].toArray(), (QJsonArray{QJsonObject{{"id", "drop"}, {"type", "Dropout"}, {"name", "drop"}}}));
    const QJsonArray changed = j["changed"].toArray();
    QCOMPARE(changed.size(), 2);
    QCOMPARE(changed[0].toObject()["name_after"].toString(), QString("hidden"));
    QCOMPARE(changed[0].toObject()["params"].toArray(),
             (QJsonArray{QJsonObject{{"name", "out_features"}, {"before", "128"}, {"after", "64"}}}));
    QCOMPARE(changed[1].toObject()["type_before"].toString(), QString("ReLU"));
    QCOMPARE(changed[1].toObject()["type_after"].toString(), QString("LeakyReLU"));
    QCOMPARE(j["edges_added"].toArray()[0].toObject(),
             (QJsonObject{{"from", QJsonArray{"act", "output"}}, {"to", QJsonArray{"drop2", "input"}}}));
    QCOMPARE(j["edges_removed"].toArray().size(), 2);
    QCOMPARE(j["settings"].toArray().last().toObject(),
             (QJsonObject{{"name", "training.lr"}, {"before", "0.1"}, {"after", "0.01"}}));
    QCOMPARE(j["settings"].toArray().size(), 4);
  }

  void unreadableInputAndBadUsage() {
    testing::CliResult r = run_cli({"diff", a_, tmp_.filePath("missing.plexus")});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("missing.plexus"), qPrintable(r.err));
    QDir(tmp_.path()).mkdir("empty");
    r = run_cli({"diff", tmp_.filePath("empty"), b_});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("is not a run folder: it holds no project.plexus"), qPrintable(r.err));
    r = run_cli({"diff", a_});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("diff needs two projects or run folders"), qPrintable(r.err));
    QCOMPARE(run_cli({"diff", a_, b_, "--quiet"}).code, 2);
    QCOMPARE(run_cli({"diff", a_, b_, b_}).code, 2);
  }
};

QTEST_GUILESS_MAIN(TestDiffCli)
#include "test_diff_cli.moc"
