// The run comparison's widgets, offscreen: the diff canvas marks exactly the nodes and wires
// that changed between two known graphs (in the diff colours, removed nodes at run A's places,
// changed parameters as "out_features 128 → 64"), cannot be edited and fits the drawing; the
// comparison overlays both runs' curves with their data, lists exactly the settings that
// differ and sums the difference up; the run list asks to compare two selected runs, or one
// run with another.
#include <QAction>
#include <QApplication>
#include <QContextMenuEvent>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <QTimer>
#include <qcustomplot.h>

#include <cmath>

#include "common/theme.h"
#include "dashboard/run_comparison.h"
#include "dashboard/run_list.h"
#include "dashboard/training_plots.h"
#include "support/diff_fixture.h"
#include "editor/diff_marks.h"
#include "editor/edge_item.h"
#include "editor/graph_diff_canvas.h"
#include "editor/model/graph_document.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"

using namespace plexus;
using namespace plexus::widgets;

namespace {

graph::Edge wire(const char* from, const char* from_port, const char* to, const char* to_port) {
  return graph::Edge{{from, from_port}, {to, to_port}};
}

QStringList noteTexts(const NodeDiffMark* mark) {
  QStringList out;
  for (const DiffNoteLine& line : mark->note()) out << line.text();
  return out;
}

// How many pixels of `image` are within a small distance of `colour`.
int pixelsNear(const QImage& image, const QColor& colour) {
  int n = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (std::abs(c.red() - colour.red()) + std::abs(c.green() - colour.green()) + std::abs(c.blue() - colour.blue()) < 30)
        ++n;
    }
  return n;
}

// The scene around `rect` as painted.
QImage render(QGraphicsScene* scene, const QRectF& rect) {
  QImage image(rect.size().toSize() * 2, QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  scene->render(&p, QRectF(image.rect()), rect);
  return image;
}

// A finished classification run of `epochs` epochs whose losses fall from `start`.
session::RunRecord record(const char* folder, int epochs, double start) {
  session::RunRecord r;
  r.folder = folder;
  r.header.started = "2025-06-01T14:03:12.345+02:00";
  r.status = session::RunStatus::Completed;
  for (int e = 1; e <= epochs; ++e) {
    train::EpochEnd end;
    end.epoch = e;
    end.epochs = epochs;
    end.train_loss = start / e;
    end.train_accuracy = 0.5 + 0.05 * e;
    end.has_eval = true;
    end.eval_loss = start / e + 0.1;
    end.eval_accuracy = 0.45 + 0.05 * e;
    end.classes = 10;
    r.epochs.push_back(end);
  }
  return r;
}

std::vector<double> values(const QCPGraph* g) {
  std::vector<double> out;
  for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) out.push_back(it->value);
  return out;
}

}  // namespace

class TestWidgetsRunDiff : public QObject {
  Q_OBJECT

 private slots:
  void init() { ThemeManager::instance().setMode(ThemeMode::Light); }

  void canvasMarksExactlyWhatChanged() {
    const graph::Graph a = testing::diff_before(), b = testing::diff_after();
    GraphDiffCanvas canvas;
    canvas.resize(1000, 700);
    canvas.show();
    QVERIFY(QTest::qWaitForWindowExposed(&canvas));
    canvas.showDiff(a, b, graph::diff(a, b));
    NodeScene* scene = canvas.scene();
    const Theme& theme = ThemeManager::instance().theme();

    // B's nodes and the one removed since A.
    QCOMPARE(scene->document()->graph().nodes.size(), size_t(8));
    const NodeDiffMark* added = canvas.nodeMark("drop2");
    QVERIFY(added);
    QCOMPARE(added->kind(), DiffKind::Added);
    QCOMPARE(added->colour(), diffColour(DiffKind::Added, theme));
    QVERIFY(added->note().empty());

    const NodeDiffMark* removed = canvas.nodeMark("drop");
    QVERIFY(removed);
    QCOMPARE(removed->kind(), DiffKind::Removed);
    QCOMPARE(scene->nodeItem("drop")->pos(), QPointF(280, 220));  // where run A had it
    QCOMPARE(removed->pos(), QPointF(280, 220));
    QVERIFY(scene->nodeItem("drop")->opacity() < 1);  // faded

    const NodeDiffMark* fc1 = canvas.nodeMark("fc1");
    QVERIFY(fc1);
    QCOMPARE(fc1->kind(), DiffKind::Changed);
    QCOMPARE(fc1->colour(), diffColour(DiffKind::Changed, theme));
    QCOMPARE(noteTexts(fc1), (QStringList{"name fc1 → hidden", "out_features 128 → 64"}));
    QCOMPARE(noteTexts(canvas.nodeMark("act")), QStringList{"type ReLU → LeakyReLU"});
    QVERIFY(!fc1->noteRect().isEmpty());
    QVERIFY(fc1->toolTip().contains("out_features 128 → 64"));

    // Unchanged, moved only, or a default written out: no mark; B's place.
    for (const char* id : {"in", "flat", "fc2", "loss"}) QVERIFY2(!canvas.nodeMark(id), id);
    QCOMPARE(scene->nodeItem("flat")->pos(), QPointF(300, 40));

    const WireDiffMark* in = canvas.wireMark(wire("act", "output", "drop2", "input"));
    QVERIFY(in);
    QCOMPARE(in->kind(), DiffKind::Added);
    QCOMPARE(in->pen().color(), diffColour(DiffKind::Added, theme));
    QCOMPARE(in->path(), scene->edgeItem(wire("act", "output", "drop2", "input"))->path());
    const WireDiffMark* out = canvas.wireMark(wire("drop", "output", "fc2", "input"));
    QVERIFY(out);
    QCOMPARE(out->kind(), DiffKind::Removed);
    QCOMPARE(out->pen().color(), diffColour(DiffKind::Removed, theme));
    QCOMPARE(out->pen().style(), Qt::DashLine);
    QVERIFY(canvas.wireMark(wire("act", "output", "drop", "input")));
    QVERIFY(canvas.wireMark(wire("drop2", "output", "fc2", "input")));
    QVERIFY(!canvas.wireMark(wire("in", "x", "flat", "input")));
    QCOMPARE(scene->edgeItem(wire("in", "x", "flat", "input"))->label(), QString());  // no shapes: no dataset

    // The union is not validated: no card shows a problem (two wires feed fc2.input).
    for (const graph::Node& n : scene->document()->graph().nodes)
      QVERIFY2(!scene->nodeItem(QString::fromStdString(n.id))->problemSeverity(), n.id.c_str());

    // As painted: green around the added node, amber on the changed one, red on the removed.
    QVERIFY(pixelsNear(render(scene, added->sceneBoundingRect()), added->colour()) > 200);
    QVERIFY(pixelsNear(render(scene, fc1->sceneBoundingRect()), fc1->colour()) > 200);
    QVERIFY(pixelsNear(render(scene, removed->sceneBoundingRect()), removed->colour()) > 100);
  }

  void canvasFitsTheDrawingAndCannotBeEdited() {
    const graph::Graph a = testing::diff_before(), b = testing::diff_after();
    GraphDiffCanvas canvas;
    canvas.resize(700, 420);
    canvas.show();
    QVERIFY(QTest::qWaitForWindowExposed(&canvas));
    canvas.showDiff(a, b, graph::diff(a, b));
    NodeView* view = canvas.view();
    const QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
    for (QGraphicsItem* item : canvas.scene()->items())
      if (!item->parentItem() && !qgraphicsitem_cast<EdgeItem*>(item))
        QVERIFY(visible.contains(item->sceneBoundingRect()));
    QVERIFY(view->zoom() < 1);

    // A drag pans (nothing moves), Delete deletes nothing.
    const graph::Graph before = canvas.scene()->document()->graph();
    NodeItem* fc1 = canvas.scene()->nodeItem("fc1");
    const QPoint at = view->mapFromScene(fc1->sceneBoundingRect().center());
    QTest::mousePress(view->viewport(), Qt::LeftButton, {}, at);
    QTest::mouseMove(view->viewport(), at + QPoint(60, 40));
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, at + QPoint(60, 40));
    QTest::keyClick(view, Qt::Key_Delete);
    QCOMPARE(canvas.scene()->document()->graph(), before);
    QCOMPARE(fc1->pos(), QPointF(560, 0));
    QVERIFY(canvas.scene()->selectedItems().isEmpty());
  }

  void marksFollowTheTheme() {
    const graph::Graph a = testing::diff_before(), b = testing::diff_after();
    GraphDiffCanvas canvas;
    canvas.showDiff(a, b, graph::diff(a, b));
    ThemeManager::instance().setMode(ThemeMode::Dark);
    const Theme& dark = ThemeManager::instance().theme();
    QCOMPARE(canvas.wireMark(wire("act", "output", "drop2", "input"))->pen().color(), diffColour(DiffKind::Added, dark));
    QCOMPARE(canvas.nodeMark("fc1")->colour(), diffColour(DiffKind::Changed, dark));
    QVERIFY(diffColour(DiffKind::Added, dark) != diffColour(DiffKind::Added, Theme::lightTheme()));
  }

  void comparisonOverlaysCurvesAndListsSettings() {
    RunComparison comparison;
    comparison.resize(1400, 800);
    comparison.show();
    const ComparedRun a{"Run 1", record("/runs/a", 3, 2.0), testing::diff_before()};
    const ComparedRun b{"Run 3", record("/runs/b", 4, 1.0), testing::diff_after()};
    comparison.compare(a, b);

    TrainingPlots* plots = comparison.plots();
    const std::vector<int> ids = plots->runIds();
    QCOMPARE(ids.size(), size_t(2));
    QCOMPARE(plots->runInfo(ids[0]).name, QString("A: Run 1"));
    QCOMPARE(plots->runInfo(ids[1]).name, QString("B: Run 3"));
    QVERIFY(plots->runInfo(ids[0]).colour != plots->runInfo(ids[1]).colour);
    for (size_t i = 0; i < 2; ++i) {
      const session::RunRecord& r = i == 0 ? a.record : b.record;
      std::vector<double> train, eval, accuracy;
      for (const train::EpochEnd& e : r.epochs) {
        train.push_back(e.train_loss);
        eval.push_back(e.eval_loss);
        accuracy.push_back(100 * e.eval_accuracy);
      }
      QCOMPARE(values(plots->graph(ids[i], TrainingPlots::Series::TrainLoss)), train);
      QCOMPARE(values(plots->graph(ids[i], TrainingPlots::Series::EvalLoss)), eval);
      QCOMPARE(values(plots->graph(ids[i], TrainingPlots::Series::EvalAccuracy)), accuracy);
      // Validation solid, training dashed, in the run's colour.
      QCOMPARE(plots->graph(ids[i], TrainingPlots::Series::EvalLoss)->pen().style(), Qt::SolidLine);
      QCOMPARE(plots->graph(ids[i], TrainingPlots::Series::TrainLoss)->pen().style(), Qt::DashLine);
      QCOMPARE(plots->graph(ids[i], TrainingPlots::Series::EvalLoss)->pen().color(), plots->runInfo(ids[i]).colour);
    }

    const QTableWidget* table = comparison.settingsTable();
    QVERIFY(table->isVisible());
    QCOMPARE(table->rowCount(), 4);
    QCOMPARE(table->horizontalHeaderItem(1)->text(), QString("A: Run 1"));
    QCOMPARE(table->horizontalHeaderItem(2)->text(), QString("B: Run 3"));
    const QStringList expected{"dataset.path|data/mnist|data/mnist-copy", "dataset.augment.shift|0|2",
                               "training.optimizer|sgd|adam", "training.lr|0.1|0.01"};
    for (int row = 0; row < table->rowCount(); ++row)
      QCOMPARE(QStringList({table->item(row, 0)->text(), table->item(row, 1)->text(), table->item(row, 2)->text()})
                   .join('|'),
               expected[row]);

    QCOMPARE(comparison.summaryText(), QString("1 node added, 1 removed, 1 retyped, 1 renamed, 1 parameter changed, "
                                               "2 wires added, 2 removed, 4 settings differ"));
    QVERIFY(comparison.titleText().contains("A: Run 1"));
    QVERIFY(comparison.titleText().contains("B: Run 3"));
    QVERIFY(comparison.titleText().contains("2025-06-01"));
    QCOMPARE(comparison.canvas()->nodeMark("drop2")->kind(), DiffKind::Added);

    QSignalSpy closed(&comparison, &RunComparison::closeRequested);
    QTest::mouseClick(comparison.findChild<QPushButton*>("closeComparison"), Qt::LeftButton);
    QCOMPARE(closed.size(), 1);
  }

  void sameSettingsSayItInsteadOfAnEmptyTable() {
    RunComparison comparison;
    comparison.show();
    graph::Graph b = testing::diff_before();
    b.nodes[2].params["out_features"] = int64_t(64);
    comparison.compare({"Run 1", record("/runs/a", 2, 1.0), testing::diff_before()}, {"Run 2", record("/runs/b", 2, 1.0), b});
    QVERIFY(!comparison.settingsTable()->isVisible());
    QCOMPARE(comparison.settingsTable()->rowCount(), 0);
    QCOMPARE(comparison.summaryText(), QString("1 parameter changed"));
    // A second comparison replaces the first.
    QCOMPARE(comparison.plots()->runCount(), 2);
    QVERIFY(!comparison.canvas()->nodeMark("drop2"));
    QCOMPARE(comparison.canvas()->nodeMark("fc1")->kind(), DiffKind::Changed);
  }

  void runListAsksToCompareTwoSelectedRuns() {
    TrainingPlots plots;
    RunList list(&plots);
    list.show();
    const int newer = plots.beginRun("Run 2", {}), older = plots.beginRun("Run 1", {}), live = plots.beginRun("Run 3", {});
    plots.finishRun(newer, "completed");
    plots.finishRun(older, "completed");
    plots.setRunOrigin(newer, {"/runs/2", QDateTime(QDate(2025, 6, 2), QTime(9, 0)), true, false, {}});
    plots.setRunOrigin(older, {"/runs/1", QDateTime(QDate(2025, 6, 1), QTime(9, 0)), true, false, {}});
    plots.setRunOrigin(live, {"/runs/3", QDateTime::currentDateTime(), false, false, {}});  // still training

    QAction* compare = list.compareAction();
    list.setCurrentItem(list.itemForRun(newer));
    QVERIFY(!compare->isEnabled());  // one run
    // Ctrl+click adds the second run to the selection.
    QTest::mouseClick(list.viewport(), Qt::LeftButton, Qt::ControlModifier,
                      list.visualItemRect(list.itemForRun(older)).center());
    QCOMPARE(list.selectedRuns().size(), size_t(2));
    QVERIFY(compare->isEnabled());
    QSignalSpy asked(&list, &RunList::compareRequested);
    compare->trigger();
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked[0][0].toInt(), older);  // the older run is A
    QCOMPARE(asked[0][1].toInt(), newer);

    // Right-click a run → Compare With ▸ another: the older one is A again.
    asked.clear();
    QStringList offered;
    QTimer::singleShot(0, &list, [&] {
      auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
      QVERIFY(menu);
      for (QAction* a : menu->actions())
        if (a->menu() && a->text() == "Compare &With") {
          for (QAction* run : a->menu()->actions()) offered << run->text();
          a->menu()->actions().first()->trigger();
        }
      menu->close();
    });
    const QPoint at = list.visualItemRect(list.itemForRun(newer)).center();
    QContextMenuEvent event(QContextMenuEvent::Mouse, at, list.viewport()->mapToGlobal(at));
    QApplication::sendEvent(list.viewport(), &event);
    QCOMPARE(offered, QStringList{"Run 1"});  // not itself, not the run training
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked[0][0].toInt(), older);
    QCOMPARE(asked[0][1].toInt(), newer);

    // A run still training has no finished log to compare.
    QTest::mouseClick(list.viewport(), Qt::LeftButton, Qt::ControlModifier,
                      list.visualItemRect(list.itemForRun(older)).center());
    QTest::mouseClick(list.viewport(), Qt::LeftButton, Qt::ControlModifier,
                      list.visualItemRect(list.itemForRun(live)).center());
    QCOMPARE(list.selectedRuns().size(), size_t(2));
    QVERIFY(!compare->isEnabled());
  }
};

QTEST_MAIN(TestWidgetsRunDiff)
#include "test_widgets_run_diff.moc"
