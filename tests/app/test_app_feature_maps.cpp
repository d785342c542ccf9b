// The editor's Feature Maps panel in the real window, offscreen: LeNet trained for an epoch on
// generated digits, its final checkpoint loaded in Try It and a digit drawn there. Selecting
// conv1 on the canvas shows one tile per channel at the output's size with the values core's
// explain::node_output gives, and the filters explain::conv_filters gives; a Linear node a strip
// of its values; a channel clicked fills the gallery with the k validation examples that excite
// it most, highest first, as explain::top_activations finds them; a gallery example clicked
// becomes the Try It input. Without a node, a model or an input the panel says what to do.
#include <QDockWidget>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <filesystem>

#include "data/synthetic_digits.h"
#include "editor/model/graph_document.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"
#include "featuremaps/activation_gallery.h"
#include "featuremaps/feature_map_view.h"
#include "explain/features.h"
#include "featuremaps/heat_matrix.h"
#include "explain/probe.h"
#include "featuremaps/tile_grid.h"
#include "feature_maps.h"
#include "graph/project.h"
#include "main_window.h"
#include "session/trained_model.h"
#include "support/app_fixture.h"
#include "training_controller.h"
#include "tryit/digit_canvas.h"
#include "tryit/tryit_panel.h"
#include "tryit_page.h"

using namespace plexus;
using app::TrainingController;
using widgets::FeatureMapView;

namespace {

constexpr int64_t kTrain = 500, kTest = 100;

void drawSeven(widgets::DigitCanvas* canvas) {
  const QRectF sheet = canvas->sheetRect();
  const auto at = [&](double x, double y) {
    return QPoint(int(sheet.left() + x * sheet.width()), int(sheet.top() + y * sheet.height()));
  };
  QTest::mousePress(canvas, Qt::LeftButton, {}, at(0.3, 0.2));
  for (int i = 1; i <= 8; ++i) QTest::mouseMove(canvas, at(0.3 + 0.05 * i, 0.2));
  for (int i = 1; i <= 12; ++i) QTest::mouseMove(canvas, at(0.7 - 0.02 * i, 0.2 + 0.05 * i));
  QTest::mouseRelease(canvas, Qt::LeftButton, {}, at(0.46, 0.8));
}

struct Window : testing::TestWindow {
  // As Find Node does: centred on the canvas, selected.
  void selectNode(const QString& id) {
    showEditor();
    view()->centerOnNode(id);
  }
};

void compareValues(const std::vector<float>& got, const std::vector<float>& expected, const char* what) {
  QVERIFY2(got.size() == expected.size(), what);
  for (size_t i = 0; i < got.size(); ++i)
    QVERIFY2(std::abs(got[i] - expected[i]) <= 1e-5f * (1 + std::abs(expected[i])),
             qPrintable(QString("%1 [%2]: %3 vs %4").arg(what).arg(i).arg(got[i]).arg(expected[i])));
}

}  // namespace

class TestAppFeatureMaps : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.path() + "/recovery");
    data::write_synthetic_digits(std::filesystem::path(dir_.path().toStdString()) / "digits", kTrain, kTest);
  }

  void featureMapsFiltersAndTheTopExamplesOfAChannel() {
    graph::Graph g = graph::load_project(PLEXUS_SOURCE_DIR "/examples/mnist_lenet.plexus");
    g.dataset.path = "digits";
    g.training.epochs = 1;
    g.training.batch_size = 50;
    for (graph::Block& b : g.blocks) b.collapsed = false;  // conv1 on the canvas, to be selected
    const QString project = dir_.filePath("lenet.plexus");
    graph::save_project(project.toStdString(), g);

    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project));
    w.findChild<QDockWidget*>("featureMapsDock")->raise();
    FeatureMapView* view = w.featureMapView();
    QVERIFY(view->showsHint());
    QVERIFY2(view->hint().contains("Select a node"), qPrintable(view->hint()));
    w.selectNode("conv1");
    QCOMPARE(w.featureMaps()->node(), QString("conv1"));
    QVERIFY2(view->hint().contains("No model yet"), qPrintable(view->hint()));

    // A model: the run's final checkpoint, loaded in Try It.
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QSignalSpy checkpoints(w.training(), &TrainingController::checkpointSaved);
    QVERIFY(w.startTraining());
    QVERIFY(finished.wait(300000));
    QString final_checkpoint;
    for (const QList<QVariant>& c : checkpoints)
      if (c.at(1).toString() == "final") final_checkpoint = c.at(0).toString();
    QVERIFY(!final_checkpoint.isEmpty());
    QSignalSpy shown(w.featureMaps(), &app::FeatureMaps::outputShown);
    w.tryIt()->loadCheckpoint(final_checkpoint);
    QTRY_VERIFY_WITH_TIMEOUT(w.tryIt()->panel()->modelStatus() == "Checkpoint: final.safetensors", 30000);
    QTRY_VERIFY_WITH_TIMEOUT(view->hint().contains("Draw a digit"), 10000);
    QVERIFY(view->showsHint());

    // A digit drawn in Try It.
    w.showTryIt();
    widgets::TryItPanel* panel = w.tryIt()->panel();
    drawSeven(panel->canvas());
    QVERIFY(panel->input().defined());
    w.showEditor();
    QTRY_VERIFY_WITH_TIMEOUT(!view->showsHint(), 10000);
    const session::TrainedModel core = session::load_trained_model(
        w.document()->graph(), final_checkpoint.toStdString(), {.project_dir = dir_.path().toStdString()});

    // conv1: 20 channels of 24 x 24, the values core computes; its 20 filters of 1 x 5 x 5.
    QCOMPARE(view->node(), QString("conv1"));
    QCOMPARE(view->layout(), FeatureMapView::Layout::Channels);
    QCOMPARE(view->output().shape(), Shape({20, 24, 24}));
    QCOMPARE(view->channelGrid()->count(), 20);
    for (const widgets::TileGrid::Tile& tile : view->channelGrid()->tiles()) QCOMPARE(tile.image.size(), QSize(24, 24));
    QVERIFY(view->channelGrid()->isVisible());
    compareValues(view->output().to_vector(),
                  explain::node_output(core, panel->input().unsqueeze(0), "conv1").to_vector(), "conv1's output");
    QCOMPARE(view->filters().shape(), Shape({20, 1, 5, 5}));
    QCOMPARE(view->filterGrid()->count(), 20);
    QCOMPARE(view->filterGrid()->tiles().front().image.size(), QSize(5, 5));
    compareValues(view->filters().to_vector(), explain::conv_filters(core, "conv1").to_vector(), "conv1's filters");
    // The brightest pixel of a tile is where its channel is largest.
    const std::vector<float> out = view->output().to_vector();
    const auto peak = std::max_element(out.begin(), out.begin() + 24 * 24) - out.begin();
    const QImage first = view->channelGrid()->tiles().front().image;
    QCOMPARE(first.pixel(int(peak % 24), int(peak / 24)), QColor(0xfd, 0xe7, 0x25).rgb());

    // A Linear node: a strip of its values, no filters.
    const QString linear = "fc1";
    QVERIFY(w.document()->graph().find(linear.toStdString()));
    QCOMPARE(QString::fromStdString(w.document()->graph().find(linear.toStdString())->type), QString("Linear"));
    shown.clear();
    w.selectNode(linear);
    QTRY_VERIFY_WITH_TIMEOUT(view->node() == linear, 10000);
    QCOMPARE(view->layout(), FeatureMapView::Layout::Vector);
    const Tensor fc1 = explain::node_output(core, panel->input().unsqueeze(0), linear.toStdString());
    QCOMPARE(view->matrix()->rows(), 1);
    QCOMPARE(int64_t(view->matrix()->columns()), fc1.numel());
    compareValues(view->matrix()->values(), fc1.to_vector(), "fc1's output");
    QVERIFY(!view->filterGrid()->isVisible());
    QVERIFY(!view->filters().defined());

    // A channel of conv1 clicked: the 16 examples that excite it most, highest first, as core finds them.
    w.selectNode("conv1");
    QTRY_VERIFY_WITH_TIMEOUT(view->node() == "conv1", 10000);
    QSignalSpy gallery(w.featureMaps(), &app::FeatureMaps::galleryShown);
    const QRect tile = view->channelGrid()->tileRect(3);
    QTest::mouseClick(view->channelGrid(), Qt::LeftButton, {}, tile.center());
    QCOMPARE(view->selectedChannel(), 3);
    QVERIFY(gallery.wait(60000));
    const std::vector<widgets::ActivationGallery::Example>& examples = view->gallery()->examples();
    QCOMPARE(int64_t(examples.size()), w.featureMaps()->galleryCount);
    for (size_t i = 1; i < examples.size(); ++i) QVERIFY(examples[i - 1].activation >= examples[i].activation);
    for (const auto& e : examples) QCOMPARE(e.picture.size(), QSize(28, 28));
    explain::FeatureOptions options;
    options.node = "conv1";
    options.max_examples = w.featureMaps()->galleryScanned;
    const explain::TopActivations expected =
        explain::top_activations(core, {.project_dir = dir_.path().toStdString()}, options, 3, 16);
    QCOMPARE(expected.top.size(), examples.size());
    for (size_t i = 0; i < examples.size(); ++i)
      QVERIFY(std::abs(examples[i].activation - expected.top[i].activation) < 1e-5f);

    // A gallery example clicked: the Try It input, and the panel shows conv1 for it.
    shown.clear();
    const Tensor example = expected.split->get(expected.top[0].index).input;
    QTest::mouseClick(view->gallery()->pictures(), Qt::LeftButton, {},
                      view->gallery()->pictures()->tileRect(0).center());
    QVERIFY(panel->input().defined());
    compareValues(panel->input().to_vector(), example.to_vector(), "the example as Try It's input");
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 10000);
    compareValues(view->output().to_vector(), explain::node_output(core, example.unsqueeze(0), "conv1").to_vector(),
                  "conv1's output for the example");
    // The channel stays picked for the new input.
    QCOMPARE(view->selectedChannel(), 3);
  }
};

QTEST_MAIN(TestAppFeatureMaps)
#include "test_app_feature_maps.moc"
