// The Try It page in the real window, offscreen: the MNIST MLP trains on a subset of real MNIST
// while a "1" drawn with the mouse gets live probabilities from the run's weights; after the
// run the last weights stay, and a drawn "1" is a 1; Load Checkpoint… of the run's
// final.safetensors gives what core's TrainedModel gives on the same input (skipped without
// data/mnist, scripts/fetch-mnist: that test is ctest's test_app_tryit_mnist, the others
// test_app_tryit). A picture opened for an image-folder project is prepared
// as its training pictures are (fit, size, colour). A CSV project's model is tried with a form
// of its columns.
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <cmath>
#include <filesystem>

#include "data/csv_format.h"
#include "data/idx.h"
#include "data/table.h"
#include "data/image_file.h"
#include "editor/model/graph_document.h"
#include "graph/project.h"
#include "main_window.h"
#include "ops/ops.h"
#include "predictor.h"
#include "session/data_pipeline.h"
#include "session/trained_model.h"
#include "training_controller.h"
#include "tryit/digit_canvas.h"
#include "tryit/probability_bars.h"
#include "tryit/table_form.h"
#include "tryit/tryit_panel.h"
#include "tryit_page.h"
#include "support/app_fixture.h"
#include "support/draw_digit.h"

using namespace plexus;
using app::MainWindow;
using app::TrainingController;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kTrain = 3000, kTest = 500;

// The first n examples of an MNIST split, as IDX files of their own.
void writeSubset(const fs::path& from, const fs::path& to, const std::string& prefix, int64_t n) {
  for (const char* kind : {"images-idx3-ubyte", "labels-idx1-ubyte"}) {
    const std::string name = prefix + "-" + kind;
    const data::IdxArray all = data::read_idx((from / name).string());
    std::vector<int64_t> dims = all.dims;
    const size_t per_example = all.bytes.size() / size_t(dims[0]);
    dims[0] = n;
    data::write_idx((to / name).string(), all.type, dims,
                    std::vector<uint8_t>(all.bytes.begin(), all.bytes.begin() + std::ptrdiff_t(per_example * size_t(n))));
  }
}

using Window = testing::TestWindow;

}  // namespace

class TestAppTryIt : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_;

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.path() + "/recovery");
    const fs::path mnist = fs::path(PLEXUS_SOURCE_DIR) / "data" / "mnist";
    if (!fs::exists(mnist / "train-images-idx3-ubyte")) return;  // the run's test skips
    const fs::path subset = fs::path(dir_.path().toStdString()) / "mnist";
    fs::create_directories(subset);
    writeSubset(mnist, subset, "train", kTrain);
    writeSubset(mnist, subset, "t10k", kTest);
    // Far longer than the test needs (it stops the run after three live outputs), so however
    // fast the machine, the run spans several of the controller's deliveries: live weights are
    // asked for with each delivered epoch and twice a second.
    project_ = testing::save_example_mlp(dir_.filePath("mnist_mlp.plexus"), "mnist", 1000, 20);
  }

  void liveWeightsThenLastWeightsThenACheckpoint() {
    if (project_.isEmpty()) QSKIP("MNIST not in data/mnist (scripts/fetch-mnist)");
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project_));
    app::TryItPage* page = w.tryIt();
    widgets::TryItPanel* panel = page->panel();
    QVERIFY(!panel->hasModel());
    QCOMPARE(panel->inputShape(), Shape({1, 28, 28}));  // from the project, before any model

    QSignalSpy finished(w.training(), &TrainingController::finished);
    QSignalSpy checkpoints(w.training(), &TrainingController::checkpointSaved);
    QVERIFY(w.startTraining());
    QTest::keyClick(&w, Qt::Key_3, Qt::AltModifier);  // Show Try It
    QVERIFY(page->isVisible());
    testing::draw_one(panel->canvas());
    QVERIFY(panel->input().defined());

    // Live: outputs of the run's weights while it trains, changing as it learns.
    std::vector<std::vector<float>> live;
    connect(page, &app::TryItPage::predictionShown, this, [&] {
      if (w.training()->isRunning() && panel->modelStatus().startsWith("Live weights"))
        live.push_back(panel->bars()->probabilities());
    });
    QTRY_VERIFY_WITH_TIMEOUT(live.size() >= 3 || !finished.isEmpty(), 120000);
    qInfo("%zu live outputs during the run", live.size());
    QVERIFY(live.size() >= 3);
    w.training()->stop();  // ends with a final checkpoint, as a completed run does
    QVERIFY(!finished.isEmpty() || finished.wait(120000));
    for (const std::vector<float>& p : live) {
      QCOMPARE(p.size(), size_t(10));
      double sum = 0;
      for (float v : p) sum += v;
      QVERIFY(std::abs(sum - 1) < 1e-4);
    }
    QVERIFY(live.front() != live.back());

    // After the run: its last weights stay, and a "1" is a 1.
    QTRY_VERIFY_WITH_TIMEOUT(panel->modelStatus().startsWith("The last run's weights"), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!panel->bars()->probabilities().empty(), 10000);
    const std::vector<float> last = panel->bars()->probabilities();
    qInfo("a drawn 1 after the run: class %d at %.3f", panel->bars()->topClass(), double(last[1]));
    QCOMPARE(panel->bars()->topClass(), 1);

    // Load Checkpoint… with the run's final weights: what core's TrainedModel says, to 1e-5.
    QString final_checkpoint;
    for (const QList<QVariant>& c : checkpoints)
      if (c.at(1).toString() == "final") final_checkpoint = c.at(0).toString();
    QVERIFY(!final_checkpoint.isEmpty());
    page->chooseCheckpoint = [&] { return final_checkpoint; };
    QSignalSpy shown(page, &app::TryItPage::predictionShown);
    QTest::mouseClick(panel->findChild<QToolButton*>("loadCheckpoint"), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(panel->modelStatus() == "Checkpoint: final.safetensors" && !shown.isEmpty(), 30000);
    const session::TrainedModel core =
        session::load_trained_model(w.document()->graph(), final_checkpoint.toStdString(), {.project_dir = dir_.path().toStdString()});
    const std::vector<float> expected = softmax(core.forward(panel->input().unsqueeze(0)), 1).to_vector();
    const std::vector<float> got = panel->bars()->probabilities();
    QCOMPARE(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) QVERIFY2(std::abs(got[i] - expected[i]) < 1e-5, qPrintable(QString::number(i)));
    // The final checkpoint holds the weights the run ended with.
    for (size_t i = 0; i < got.size(); ++i) QVERIFY(std::abs(got[i] - last[i]) < 1e-5);

    // Drawing again: the loaded model answers the new input.
    shown.clear();
    QTest::mouseClick(panel->findChild<QToolButton*>("clearDrawing"), Qt::LeftButton);
    QVERIFY(panel->bars()->probabilities().empty());
    testing::draw_one(panel->canvas());
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 10000);
    QCOMPARE(panel->bars()->topClass(), 1);

    // A file that is not a checkpoint of this project: said so in the panel, the model stays.
    const QString bogus = dir_.filePath("bogus.safetensors");
    QFile file(bogus);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not a safetensors file");
    file.close();
    page->chooseCheckpoint = [&] { return bogus; };
    QTest::mouseClick(panel->findChild<QToolButton*>("loadCheckpoint"), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!panel->errorText().isEmpty(), 30000);
    QVERIFY2(panel->errorText().contains("bogus.safetensors"), qPrintable(panel->errorText()));
    QCOMPARE(panel->modelStatus(), QString("Checkpoint: final.safetensors"));
  }

  void imageFolderPicturesArePreparedAsInTraining() {
    // Two class folders, and a project on them that pads its pictures into its 28 x 28 input.
    const fs::path folder = fs::path(dir_.path().toStdString()) / "shapes";
    for (const char* cls : {"bars", "dots"}) {
      fs::create_directories(folder / cls);
      data::write_png(folder / cls / "a.png", data::Image{28, 28, 1, std::vector<uint8_t>(28 * 28, 200)});
    }
    graph::Graph g = graph::load_project(PLEXUS_SOURCE_DIR "/examples/digits_folder.plexus");
    g.dataset.path = folder.string();
    g.dataset.fit = "pad";
    const QString project = dir_.filePath("shapes.plexus");
    graph::save_project(project.toStdString(), g);
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project));
    widgets::TryItPanel* panel = w.tryIt()->panel();
    QCOMPARE(panel->inputShape(), Shape({1, 28, 28}));

    // A wide white picture: padded above and below, not stretched over the whole input.
    const data::Image wide{84, 28, 1, std::vector<uint8_t>(84 * 28, 255)};
    const QString file = dir_.filePath("wide.png");
    data::write_png(file.toStdString(), wide);
    QVERIFY(panel->openImage(file));
    const std::vector<float> expected = session::picture_input(wide, g.dataset, {1, 28, 28}).to_vector();
    QCOMPARE(panel->input().to_vector(), expected);
    QCOMPARE(expected.front(), 0.f);           // padding
    QCOMPARE(expected[14 * 28 + 14], 1.f);     // the picture
    QVERIFY(expected != data::image_to_input(wide, {1, 28, 28}).to_vector());

    // The project's fit changes before there is a model: the picture is prepared again.
    graph::DatasetBinding stretched = g.dataset;
    stretched.fit = "stretch";
    w.document()->setDataset(stretched);
    QTRY_COMPARE_WITH_TIMEOUT(panel->input().to_vector(), session::picture_input(wide, stretched, {1, 28, 28}).to_vector(), 10000);
  }

  // A CSV project: before a model, the form says what it waits for; after a short run, a field
  // per feature column, the typed row's prediction what core's TrainedModel makes of the same
  // prepared row, and a bad value's message instead of a prediction.
  void aCsvModelIsTriedWithAFormOfItsColumns() {
    graph::Graph g = graph::load_project(PLEXUS_SOURCE_DIR "/examples/housing_regression.plexus");
    g.dataset.path = PLEXUS_SOURCE_DIR "/examples/data/housing.csv";
    g.training.epochs = 2;
    const QString project = dir_.filePath("housing.plexus");
    graph::save_project(project.toStdString(), g);
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project));
    w.showTryIt();
    widgets::TryItPanel* panel = w.tryIt()->panel();
    QVERIFY(panel->tableInput());
    QVERIFY(panel->findChild<QLabel*>("tryItTableNote")->text().contains("Train the project"));
    QVERIFY(!panel->canvas()->isVisible());

    QSignalSpy finished(w.training(), &TrainingController::finished);
    QSignalSpy checkpoints(w.training(), &TrainingController::checkpointSaved);
    QVERIFY(w.startTraining());
    w.showTryIt();  // Train showed the dashboard; the page asks for the last weights when shown
    QVERIFY(finished.wait(120000));
    QTRY_VERIFY_WITH_TIMEOUT(panel->modelStatus().startsWith("The last run's weights"), 20000);
    widgets::TableForm* form = panel->tableForm();
    QCOMPARE(form->values().size(), 8);
    auto* area = qobject_cast<QLineEdit*>(form->field("area_m2"));
    QVERIFY(area && area->isVisible());
    QSignalSpy shown(w.tryIt(), &app::TryItPage::predictionShown);
    area->setFocus();
    QTest::keyClicks(area, "150");
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && panel->valueText() != QStringLiteral("—"), 20000);

    QString final_checkpoint;
    for (const QList<QVariant>& c : checkpoints)
      if (c.at(1).toString() == "final") final_checkpoint = c.at(0).toString();
    QVERIFY(!final_checkpoint.isEmpty());
    const session::TrainedModel core =
        session::load_trained_model(w.document()->graph(), final_checkpoint.toStdString(), {});
    std::vector<std::string> row;
    for (const data::PreparedColumn& c : core.preparation->columns) row.push_back(c.name == "area_m2" ? "150" : "");
    std::vector<std::string> names;
    for (const data::PreparedColumn& c : core.preparation->columns) names.push_back(c.name);
    const data::Table typed = data::table_of_rows(
        names, {row}, data::csv_format::MissingTokens::parse(core.preparation->missing_values), "typed");
    Tensor x = zeros({core.preparation->width()});
    core.preparation->apply(typed, 0, core.preparation->columns_in(typed), x.data());
    QCOMPARE(panel->input().to_vector(), x.to_vector());
    const float expected = core.forward(x.unsqueeze(0)).to_vector().at(0);
    QVERIFY2(std::abs(panel->valueText().toFloat() - expected) <= 1e-3f * std::max(1.f, std::abs(expected)),
             qPrintable(panel->valueText() + " vs " + QString::number(expected)));

    QTest::keyClicks(area, "m2");  // "150m2": not a number
    QTRY_VERIFY_WITH_TIMEOUT(!panel->errorText().isEmpty(), 5000);
    QVERIFY2(panel->errorText().contains("area_m2"), qPrintable(panel->errorText()));
    QCOMPARE(panel->valueText(), QStringLiteral("—"));
    w.showEditor();  // the editing panels the page hid come back
    QVERIFY(w.findChild<QDockWidget*>("paletteDock")->isVisible());
  }
};

QTEST_MAIN(TestAppTryIt)
#include "test_app_tryit.moc"
