// Live per-node statistics in the real window, end to end: a project on a small generated
// dataset is trained with Train; the Trainer's NodeStats reach the node items on the canvas and
// the statistics panel of the node clicked; the example whose ReLUs die (its learning rate far
// too high) gets its badge, with the reason, within the first epoch, and a healthy MLP none.
#include <QDockWidget>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <qcustomplot.h>

#include <filesystem>

#include "data/synthetic_digits.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "editor/node_stats_layer.h"
#include "editor/node_stats_model.h"
#include "editor/node_stats_overlay.h"
#include "editor/node_stats_panel.h"
#include "editor/node_view.h"
#include "graph/project.h"
#include "main_window.h"
#include "training_controller.h"
#include "support/app_fixture.h"

using namespace plexus;
using app::MainWindow;
using app::TrainingController;

namespace {

constexpr int64_t kTrain = 2000, kTest = 200, kBatch = 100;
constexpr int64_t kStepsPerEpoch = (kTrain - kTrain / 10) / kBatch;  // the default validation fraction holds 10% out
constexpr int kStatsEvery = 3;

struct Window : testing::TestWindow {
  void clickTrain() { click(trainAction()); }
  // Clicks the node's header on the canvas, as a user selects it.
  void clickNode(const QString& id) {
    showEditor();
    view()->centerOn(scene()->nodeItem(id));
    const QPoint header = view()->mapFromScene(scene()->nodeItem(id)->scenePos() + QPointF(60, 12));
    QTest::mouseClick(view()->viewport(), Qt::LeftButton, {}, header);
  }
  widgets::NodeStatsOverlay* overlay(const QString& id) const { return nodeStatsLayer()->overlay(id); }
};

bool isDeadUnits(const train::HealthIssue& h) { return h.kind == train::HealthKind::DeadUnits; }

}  // namespace

class TestAppNodeStats : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  // The shipped example `name` on the generated digits, saved next to them; its path.
  QString project(const char* name, int epochs) {
    graph::Graph g = graph::load_project(std::string(PLEXUS_SOURCE_DIR "/examples/") + name + ".plexus");
    g.dataset.path = "digits";  // next to the project file
    g.training.epochs = epochs;
    g.training.batch_size = kBatch;
    g.training.stats_every = kStatsEvery;
    const QString path = dir_.filePath(QString(name) + ".plexus");
    graph::save_project(path.toStdString(), g);
    return path;
  }

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.path() + "/recovery");
    data::write_synthetic_digits(std::filesystem::path(dir_.path().toStdString()) / "digits", kTrain, kTest);
  }

  void deadReluGraphGetsItsBadgeWithinTheFirstEpoch() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project("mnist_dead_relu", 2)));
    QSignalSpy stats(w.training(), &TrainingController::nodeStats);
    // What the canvas showed when the first dead units were reported, before epoch 1 ended.
    int epochs_ended = 0;
    QString dead_node, badge_tip;
    connect(w.training(), &TrainingController::epochEnded, &w, [&] { ++epochs_ended; });
    // Each sample comes after the batches() that delivered its step.
    int64_t batches = 0, early = 0;
    connect(w.training(), &TrainingController::batches, &w,
            [&](const std::vector<train::BatchEnd>& b) { batches += int64_t(b.size()); });
    connect(w.training(), &TrainingController::nodeStats, &w, [&](const train::NodeStats& s) {
      early += s.step > batches;
      const auto dead = std::find_if(s.health.begin(), s.health.end(), isDeadUnits);
      if (!dead_node.isEmpty() || dead == s.health.end() || epochs_ended > 0) return;
      dead_node = QString::fromStdString(dead->node);
      if (widgets::NodeStatsOverlay* o = w.overlay(dead_node); o && o->badge()->isVisible()) badge_tip = o->badge()->toolTip();
    });
    QSignalSpy finished(w.training(), &TrainingController::finished);
    w.clickTrain();
    QVERIFY(w.training()->isRunning());
    QVERIFY(finished.wait(120000));

    // Every sample arrived, in order.
    QCOMPARE(stats.count(), int(2 * kStepsPerEpoch / kStatsEvery));
    QCOMPARE(early, int64_t(0));
    for (int i = 0; i < stats.count(); ++i)
      QCOMPARE(stats.at(i).at(0).value<train::NodeStats>().step, int64_t(1 + kStatsEvery * i));

    // The badge came within the first epoch, on a ReLU, saying why.
    QVERIFY2(dead_node.startsWith("relu"), qPrintable(dead_node));
    QVERIFY2(badge_tip.contains("% of units output zero for every example"), qPrintable(badge_tip));
    widgets::NodeStatsOverlay* dead = w.overlay(dead_node);
    QVERIFY(dead->badge()->isVisible());  // they stay dead
    QVERIFY(!dead->badge()->isSevere());
    QVERIFY(w.scene()->nodeItem(dead_node)->toolTip().contains("% of units output zero"));

    // Statistics reach every measured node: the strip with its figures, parameters' too.
    const std::vector<widgets::NodeSample>& fc1 = w.nodeStats()->samples("fc1");
    QCOMPARE(int(fc1.size()), stats.count());
    QVERIFY(fc1.back().hasParams);
    QVERIFY(w.overlay("fc1")->isVisible());
    QVERIFY2(w.overlay("fc1")->figures().startsWith("μ "), qPrintable(w.overlay("fc1")->figures()));
    QVERIFY2(w.overlay("fc1")->paramFigures().startsWith("|g| "), qPrintable(w.overlay("fc1")->paramFigures()));
    QVERIFY(w.overlay(dead_node)->paramFigures().isEmpty());

    // The panel shows the node clicked, its issue named.
    w.findChild<QDockWidget*>("nodeStatsDock")->raise();
    widgets::NodeStatsPanel* panel = w.nodeStatsPanel();
    w.clickNode(dead_node);
    QCOMPARE(w.scene()->selectedNodeIds(), QStringList{dead_node});
    QCOMPARE(panel->node(), dead_node);
    QVERIFY(panel->showsStatistics());
    QCOMPARE(panel->graph(widgets::NodeStatsPanel::Series::Dead)->dataCount(), stats.count());
    QVERIFY(panel->graph(widgets::NodeStatsPanel::Series::Dead)->data()->at(stats.count() - 1)->value > 50);
    QVERIFY(panel->issuesText().contains("% of units output zero"));
    QVERIFY(!panel->showsGradients());
    w.clickNode("fc1");
    QCOMPARE(panel->node(), QString("fc1"));
    QVERIFY(panel->showsGradients());
    QCOMPARE(panel->graph(widgets::NodeStatsPanel::Series::GradNorm)->dataCount(), stats.count());

    // View > Show Node Statistics hides it all, and brings it back.
    QAction* toggle = w.findChild<QAction*>("showNodeStatsAction");
    QVERIFY(toggle->isChecked());
    toggle->trigger();
    QVERIFY(!w.overlay("fc1")->isVisible());
    QVERIFY(!dead->badge()->isVisible());
    QVERIFY(!w.scene()->nodeItem(dead_node)->toolTip().contains("% of units output zero"));
    toggle->trigger();
    QVERIFY(w.overlay("fc1")->isVisible());
    QVERIFY(dead->badge()->isVisible());

    // Another project starts with none.
    QVERIFY(w.openFile(project("mnist_mlp", 1)));
    QVERIFY(w.nodeStats()->isEmpty());
    QVERIFY(!w.overlay("fc1"));
  }

  void healthyMlpGetsStatisticsAndNoBadge() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project("mnist_mlp", 1)));
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QSignalSpy started(w.training(), &TrainingController::started);
    w.clickTrain();
    QVERIFY(finished.wait(120000));
    QCOMPARE(int(w.nodeStats()->samples("act").size()), int(kStepsPerEpoch / kStatsEvery));
    QVERIFY(w.overlay("act"));
    for (const QString id : {"flat", "fc1", "act", "fc2"})
      if (widgets::NodeStatsOverlay* o = w.overlay(id)) QVERIFY2(!o->hasIssues(), qPrintable(id + ": " + o->reasons()));

    // A new run starts from nothing: the last run's statistics go when it starts.
    connect(w.training(), &TrainingController::started, &w, [&] { QVERIFY(w.nodeStats()->isEmpty()); });
    w.clickTrain();
    QVERIFY(finished.wait(120000));
    QCOMPARE(started.count(), 2);
    QCOMPARE(int(w.nodeStats()->samples("act").size()), int(kStepsPerEpoch / kStatsEvery));
  }
};

QTEST_MAIN(TestAppNodeStats)
#include "test_app_node_stats.moc"
