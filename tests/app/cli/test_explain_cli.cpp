// `plexus-cli explain` end to end: LeNet trained briefly on synthetic digits into a run folder,
// one of its test digits saved as a PNG and explained; the heat map's picture, the values file
// and the JSON against what the core computes for the same model and input; a text model's
// attributions per character; the command's refusals.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest/QtTest>
#include <filesystem>

#include "data/image_file.h"
#include "data/synthetic_digits.h"
#include "explain/attribution.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "session/data_pipeline.h"
#include "session/trained_model.h"
#include "support/cli_support.h"
#include "support/text_fixture.h"
#include "support/work_dir.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

using Result = testing::CliResult;
using testing::at;
using testing::run_cli;

QJsonObject json_of(const Result& r) { return QJsonDocument::fromJson(r.out.toUtf8()).object(); }

}  // namespace

class TestExplainCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;
  fs::path checkpoint_, digit_;

 private slots:
  void initTestCase() {
    QVERIFY(work_.isValid());
    data::write_synthetic_digits(work_ / "digits", 600, 100);
    const Result trained =
        run_cli({"train", QString(PLEXUS_SOURCE_DIR) + "/examples/mnist_lenet.plexus", "--data", at(work_ / "digits"),
                 "--epochs", "1", "--train-subset", "300", "--run-dir", at(work_ / "run"), "--quiet"});
    QVERIFY2(trained.code == 0, qPrintable(trained.err));
    checkpoint_ = work_ / "run" / "final.safetensors";
    // A digit as a PNG: the first test picture, its pixels as bytes.
    const session::TrainedModel m =
        session::load_trained_model(*session::project_in_checkpoint(checkpoint_), checkpoint_);
    const graph::DatasetSplits splits = graph::open_dataset(
        graph::resolve_dataset(m.project.dataset, {}), m.project.training.seed, m.project.training.validation_fraction);
    const std::vector<float> raw = splits.test->get(0).input.to_vector();
    data::Image picture{28, 28, 1, {}};
    for (float v : raw) picture.pixels.push_back(uint8_t(std::lround(v * 255)));
    digit_ = work_ / "digit.png";
    data::write_png(digit_, picture);
  }

  void gradCamWritesTheHeatMapItsValuesAndJson() {
    const Result r =
        run_cli({"explain", "--checkpoint", at(checkpoint_), at(digit_), "--method", "gradcam", "--node", "conv2",
                 "--out", at(work_ / "heat.png"), "--values", at(work_ / "heat.safetensors"), "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject o = json_of(r);
    QCOMPARE(o["method"].toString(), QString("gradcam"));
    QCOMPARE(o["node"].toString(), QString("conv2"));
    const int target = o["class"].toInt();
    QCOMPARE(o["name"].toString(), QString::number(target));
    // 28 pixels enlarged 8 times: at least 224.
    const data::Image heat = data::read_image(work_ / "heat.png");
    QCOMPARE(heat.width, int64_t(224));
    QCOMPARE(heat.height, int64_t(224));
    QCOMPARE(heat.channels, int64_t(3));
    const io::SafetensorsFile values = io::load_safetensors(work_ / "heat.safetensors");
    QCOMPARE(values.find("values")->shape(), (Shape{8, 8}));
    QCOMPARE(values.find("heat")->shape(), (Shape{28, 28}));
    QCOMPARE(values.find("input")->shape(), (Shape{1, 28, 28}));

    // The same numbers as the core's on the same model and prepared picture.
    const session::TrainedModel m =
        session::load_trained_model(*session::project_in_checkpoint(checkpoint_), checkpoint_);
    const Tensor x = session::picture_input(data::read_image(digit_), m.project.dataset, m.info.input_shape);
    QCOMPARE(values.find("input")->to_vector(), x.to_vector());
    const explain::Attribution a =
        explain::attribute(m, x, {.method = explain::AttributionMethod::GradCam, .node = "conv2"});
    QCOMPARE(a.target, int64_t(target));
    QCOMPARE(values.find("values")->to_vector(), a.values.to_vector());
  }

  void theOtherMethodsAndInputs() {
    // Integrated gradients for people: the score, the baseline's and the sum.
    const Result ig = run_cli({"explain", "--checkpoint", at(checkpoint_), at(digit_), "--method",
                               "integrated-gradients", "--class", "3", "--out", at(work_ / "ig.png")});
    QVERIFY2(ig.code == 0, qPrintable(ig.err));
    QVERIFY2(ig.out.startsWith("integrated-gradients, class 3 (3), score ") &&
                 ig.out.contains(", attributions sum to ") && ig.out.endsWith(": wrote " + at(work_ / "ig.png") + "\n"),
             qPrintable(ig.out));
    // --example I: the test split's digit, the one saved as the PNG.
    const Result example = run_cli(
        {"explain", "--checkpoint", at(checkpoint_), "--example", "0", "--out", at(work_ / "s0.png"), "--json"});
    const Result file =
        run_cli({"explain", "--checkpoint", at(checkpoint_), at(digit_), "--out", at(work_ / "s1.png"), "--json"});
    QVERIFY2(example.code == 0 && file.code == 0, qPrintable(example.err + file.err));
    QCOMPARE(json_of(example)["class"], json_of(file)["class"]);
    QCOMPARE(json_of(example)["score"].toDouble(), json_of(file)["score"].toDouble());
  }

  void aTextModelsAttributionsArePerCharacter() {
    const fs::path checkpoint = work_ / "names.safetensors";
    testing::write_text_checkpoint(checkpoint);
    const Result r =
        run_cli({"explain", "--checkpoint", at(checkpoint), "--text", "anne", "--method", "gradient-x-input", "--out",
                 at(work_ / "text.png"), "--values", at(work_ / "text.safetensors"), "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(io::load_safetensors(work_ / "text.safetensors").find("values")->shape(), (Shape{4}));
    const data::Image strip = data::read_image(work_ / "text.png");
    QCOMPARE(strip.width, int64_t(4 * 24));  // a cell a character
    QCOMPARE(strip.height, int64_t(24));
  }

  void refusals_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    QTest::newRow("no --out") << QStringList{"DIGIT"} << 2 << "explain needs --out";
    QTest::newRow("unknown method") << QStringList{"DIGIT", "--method", "lime", "--out", "OUT"} << 2
                                    << "--method must be saliency, gradient-x-input, smoothgrad";
    QTest::newRow("two inputs") << QStringList{"DIGIT", "--example", "1", "--out", "OUT"} << 2
                                << "explain needs one input: an image file INPUT, --text TEXT or --example I";
    QTest::newRow("attention without node")
        << QStringList{"DIGIT", "--method", "attention", "--out", "OUT"} << 2 << "--method attention needs --node";
    QTest::newRow("unknown node") << QStringList{"DIGIT", "--method", "gradcam", "--node", "conv9", "--out", "OUT"} << 1
                                  << "the model has no node 'conv9' (its nodes: conv1, relu1";
    QTest::newRow("not a picture node") << QStringList{"DIGIT", "--method", "gradcam", "--node", "fc2", "--out", "OUT"}
                                        << 1 << "node 'fc2' gives [10]";
    QTest::newRow("class out of range") << QStringList{"DIGIT", "--class", "10", "--out", "OUT"} << 1
                                        << "class 10 is out of range: the model scores 10 outputs (0 to 9)";
    QTest::newRow("text for pictures") << QStringList{"--text", "seven", "--out", "OUT"} << 1
                                       << "typed text is for a model of a text: this model's dataset is 'mnist'";
    QTest::newRow("example out of range") << QStringList{"--example", "100", "--out", "OUT"} << 1
                                          << "--example 100 is out of range: the test split has 100 examples (0 to 99)";
    QTest::newRow("attention of a convolution")
        << QStringList{"DIGIT", "--method", "attention", "--node", "conv1", "--out", "OUT"} << 1
        << "node 'conv1' (Conv2d) is not a MultiheadAttention";
  }

  void refusals() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    args.replaceInStrings("DIGIT", at(digit_));
    args.replaceInStrings("OUT", at(work_ / "refused.png"));
    const Result r = run_cli(QStringList{"explain", "--checkpoint", at(checkpoint_)} + args);
    QCOMPARE(r.code, code);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(!fs::exists(work_ / "refused.png"));
  }
};

QTEST_GUILESS_MAIN(TestExplainCli)
#include "test_explain_cli.moc"
