// `plexus-cli lr-find` end to end on the housing example (500 rows of a CSV file, batches of 4):
// it prints a table and the suggestion, writes every step as CSV and JSON that agree with what it
// printed, leaves the project file as it was, and refuses a split too small for the ramp (exit 1)
// and a ramp too short (bad usage, exit 2), saying what and where.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest/QtTest>
#include <filesystem>

#include "support/cli_support.h"
#include "support/test_support.h"
#include "support/work_dir.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

using testing::at;
using testing::run_cli;

const fs::path kProject = fs::path(PLEXUS_SOURCE_DIR) / "examples" / "housing_regression.plexus";

}  // namespace

class TestLrFindCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;

 private slots:
  void initTestCase() { QVERIFY(work_.isValid()); }

  void printsTheSuggestionAndWritesTheCurve() {
    const std::string project_before = testing::read_all(kProject);
    const fs::path csv = work_ / "curve.csv", json = work_ / "curve.json";
    const testing::CliResult r = run_cli({"lr-find", at(kProject), "--batch-size", "4", "--steps", "40", "--threads",
                                          "1", "--csv", at(csv), "--json", at(json)});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains(QStringLiteral("steps from lr 1e-07 to 10 (adam, batch 4)")), qPrintable(r.out));
    QVERIFY2(r.out.contains(QStringLiteral("<- suggested")), qPrintable(r.out));
    const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("suggested lr: (\\S+) ")).match(r.out);
    QVERIFY2(m.hasMatch(), qPrintable(r.out));
    const double printed = m.captured(1).toDouble();

    QFile jf(at(json));
    QVERIFY(jf.open(QIODevice::ReadOnly));
    const QJsonObject doc = QJsonDocument::fromJson(jf.readAll()).object();
    const double suggested = doc["suggested_lr"].toDouble();
    QCOMPARE(QString::number(suggested, 'g', 3).toDouble(), printed);  // printed to 3 digits
    QCOMPARE(doc["planned_steps"].toInt(), 40);
    const QJsonArray points = doc["points"].toArray();
    QVERIFY(points.size() >= 8 && points.size() <= 40);
    QCOMPARE(points[0].toObject()["lr"].toDouble(), 1e-7);
    bool found = false;  // the suggestion is one of the steps
    for (const QJsonValue& p : points) found = found || p.toObject()["lr"].toDouble() == suggested;
    QVERIFY(found);

    const QStringList lines = QString::fromStdString(testing::read_all(csv)).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.first(), QStringLiteral("step,lr,loss,smoothed"));
    QCOMPARE(lines.size(), int(points.size()) + 1);
    QVERIFY2(lines[1].startsWith(QStringLiteral("1,1e-07,")), qPrintable(lines[1]));
    QCOMPARE(testing::read_all(kProject), project_before);  // the project is left alone

    // The same seed, the same curve.
    const testing::CliResult again =
        run_cli({"lr-find", at(kProject), "--batch-size", "4", "--steps", "40", "--threads", "1"});
    QCOMPARE(again.code, 0);
    QVERIFY(again.out.contains(m.captured(0)));
  }

  void refusesWhatCannotRampWithTheReason() {
    const testing::CliResult few = run_cli({"lr-find", at(kProject), "--batch-size", "128"});
    QCOMPARE(few.code, 1);
    QVERIFY2(few.err.contains(QStringLiteral("lr finder: the training split has 3 batches of 128")),
             qPrintable(few.err));
    const testing::CliResult short_ramp = run_cli({"lr-find", at(kProject), "--steps", "3"});
    QCOMPARE(short_ramp.code, 2);
    QVERIFY2(short_ramp.err.contains(QStringLiteral("--steps needs a whole number >= 8, got '3'")),
             qPrintable(short_ramp.err));
    const testing::CliResult no_file = run_cli({"lr-find"});
    QCOMPARE(no_file.code, 2);
    QVERIFY2(no_file.err.contains(QStringLiteral("lr-find needs a project FILE")), qPrintable(no_file.err));
    const testing::CliResult no_weights =
        run_cli({"lr-find", at(kProject), "--batch-size", "4", "--init-from", at(work_ / "missing.safetensors")});
    QCOMPARE(no_weights.code, 1);
    QVERIFY2(no_weights.err.contains(QStringLiteral("missing.safetensors")), qPrintable(no_weights.err));
  }

  // --init-from: the ramp starts from a checkpoint's tensors, and says what it kept.
  void startsFromACheckpoint() {
    const fs::path checkpoint = work_ / "trained.safetensors";
    const testing::CliResult train = run_cli(
        {"train", at(kProject), "--batch-size", "4", "--epochs", "1", "--threads", "1", "--save", at(checkpoint)});
    QVERIFY2(train.code == 0, qPrintable(train.err));
    const testing::CliResult r = run_cli({"lr-find", at(kProject), "--batch-size", "4", "--steps", "40", "--threads",
                                          "1", "--init-from", at(checkpoint)});
    QVERIFY2(r.code == 0 || r.code == 1, qPrintable(r.err));  // 1: a trained model's loss may not fall
    QVERIFY2(r.out.contains(QStringLiteral("initialised from")) && r.out.contains(QStringLiteral("trained.safetensors")),
             qPrintable(r.out));
  }
};

QTEST_MAIN(TestLrFindCli)
#include "test_lr_find_cli.moc"
