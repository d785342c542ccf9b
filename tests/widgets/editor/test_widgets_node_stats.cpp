// Live per-node statistics in the editor, fed the train::NodeStats events a run publishes: the
// model keeps a bounded history per node, each measured node gets its strip under the card on
// the canvas (drawn, and gone when hidden or cleared), health issues get a badge whose tooltip
// gives the reason, and the statistics panel plots the selected node's series.
#include <QApplication>
#include <QHelpEvent>
#include <QSignalSpy>
#include <QTest>
#include <QToolTip>
#include <qcustomplot.h>

#include <cmath>

#include "common/theme.h"
#include "editor/model/graph_document.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "editor/node_stats_layer.h"
#include "editor/node_stats_model.h"
#include "editor/node_stats_overlay.h"
#include "editor/node_stats_panel.h"
#include "editor/node_view.h"

using namespace plexus;
using namespace plexus::widgets;

namespace {

// Input -> Linear "fc" -> ReLU "act" -> Linear "out" -> CrossEntropy "loss", one row.
graph::Graph mlp() {
  graph::Graph g;
  const auto node = [&](const std::string& id, const std::string& type, double x) {
    g.nodes.push_back({id, type, id, {}, {x, 40}});
  };
  node("in", "Input", 20);
  node("fc", "Linear", 240);
  node("act", "ReLU", 460);
  node("out", "Linear", 680);
  node("loss", "CrossEntropy", 900);
  g.edges = {{{"in", "x"}, {"fc", "input"}},
             {{"fc", "output"}, {"act", "input"}},
             {{"act", "output"}, {"out", "input"}},
             {{"out", "output"}, {"loss", "input"}},
             {{"in", "y"}, {"loss", "target"}}};
  return g;
}

train::NodeStat stat(const std::string& node, double mean, double std, bool params) {
  train::NodeStat s;
  s.node = node;
  s.mean = mean;
  s.std = std;
  s.min = mean - 2 * std;
  s.max = mean + 2 * std;
  s.histogram.assign(train::kHistogramBins, 1.0f / train::kHistogramBins);
  s.has_params = params;
  if (params) {
    s.weight_norm = 4;
    s.grad_norm = 3.1e-3;
    s.update_ratio = 1.2e-3;
  }
  return s;
}

// Step `step` of a healthy run: fc and out measured with parameters, act half zeros.
train::NodeStats sample(int64_t step, std::vector<train::HealthIssue> health = {}) {
  train::NodeStats s;
  s.epoch = 1;
  s.batch = step;
  s.step = step;
  const double wobble = 0.01 * double(step % 7);
  s.nodes.push_back(stat("fc", 0.12 + wobble, 0.8, true));
  train::NodeStat act = stat("act", 0.3 + wobble, 0.4, false);
  act.zero_fraction = 0.45;
  act.dead_fraction = 0.1;
  s.nodes.push_back(act);
  s.nodes.push_back(stat("out", -0.5, 2.0, true));
  s.health = std::move(health);
  return s;
}

const char kDeadReason[] = "62% of units output zero over the last 3 samples";

// One editor with statistics: document, scene, overlays and a shown view at zoom 1.
struct Editor {
  GraphDocument doc;
  NodeScene scene{&doc};
  NodeStatsModel model;
  NodeStatsLayer layer{&model, &scene};
  NodeView view{&scene};

  Editor() {
    doc.reset(mlp(), "");
    view.resize(1200, 500);
    view.show();
    view.centerOn(QPointF(560, 140));
  }
  NodeItem* item(const QString& id) const { return scene.nodeItem(id); }
  QImage grab() {
    QApplication::processEvents();
    return view.viewport()->grab().toImage();
  }
  QPoint at(QPointF scene_pos) const { return view.mapFromScene(scene_pos); }
  // A point of the strip under `id`'s card, left of its texts and its sparkline.
  QPoint stripPoint(const QString& id) const {
    const QRectF strip = layer.overlay(id) ? layer.overlay(id)->stripRect() : QRectF(0, item(id)->size().height(), 176, 40);
    return at(item(id)->mapToScene(QPointF(strip.left() + 4, strip.center().y())));
  }
};

// Colours compared by name: a colour the theme derives (darker()) has another spec than a pixel's.
QString stripBody() {
  const Theme& t = ThemeManager::instance().theme();
  return (t.dark ? t.nodeBody.darker(125) : t.nodeBody.darker(104)).name();
}
QString canvas() { return ThemeManager::instance().theme().canvas.name(); }

}  // namespace

class TestWidgetsNodeStats : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { ThemeManager::instance().setMode(ThemeMode::Light); }

  void historyStaysBoundedAndCoversTheRun() {
    NodeStatsModel model;
    QSignalSpy updated(&model, &NodeStatsModel::updated);
    for (int64_t step = 1; step <= 2000; ++step) model.add(sample(step));
    QCOMPARE(updated.count(), 2000);
    QCOMPARE(model.lastStep(), int64_t(2000));
    const std::vector<NodeSample>& fc = model.samples("fc");
    QVERIFY(fc.size() <= NodeStatsModel::kCapacity);
    QVERIFY(fc.size() >= NodeStatsModel::kCapacity / 2);
    QCOMPARE(fc.front().step, int64_t(1));  // the start of the run is still there
    QCOMPARE(fc.back().step, int64_t(2000));
    for (size_t i = 1; i < fc.size(); ++i) QVERIFY(fc[i - 1].step < fc[i].step);
    // The latest samples at full resolution.
    for (size_t i = fc.size() - 50; i < fc.size(); ++i) QCOMPARE(fc[i].step, fc[i - 1].step + 1);
    QVERIFY(model.samples("in").empty());  // never measured
    QCOMPARE(fc.back().gradNorm, 3.1e-3);
    QCOMPARE(model.samples("act").back().zeroFraction, 0.45);
  }

  void statisticsReachTheirNodeOnTheCanvas() {
    Editor e;
    const QImage before = e.grab();
    QCOMPARE(before.pixelColor(e.stripPoint("fc")).name(), canvas());
    for (int64_t step = 1; step <= 20; ++step) e.model.add(sample(step));

    NodeStatsOverlay* fc = e.layer.overlay("fc");
    QVERIFY(fc);
    QVERIFY(!e.layer.overlay("in"));  // no samples: no strip
    QVERIFY(!e.layer.overlay("loss"));
    QCOMPARE(fc->node(), e.item("fc"));
    QCOMPARE(fc->figures(), QString("μ 0.18  σ 0.8  zeros 0%"));  // step 20: wobble 0.06
    QCOMPARE(fc->paramFigures(), QString("|g| 3.1e-3  Δ/w 1.2e-3"));
    QCOMPARE(e.layer.overlay("act")->paramFigures(), QString());
    QCOMPARE(e.layer.overlay("act")->figures(), QString("μ 0.36  σ 0.4  zeros 45%"));
    // A node with parameters has a taller strip for its second line.
    QVERIFY(fc->stripRect().height() > e.layer.overlay("act")->stripRect().height());
    QCOMPARE(fc->stripRect().top(), e.item("fc")->size().height());

    // Drawn: the strip's body below the card, and a sparkline across it.
    const QImage after = e.grab();
    QCOMPARE(after.pixelColor(e.stripPoint("fc")).name(), stripBody());
    const QRect spark = QRect(e.at(e.item("fc")->mapToScene(QPointF(12, fc->stripRect().top() + 6))),
                              e.at(e.item("fc")->mapToScene(QPointF(164, fc->stripRect().top() + 22))));
    int coloured = 0;
    for (int y = spark.top(); y <= spark.bottom(); ++y)
      for (int x = spark.left(); x <= spark.right(); ++x) {
        const QColor c = after.pixelColor(x, y);
        coloured += c.saturation() > 60;  // the category's blue, not the grey body
      }
    QVERIFY2(coloured > 100, qPrintable(QString::number(coloured)));
    // The card itself is untouched: nothing to do with the statistics.
    QCOMPARE(e.item("fc")->size(), NodeScene::nodeSize(e.doc.graph().nodes[1]));

    // Figures stay short at any scale.
    train::NodeStats big = sample(21);
    big.nodes[2] = stat("out", -190, 6500, true);
    big.nodes[2].grad_norm = 12345;
    big.nodes[2].update_ratio = 0.0996;
    e.model.add(big);
    QCOMPARE(e.layer.overlay("out")->figures(), QString("μ -190  σ 6500  zeros 0%"));
    QCOMPARE(e.layer.overlay("out")->paramFigures(), QString("|g| 1.2e4  Δ/w 0.1"));
  }

  void healthIssuesGetABadgeWithTheReason() {
    Editor e;
    e.model.add(sample(1, {{"act", train::HealthKind::DeadUnits, kDeadReason}}));
    NodeStatsOverlay* act = e.layer.overlay("act");
    QVERIFY(act->hasIssues());
    NodeHealthBadge* badge = act->badge();
    QVERIFY(badge->isVisible());
    QVERIFY(!badge->isSevere());  // amber
    QCOMPARE(badge->toolTip(), QString(kDeadReason));
    QVERIFY(e.item("act")->toolTip().contains(kDeadReason));
    QVERIFY(!e.layer.overlay("fc")->badge()->isVisible());

    // Hovering the badge shows the reason, as a user sees it.
    const QPoint on_badge = e.at(badge->scenePos());
    QHelpEvent help(QEvent::ToolTip, on_badge, e.view.viewport()->mapToGlobal(on_badge));
    QApplication::sendEvent(e.view.viewport(), &help);
    QTRY_COMPARE(QToolTip::text(), QString(kDeadReason));
    QToolTip::hideText();

    // Drawn: the amber "!" on the card's corner, and a tinted rim around the card.
    const QImage image = e.grab();
    const Theme& theme = ThemeManager::instance().theme();
    const QColor at_badge = image.pixelColor(on_badge + QPoint(-4, 0));
    QCOMPARE(at_badge.name(), theme.warning.name());
    const QColor rim = image.pixelColor(e.at(e.item("act")->mapToScene(QPointF(-2, 80))));
    QVERIFY2(rim.red() > rim.blue() + 60, qPrintable(rim.name()));  // amber over the grey canvas

    // Non-finite output is severe: red. The issues of a sample replace the last one's.
    e.model.add(sample(2, {{"fc", train::HealthKind::NonFinite, "NaN or Inf in the output"}}));
    QVERIFY(e.layer.overlay("fc")->badge()->isVisible());
    QVERIFY(e.layer.overlay("fc")->badge()->isSevere());
    QVERIFY(!badge->isVisible());
    QVERIFY(!e.item("act")->toolTip().contains(kDeadReason));
    QCOMPARE(e.grab().pixelColor(e.at(e.layer.overlay("fc")->badge()->scenePos()) + QPoint(-4, 0)).name(), theme.error.name());
  }

  void hidingTheOverlayHidesEverythingItDrew() {
    Editor e;
    e.model.add(sample(1, {{"act", train::HealthKind::DeadUnits, kDeadReason}}));
    QCOMPARE(e.grab().pixelColor(e.stripPoint("act")).name(), stripBody());
    e.layer.setShown(false);
    QVERIFY(!e.layer.overlay("act")->isVisible());
    QVERIFY(!e.layer.overlay("act")->badge()->isVisible());
    QVERIFY(!e.item("act")->toolTip().contains(kDeadReason));
    QCOMPARE(e.grab().pixelColor(e.stripPoint("act")).name(), canvas());
    // Samples arriving meanwhile are kept, and shown when it is on again.
    e.model.add(sample(2, {{"act", train::HealthKind::DeadUnits, kDeadReason}}));
    QVERIFY(!e.layer.overlay("act")->isVisible());
    e.layer.setShown(true);
    QVERIFY(e.layer.overlay("act")->badge()->isVisible());
    QVERIFY(e.item("act")->toolTip().contains(kDeadReason));
    QCOMPARE(e.grab().pixelColor(e.stripPoint("act")).name(), stripBody());
  }

  void clearingForANewRunRemovesTheOverlays() {
    Editor e;
    NodeStatsPanel panel(&e.model);
    panel.show();
    panel.setNode("fc");
    e.model.add(sample(1, {{"act", train::HealthKind::DeadUnits, kDeadReason}}));
    QVERIFY(panel.showsStatistics());
    e.model.clear();
    QVERIFY(e.model.isEmpty());
    QVERIFY(!e.layer.overlay("fc"));
    QVERIFY(!e.layer.overlay("act"));
    QVERIFY(!e.item("act")->toolTip().contains(kDeadReason));
    QCOMPARE(e.grab().pixelColor(e.stripPoint("fc")).name(), canvas());
    QVERIFY(!panel.showsStatistics());
    QCOMPARE(panel.message(), QString("Train the model to see statistics for this node"));
  }

  void overlaysFollowTheDocument() {
    Editor e;
    e.model.add(sample(1));
    QVERIFY(e.layer.overlay("act"));
    e.doc.remove({"act"}, {});
    QVERIFY(!e.item("act"));
    e.doc.undoStack()->undo();  // a new item for the node: it gets its strip again
    QVERIFY(e.item("act"));
    QVERIFY(e.layer.overlay("act"));
    QCOMPARE(e.layer.overlay("act")->figures(), QString("μ 0.31  σ 0.4  zeros 45%"));
    e.doc.reset(graph::Graph{}, "");  // another project: its nodes are not these
    QVERIFY(!e.layer.overlay("act"));
  }

  void panelPlotsTheSelectedNode() {
    NodeStatsModel model;
    NodeStatsPanel panel(&model);
    panel.resize(360, 900);
    panel.show();
    QVERIFY(!panel.showsStatistics());
    QCOMPARE(panel.message(), QString("Select a node"));
    panel.setNode("fc");
    QCOMPARE(panel.message(), QString("Train the model to see statistics for this node"));

    for (int64_t step = 1; step <= 30; ++step) model.add(sample(step, {{"act", train::HealthKind::DeadUnits, kDeadReason}}));
    QVERIFY(panel.showsStatistics());
    using S = NodeStatsPanel::Series;
    for (S s : {S::Mean, S::StdUpper, S::StdLower, S::Zeros, S::Dead, S::GradNorm, S::UpdateRatio})
      QCOMPARE(panel.graph(s)->dataCount(), 30);
    // Step 10: wobble 0.03.
    QCOMPARE(panel.graph(S::Mean)->data()->at(9)->key, 10.0);
    QCOMPARE(panel.graph(S::Mean)->data()->at(9)->value, 0.15);
    QCOMPARE(panel.graph(S::StdUpper)->data()->at(9)->value, 0.15 + 0.8);
    QCOMPARE(panel.graph(S::StdLower)->data()->at(9)->value, 0.15 - 0.8);
    QCOMPARE(panel.graph(S::GradNorm)->data()->at(9)->value, 3.1e-3);
    QCOMPARE(panel.graph(S::UpdateRatio)->data()->at(9)->value, 1.2e-3);
    QVERIFY(panel.showsGradients());
    QVERIFY(panel.issuesText().isEmpty());  // the issue is act's
    // The distribution over time: one column per sample, each holding all of its values
    // (rows without any are NaN, drawn transparent).
    QCPColorMapData* map = panel.distribution()->data();
    QCOMPARE(map->keySize(), 30);
    double column = 0;
    for (int r = 0; r < map->valueSize(); ++r)
      if (!std::isnan(map->cell(29, r))) column += map->cell(29, r);
    QVERIFY(std::abs(column - 1) < 1e-5);
    QCOMPARE(map->keyRange().lower, 1.0);
    QCOMPARE(map->keyRange().upper, 30.0);
    QCOMPARE(panel.latestHistogram()->dataCount(), train::kHistogramBins);

    // Another node: its own series; without parameters no gradient plot; its issue named.
    panel.setNode("act");
    QCOMPARE(panel.graph(S::Zeros)->data()->at(0)->value, 45.0);
    QCOMPARE(panel.graph(S::Dead)->data()->at(0)->value, 10.0);
    QVERIFY(!panel.showsGradients());
    QCOMPARE(panel.issuesText(), QString(kDeadReason));

    // Live: a new sample is plotted at once while shown.
    model.add(sample(31));
    QCOMPARE(panel.graph(S::Mean)->dataCount(), 31);
    QVERIFY(panel.issuesText().isEmpty());
    panel.setNode({});
    QVERIFY(!panel.showsStatistics());
    QCOMPARE(panel.message(), QString("Select a node"));
  }

  void panelCatchesUpWhenShownAgain() {
    NodeStatsModel model;
    NodeStatsPanel panel(&model);
    panel.show();
    panel.setNode("out");
    model.add(sample(1));
    panel.hide();
    for (int64_t step = 2; step <= 5; ++step) model.add(sample(step));
    QCOMPARE(panel.graph(NodeStatsPanel::Series::Mean)->dataCount(), 1);  // hidden: not redrawn
    panel.show();
    QCOMPARE(panel.graph(NodeStatsPanel::Series::Mean)->dataCount(), 5);
  }

  void nonFiniteSamplesLeaveGaps() {
    Editor e;
    NodeStatsPanel panel(&e.model);
    panel.show();
    panel.setNode("fc");
    e.model.add(sample(1));
    train::NodeStats bad = sample(2, {{"fc", train::HealthKind::NonFinite, "NaN or Inf in the output"}});
    bad.nodes[0].finite = false;
    bad.nodes[0].mean = std::nan("");
    e.model.add(bad);
    QCOMPARE(e.layer.overlay("fc")->figures(), QString("NaN or Inf in the output"));
    QVERIFY(std::isnan(panel.graph(NodeStatsPanel::Series::Mean)->data()->at(1)->value));
    QCOMPARE(panel.issuesText(), QString("NaN or Inf in the output"));
    e.grab();  // drawing them is fine too
  }
};

QTEST_MAIN(TestWidgetsNodeStats)
#include "test_widgets_node_stats.moc"
