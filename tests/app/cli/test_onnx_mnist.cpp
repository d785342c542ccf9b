// ONNX export's acceptance test, the way a user gets there: the MNIST examples (MLP and
// LeNet) trained briefly by `plexus-cli train --run-dir`, exported by `plexus-cli export`, and
// run in ONNX Runtime on the 10,000 MNIST test images, which tests/onnx/run_onnx.js reads from
// the IDX file itself (raw units: pixel / 255). Its logits must be within 1e-4 of Plexus's
// (the trained model's forward pass on the same raw images) and its predictions agree on at
// least 99.9% of the images. Skipped as a whole where node, onnxruntime-node or data/mnist is
// missing (scripts/deps, scripts/fetch-mnist).
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "support/cli_support.h"
#include "data/mnist.h"
#include "graph/project.h"
#include "support/onnx_support.h"

using namespace plexus;
using namespace plexus::testing;

namespace {

const QString kMnist = QStringLiteral(PLEXUS_SOURCE_DIR "/data/mnist");

// Runs plexus-cli in the source tree (the examples name data/mnist relative to it); returns
// its standard output, or fails the test with its messages.
QString cli(const QStringList& args) {
  QProcess p;
  p.setWorkingDirectory(PLEXUS_SOURCE_DIR);
  p.start(plexus::testing::cli_path(), args);
  if (!p.waitForFinished(600000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
    throw std::runtime_error("plexus-cli " + args.join(' ').toStdString() + " failed:\n" +
                             p.readAllStandardError().toStdString());
  return QString::fromUtf8(p.readAllStandardOutput());
}

int64_t argmax(const float* row, int64_t n) { return std::max_element(row, row + n) - row; }

}  // namespace

class TestOnnxMnist : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    if (const std::string why = ort_unavailable(); !why.empty()) QSKIP(why.c_str());
    if (!QFile::exists(kMnist + "/t10k-images-idx3-ubyte"))
      QSKIP("MNIST is not in data/mnist (scripts/fetch-mnist fetches it)");
  }

  void exportedModelMatchesPlexus_data() {
    QTest::addColumn<QString>("project");
    QTest::newRow("mlp") << "examples/mnist_mlp.plexus";
    QTest::newRow("lenet") << "examples/mnist_lenet.plexus";
  }
  void exportedModelMatchesPlexus() {
    QFETCH(QString, project);
    try {
      check(project);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }

 private:
  void check(const QString& project) {
    QTemporaryDir dir;
    const QString run = dir.filePath("run"), onnx = dir.filePath("model.onnx");
    const QString checkpoint = run + "/final.safetensors";
    cli({"train", project, "--epochs", "1", "--train-subset", "2000", "--run-dir", run, "--quiet"});
    const QString wrote = cli({"export", project, "--checkpoint", checkpoint, "--onnx", onnx});
    QVERIFY2(wrote.contains("input  x float32 [N, 1, 28, 28]") && wrote.contains("output logits float32 [N, 10]"),
             qPrintable(wrote));

    // Plexus: the checkpoint loaded as every front end loads it, on the raw test images.
    const std::string source = PLEXUS_SOURCE_DIR;
    const session::TrainedModel model = session::load_trained_model(
        graph::load_project(source + "/" + project.toStdString()), checkpoint.toStdString(), {source + "/examples"});
    const Tensor images = data::MnistDataset(kMnist.toStdString(), data::Split::Test).images();
    const int64_t n = images.size(0), classes = 10;
    std::vector<float> want;
    for (int64_t start = 0; start < n; start += 1000) {
      const std::vector<float> part = model.forward(images.narrow(0, start, std::min<int64_t>(1000, n - start))).to_vector();
      want.insert(want.end(), part.begin(), part.end());
    }

    // ONNX Runtime, 999 images at a time: the batch dimension is free.
    const std::string idx = (kMnist + "/t10k-images-idx3-ubyte").toStdString();
    const OrtOutput got =
        run_ort(onnx.toStdString(), {"--idx-images", idx, "--batch", "999"}, dir.path().toStdString());
    QCOMPARE(got.dims, (std::vector<int64_t>{n, classes}));
    double worst = 0;
    int64_t agree = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float *a = got.values.data() + i * classes, *b = want.data() + i * classes;
      for (int64_t c = 0; c < classes; ++c) worst = std::max(worst, double(std::abs(a[c] - b[c])));
      agree += argmax(a, classes) == argmax(b, classes);
    }
    const double agreement = double(agree) / double(n);
    qInfo("%s: largest logit difference %.3g; predictions agree on %lld of %lld images (%.2f%%)",
          qPrintable(project), worst, (long long)agree, (long long)n, 100 * agreement);
    QVERIFY2(worst <= 1e-4, qPrintable(QString("largest logit difference %1").arg(worst)));
    QVERIFY2(agreement >= 0.999, qPrintable(QString("agreement %1").arg(agreement)));
  }
};

QTEST_GUILESS_MAIN(TestOnnxMnist)
#include "test_onnx_mnist.moc"
