// End to end through plexus-cli: examples/mnist_mlp.plexus trained briefly into a run folder,
// the first 20 test images saved as PNGs, and the model used on them two ways that share only
// the trained model: `predict` on the pictures (data::read_image and image_to_input, the
// normalisation in TrainedModel::forward) and `eval --predictions` on the test split (the IDX
// reader, the normalisation in the loader, train::evaluate). Both must give every image the same
// class, with the same probability to 1e-5.
//
// The data: $PLEXUS_MNIST_DIR, else data/mnist of the source tree, else (no download here) the
// synthetic digits of data/synthetic_digits.h written into a temporary folder.
//
// Then typed text: a sequence classifier of labelled texts (support/text_fixture.h) trained on
// files written here, and `predict --text` giving each text what core's TrainedModel gives its
// encoding (data::encode_typed_text), the line for people and its refusals.
#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/cli_support.h"
#include "data/idx.h"
#include "data/image_file.h"
#include "data/synthetic_digits.h"
#include "ops/ops.h"
#include "session/data_pipeline.h"
#include "session/trained_model.h"
#include "graph/project.h"
#include "support/text_fixture.h"
#include "support/work_dir.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

constexpr int kImages = 20;

using Result = testing::CliResult;
using testing::at;
using testing::run_cli;

bool has_mnist(const fs::path& dir) {
  return fs::exists(dir / "t10k-images-idx3-ubyte") && fs::exists(dir / "train-images-idx3-ubyte");
}

}  // namespace

class TestPredictCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;
  fs::path data_;

 private slots:
  void initTestCase() {
    QVERIFY(work_.isValid());
    const char* env = std::getenv("PLEXUS_MNIST_DIR");
    data_ = env && *env ? fs::path(env) : fs::path(PLEXUS_SOURCE_DIR) / "data" / "mnist";
    if (!has_mnist(data_)) {
      data_ = work_ / "digits";
      data::write_synthetic_digits(data_, 3000, 500);
      qInfo("MNIST not found: using synthetic digits in %s", data_.c_str());
    }
  }

  void predict_agrees_with_eval_on_the_same_images() {
    // $PLEXUS_PREDICT_CHECKPOINT: a checkpoint of examples/mnist_mlp.plexus trained elsewhere (the
    // GUI's run in check_gui_model_use.cmake); else one trained here.
    const char* given = std::getenv("PLEXUS_PREDICT_CHECKPOINT");
    const fs::path run = work_ / "run", checkpoint = given && *given ? fs::path(given) : run / "final.safetensors";
    const QString project = QString(PLEXUS_SOURCE_DIR) + "/examples/mnist_mlp.plexus";
    if (!given || !*given) {
      const Result trained = run_cli({"train", project, "--data", at(data_), "--epochs", "1", "--train-subset", "2000",
                                      "--run-dir", at(run), "--quiet"});
      QVERIFY2(trained.code == 0, qPrintable(trained.err));
    }
    QVERIFY(fs::exists(checkpoint));

    // The test split's first images, as PNGs.
    const data::IdxArray images = data::read_idx((data_ / "t10k-images-idx3-ubyte").string());
    QCOMPARE(images.dims, (std::vector<int64_t>{images.dims[0], 28, 28}));
    QStringList pictures;
    for (int i = 0; i < kImages; ++i) {
      data::Image im;
      im.width = im.height = 28;
      im.channels = 1;
      im.pixels.assign(images.bytes.begin() + i * 784, images.bytes.begin() + (i + 1) * 784);
      const fs::path png = work_ / ("test-" + std::to_string(i) + ".png");
      data::write_png(png, im);
      pictures << at(png);
    }

    // predict, with the checkpoint alone (it holds its project) and with the project FILE.
    const Result predicted = run_cli(QStringList{"predict", "--checkpoint", at(checkpoint), "--json"} + pictures);
    QVERIFY2(predicted.code == 0, qPrintable(predicted.err));
    const Result with_file = run_cli(QStringList{"predict", project, "--checkpoint", at(checkpoint), "--json"} + pictures);
    QVERIFY2(with_file.code == 0, qPrintable(with_file.err));
    QCOMPARE(with_file.out, predicted.out);
    const QStringList lines = predicted.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), kImages);

    // eval --predictions on the test split.
    const fs::path csv = work_ / "predictions.csv";
    const Result evaluated =
        run_cli({"eval", "--checkpoint", at(checkpoint), "--data", at(data_), "--predictions", at(csv)});
    QVERIFY2(evaluated.code == 0, qPrintable(evaluated.err));
    QFile file(at(csv));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QStringList rows = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(rows.value(0), QString("index,label,predicted,probability"));
    QCOMPARE(rows.size(), int(images.dims[0]) + 1);

    int agreeing = 0;
    for (int i = 0; i < kImages; ++i) {
      const QJsonObject p = QJsonDocument::fromJson(lines[i].toUtf8()).object();
      QCOMPARE(p["input"].toString(), pictures[i]);
      const QJsonArray classes = p["classes"].toArray();
      QCOMPARE(classes.size(), 3);  // the default --top
      const QStringList e = rows[i + 1].split(',');
      QCOMPARE(e.size(), 4);
      QCOMPARE(e[0].toInt(), i);
      const int predict_class = classes[0].toObject()["class"].toInt();
      const double predict_p = classes[0].toObject()["probability"].toDouble();
      QVERIFY2(predict_class == e[2].toInt(),
               qPrintable(QString("image %1: predict says %2, eval %3").arg(i).arg(predict_class).arg(e[2])));
      QVERIFY2(std::abs(predict_p - e[3].toDouble()) <= 1e-5,
               qPrintable(QString("image %1: probability %2 from predict, %3 from eval").arg(i).arg(predict_p).arg(e[3])));
      agreeing += predict_class == e[1].toInt();
    }
    // A trained model, not a constant one: most of these images get their label.
    QVERIFY2(agreeing >= kImages / 2, qPrintable(QString("%1 of %2 images classified right").arg(agreeing).arg(kImages)));
  }

  void typedTextsAreClassifiedAsCoreClassifiesThem() {
    const fs::path dir = work_ / "texts", run = dir / "run", checkpoint = run / "final.safetensors";
    testing::write_text_classes(dir / "words", 80);
    const fs::path project = dir / "words.plexus";
    std::ofstream(project) << testing::text_classes_project_json("words", 8);
    const Result trained = run_cli({"train", at(project), "--run-dir", at(run), "--quiet"});
    QVERIFY2(trained.code == 0, qPrintable(trained.err));

    const QStringList texts{"AbBa", "fgh", "jiffi", "abcdeabcdeabcdeXYZ"};  // the last: cut to the model's length
    QStringList args{"predict", "--checkpoint", at(checkpoint), "--json"};
    for (const QString& t : texts) args << "--text" << t;
    const Result predicted = run_cli(args);
    QVERIFY2(predicted.code == 0, qPrintable(predicted.err));
    const QStringList lines = predicted.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), texts.size());

    const session::TrainedModel m = session::load_trained_model(graph::load_project(project), checkpoint, {dir});
    const std::optional<data::TextEncoding> encoding = session::text_encoding(m);
    QVERIFY(encoding && encoding->lowercase);
    for (int i = 0; i < texts.size(); ++i) {
      const QJsonObject p = QJsonDocument::fromJson(lines[i].toUtf8()).object();
      QCOMPARE(p["text"].toString(), texts[i]);
      const Tensor x = data::encode_typed_text(*encoding, texts[i].toStdString()).unsqueeze(0);
      const std::vector<float> expected = softmax(m.forward(x), 1).to_vector();
      const QJsonArray classes = p["classes"].toArray();
      QCOMPARE(classes.size(), 2);  // both: fewer than --top's 3
      for (const QJsonValue& c : classes) {
        const int k = c.toObject()["class"].toInt();
        QVERIFY2(std::abs(c.toObject()["probability"].toDouble() - expected[size_t(k)]) <= 1e-5, qPrintable(texts[i]));
        QCOMPARE(c.toObject()["name"].toString(), QString::fromStdString(m.class_names[size_t(k)]));
      }
      if (i < 3) {  // a trained model: the letters tell
        const QString top = classes[0].toObject()["name"].toString();
        QCOMPARE(top, QString(texts[i].toLower().at(0) < 'f' ? "long" : "short"));
      }
    }

    // For people: the text quoted, then its classes.
    const Result plain = run_cli({"predict", "--checkpoint", at(checkpoint), "--text", "fgh", "--top", "1"});
    QVERIFY2(plain.code == 0, qPrintable(plain.err));
    static const QRegularExpression line(R"(^"fgh": short \(\d+\.\d\d%\)\n$)");
    QVERIFY2(line.match(plain.out).hasMatch(), qPrintable(plain.out));

    // A character the model was not trained on is named; texts and files do not mix; a picture
    // is not a text.
    const Result unknown = run_cli({"predict", "--checkpoint", at(checkpoint), "--text", "abz"});
    QCOMPARE(unknown.code, 1);
    QVERIFY2(unknown.err.contains("'z', character 3 of \"abz\", is not one of the 10 characters the model was "
                                  "trained on: 'a'–'j'"),
             qPrintable(unknown.err));
    const Result both = run_cli({"predict", "--checkpoint", at(checkpoint), "--text", "abc", at(dir / "words" / "long.txt")});
    QCOMPARE(both.code, 2);
    QVERIFY2(both.err.contains("either INPUT files or --text"), qPrintable(both.err));
    const Result file = run_cli({"predict", "--checkpoint", at(checkpoint), at(dir / "words" / "long.txt")});
    QCOMPARE(file.code, 2);
    QVERIFY2(file.err.contains("give them with --text TEXT"), qPrintable(file.err));
  }
};

QTEST_GUILESS_MAIN(TestPredictCli)
#include "test_predict_cli.moc"
