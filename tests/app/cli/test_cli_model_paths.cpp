// `plexus-cli train --model lenet` and `plexus-cli train examples/mnist_lenet.plexus` take one
// way into training (session::make_training_run): with the same seed and options, every batch
// and every epoch has the same loss in their metrics files. Skipped without MNIST in data/mnist.
#include <QtTest/QtTest>

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include <filesystem>

#include "support/cli_support.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

// Every loss of the metrics file, in order: each batch's, each epoch's training and validation
// losses, the test loss.
QList<double> losses(const QString& metrics) {
  QFile f(metrics);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QList<double> out;
  while (!f.atEnd()) {
    const QJsonObject e = QJsonDocument::fromJson(f.readLine()).object();
    const QString event = e["event"].toString();
    if (event == "batch") out.append(e["loss"].toDouble());
    if (event == "epoch") out << e["train_loss"].toDouble() << e["eval_loss"].toDouble();
    if (event == "test") out.append(e["eval_loss"].toDouble());
  }
  return out;
}

}  // namespace

class TestCliModelPaths : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString mnist_;

  // One short run on the first 500 MNIST digits (validated on 2% of the rest), its events in
  // `metrics`.
  testing::CliResult train(const QStringList& what, const QString& metrics) {
    return testing::run_cli(what + QStringList{"--data", mnist_, "--train-subset", "500", "--epochs", "2",
                                                "--batch-size", "50", "--validation-fraction", "0.02", "--seed", "7",
                                                "--quiet", "--metrics", metrics});
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    const fs::path mnist = fs::path(PLEXUS_SOURCE_DIR) / "data" / "mnist";
    if (!fs::exists(mnist / "train-images-idx3-ubyte") || !fs::exists(mnist / "t10k-images-idx3-ubyte"))
      QSKIP("MNIST not in data/mnist (run scripts/fetch-mnist)");
    mnist_ = QString::fromStdString(mnist.string());
  }

  void builtin_lenet_trains_as_its_example_file() {
    const QString builtin = tmp_.filePath("builtin.jsonl"), file = tmp_.filePath("file.jsonl");
    const testing::CliResult a = train({"train", "--model", "lenet"}, builtin);
    QVERIFY2(a.code == 0, qPrintable(a.err));
    const testing::CliResult b = train({"train", QString(PLEXUS_SOURCE_DIR) + "/examples/mnist_lenet.plexus"}, file);
    QVERIFY2(b.code == 0, qPrintable(b.err));
    const QList<double> from_builtin = losses(builtin), from_file = losses(file);
    QCOMPARE(from_builtin.size(), 2 * (10 + 2) + 1);  // 2 epochs of 10 batches, and the test
    QCOMPARE(from_builtin, from_file);
  }
};

QTEST_GUILESS_MAIN(TestCliModelPaths)
#include "test_cli_model_paths.moc"
