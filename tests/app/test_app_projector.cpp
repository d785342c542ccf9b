// The Projector page in the real window, offscreen: the MNIST MLP (its initial weights, a weights
// file) on 10,000 generated digits, half of them validating, loaded in Try It; t-SNE of its hidden
// layer over 5,000 validation examples while a 10 ms timer measures the UI thread's event loop
// (no gap over 50 ms); then hovering a point shows that example and clicking it opens it in Try It.
#include <QComboBox>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <filesystem>

#include "data/synthetic_digits.h"
#include "editor/model/graph_document.h"
#include "projector/projector_plot.h"
#include "graph/project.h"
#include "main_window.h"
#include "projector_page.h"
#include "session/run.h"
#include "session/trained_model.h"
#include "support/app_fixture.h"
#include "train/checkpoint.h"
#include "tryit/tryit_panel.h"
#include "tryit_page.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {
using Window = testing::TestWindow;
}

class TestAppProjector : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_, weights_;

  // Opens the project, loads the weights in Try It and waits for the model.
  bool ready(Window& w) {
    w.show();
    if (!QTest::qWaitForWindowExposed(&w) || !w.openFile(project_)) return false;
    w.tryIt()->loadCheckpoint(weights_);
    return QTest::qWaitFor([&] { return w.tryIt()->panel()->hasModel(); }, 30000);
  }

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.path() + "/recovery");
    const fs::path root = dir_.path().toStdString();
    data::write_synthetic_digits(root / "digits", 10000, 500);
    graph::Graph g = graph::load_project(PLEXUS_SOURCE_DIR "/examples/mnist_mlp.plexus");
    g.dataset.path = "digits";
    g.training.validation_fraction = 0.5;
    project_ = dir_.filePath("mlp.plexus");
    graph::save_project(project_.toStdString(), g);
    g.dataset.path = (root / "digits").string();
    session::TrainingRun run = session::make_training_run(g);
    train::Metadata meta;
    session::write_model_metadata(meta, run.data.info, run.normalization, run.class_names);
    weights_ = dir_.filePath("w.safetensors");
    train::save_weights(weights_.toStdString(), *run.compiled.model, meta);
  }

  void tsneOfFiveThousandKeepsTheWindowResponsive() {
    Window w;
    QVERIFY(ready(w));
    app::ProjectorPage* page = w.projector();
    QCOMPARE(page->nodeChooser()->currentText(), QStringLiteral("act"));  // the penultimate layer
    page->methodChooser()->setCurrentIndex(page->methodChooser()->findData(QStringLiteral("tsne")));
    page->examplesBox()->setValue(5000);
    qobject_cast<QTabWidget*>(page->parentWidget()->parentWidget())->setCurrentWidget(page);

    QElapsedTimer clock;
    qint64 last = 0, worst = 0;
    QTimer tick;
    tick.setInterval(10);
    connect(&tick, &QTimer::timeout, this, [&] {
      const qint64 now = clock.elapsed();
      worst = std::max(worst, now - last);
      last = now;
    });
    QSignalSpy computed(page, &app::ProjectorPage::computed);
    clock.start();
    tick.start();
    QVERIFY(page->compute());
    QVERIFY2(computed.wait(180000), qPrintable(page->statusText()));
    tick.stop();
    qInfo("t-SNE of 5000 examples: %s; the longest gap between 10 ms ticks %lld ms", qPrintable(page->statusText()),
          static_cast<long long>(worst));
    QCOMPARE(page->plot()->count(), 5000);
    QCOMPARE(page->features().features.shape(), Shape({5000, 128}));
    QVERIFY2(worst <= 50, qPrintable(QString("the UI thread stalled %1 ms").arg(worst)));
  }

  void hoverShowsAndClickOpensTheExample() {
    Window w;
    QVERIFY(ready(w));
    app::ProjectorPage* page = w.projector();
    page->methodChooser()->setCurrentIndex(page->methodChooser()->findData(QStringLiteral("pca")));
    page->examplesBox()->setValue(300);
    qobject_cast<QTabWidget*>(page->parentWidget()->parentWidget())->setCurrentWidget(page);
    QSignalSpy computed(page, &app::ProjectorPage::computed);
    QVERIFY(page->compute());
    QVERIFY2(computed.wait(60000), qPrintable(page->statusText()));
    widgets::ProjectorPlot* plot = page->plot();
    QCOMPARE(plot->count(), 300);

    // Some point drawn where no other is as near: the one hovered there.
    int row = -1;
    for (int i = 0; i < plot->count() && row < 0; ++i)
      if (plot->pointAt(plot->screenPosition(i)) == i) row = i;
    QVERIFY(row >= 0);
    QSignalSpy hovered(plot, &widgets::ProjectorPlot::hovered);
    QTest::mouseMove(plot, plot->screenPosition(row).toPoint());
    QTRY_COMPARE(plot->hoveredRow(), row);
    QCOMPARE(hovered.last().at(0).toInt(), row);

    // Clicking opens it in Try It: its pixels are the panel's input.
    QTest::mouseClick(plot, Qt::LeftButton, {}, plot->screenPosition(row).toPoint());
    QTRY_VERIFY(w.tryIt()->isVisible());
    const explain::FeatureSet& f = page->features();
    const Tensor expected = f.split->get(f.indices[size_t(row)]).input;
    const Tensor got = w.tryIt()->panel()->input();
    QVERIFY(got.defined());
    QCOMPARE(got.shape(), expected.shape());
    const std::vector<float> a = got.to_vector(), b = expected.to_vector();
    for (size_t i = 0; i < a.size(); ++i) QVERIFY(std::abs(a[i] - b[i]) <= 0.5f / 255);
  }

  void computeWithoutAModelSaysWhy() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project_));
    QVERIFY(!w.projector()->compute());
    QVERIFY2(w.projector()->statusText().contains("No model yet"), qPrintable(w.projector()->statusText()));
  }
};

QTEST_MAIN(TestAppProjector)
#include "test_app_projector.moc"
