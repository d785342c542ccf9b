// The training dashboard's plots and run list: points land where they belong, the smoothed
// loss is smoother than the raw one, runs get their own colours and hide from the run list,
// the log toggle, hover, zoom and fit, CSV and PNG export, batches that arrive together drawn
// together (the replot throttle), and the theme; a run with two loss nodes gets each node's
// curves, named, in the hover and the CSV, and a one-loss run none. Also renders two synthetic
// runs in both themes to /tmp/plots-light.png and /tmp/plots-dark.png (and the dashboard with
// its run list beside them), and a two-loss run beside a one-loss one to
// /tmp/plots-loss-nodes-light.png and -dark.png, for a human to look at.
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStyleOptionViewItem>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QToolTip>
#include <QWheelEvent>
#include <cmath>
#include <qcustomplot.h>
#include <random>

#include "common/theme.h"
#include "dashboard/run_list.h"
#include "dashboard/training_plots.h"

using namespace plexus::widgets;
using plexus::train::BatchEnd;
using plexus::train::EpochEnd;
using plexus::train::LossPart;
using Series = TrainingPlots::Series;

namespace {

// One epoch of a synthetic run: an exponentially falling loss with noise, a cosine learning rate.
std::vector<BatchEnd> epochOf(int epoch, int epochs, int batches, double floor, std::mt19937& rng, double lr0) {
  std::normal_distribution<double> noise(0.0, 0.12);
  std::vector<BatchEnd> out;
  for (int b = 1; b <= batches; ++b) {
    const double t = double((epoch - 1) * batches + b) / double(epochs * batches);
    BatchEnd e;
    e.epoch = epoch;
    e.epochs = epochs;
    e.batch = b;
    e.batches = batches;
    e.loss = std::max(0.01, floor + 2.2 * std::exp(-5 * t) + noise(rng) * (0.3 + std::exp(-3 * t)));
    e.lr = lr0 * 0.5 * (1 + std::cos(M_PI * t));
    out.push_back(e);
  }
  return out;
}

EpochEnd epochEnd(int epoch, int epochs, double trainLoss, double trainAccuracy, double evalLoss, double evalAccuracy) {
  EpochEnd e;
  e.epoch = epoch;
  e.epochs = epochs;
  e.train_loss = trainLoss;
  e.train_accuracy = trainAccuracy;
  e.has_eval = true;
  e.eval_loss = evalLoss;
  e.eval_accuracy = evalAccuracy;
  e.classes = 10;
  return e;
}

// A whole synthetic classification run, as the trainer reports it.
int addRun(TrainingPlots& plots, const QString& name, const QString& settings, int epochs, int batches, double floor,
           double lr0, unsigned seed) {
  std::mt19937 rng(seed);
  const int run = plots.beginRun(name, settings);
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const auto batch = epochOf(epoch, epochs, batches, floor, rng, lr0);
    for (size_t i = 0; i < batch.size(); i += 25)
      plots.addBatches(run, {batch.begin() + qsizetype(i), batch.begin() + qsizetype(std::min(i + 25, batch.size()))});
    double mean = 0;
    for (const BatchEnd& b : batch) mean += b.loss / double(batch.size());
    const double accuracy = 1 - std::min(0.9, 0.35 * mean);
    plots.addEpoch(run, epochEnd(epoch, epochs, mean, accuracy, mean * 1.08 + 0.02, accuracy - 0.015));
  }
  plots.finishRun(run, "completed");
  return run;
}

// A synthetic run of a two-loss graph, as the trainer reports it: a classifier's cross-entropy
// ("classify") and a decoder's MSE ("reconstruct") each batch and epoch, the total their sum
// with the MSE weighed 0.5. Epoch e's means are 1/e and 0.1/e (validation 10 % higher).
int addTwoLossRun(TrainingPlots& plots, const QString& name, int epochs, int batches, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.05);
  const int run = plots.beginRun(name, "");
  plots.setLossNames(run, {{"classify", {"CrossEntropy", "CrossEntropy 'classify'", false}}});  // reconstruct: unnamed
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    std::vector<BatchEnd> batch;
    for (int b = 1; b <= batches; ++b) {
      BatchEnd e;
      e.epoch = epoch;
      e.epochs = epochs;
      e.batch = b;
      e.batches = batches;
      e.lr = 0.1;
      const double t = epoch - 1 + double(b) / batches;
      const double ce = std::max(0.01, 2.3 * std::exp(-t) + noise(rng)), mse = std::max(0.001, 0.1 * std::exp(-0.5 * t) + 0.1 * noise(rng));
      e.losses = {{"classify", ce}, {"reconstruct", mse}};
      e.loss = ce + 0.5 * mse;
      batch.push_back(e);
    }
    plots.addBatches(run, batch);
    EpochEnd e = epochEnd(epoch, epochs, 1.05 / epoch, 0.8, 1.1 * 1.05 / epoch, 0.78);
    e.train_losses = {{"classify", 1.0 / epoch}, {"reconstruct", 0.1 / epoch}};
    e.eval_losses = {{"classify", 1.1 / epoch}, {"reconstruct", 0.11 / epoch}};
    plots.addEpoch(run, e);
  }
  plots.finishRun(run, "completed");
  return run;
}

// The names in the legends of a plot's loss nodes (every legend but its own, the runs' or the
// totals').
QStringList lossNodeLegendNames(QCustomPlot* plot) {
  QStringList names;
  for (QCPLegend* legend : plot->findChildren<QCPLegend*>())
    if (legend != plot->legend && legend->visible())
      for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) names << item->plottable()->name();
  return names;
}

double totalVariation(const QCPGraph* g) {
  double tv = 0;
  for (int i = 1; i < g->dataCount(); ++i) tv += std::abs(g->data()->at(i)->value - g->data()->at(i - 1)->value);
  return tv;
}

QStringList legendNames(QCustomPlot* plot) {
  QStringList names;
  for (int i = 0; i < plot->legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i))) names << item->plottable()->name();
  return names;
}

QToolButton* button(TrainingPlots& plots, const char* name) {
  return plots.findChild<QToolButton*>(QString::fromLatin1(name));
}

QRect checkBoxRect(QTreeWidget* tree, QTreeWidgetItem* item) {
  QStyleOptionViewItem option;
  option.initFrom(tree->viewport());
  option.rect = tree->visualItemRect(item);
  option.features =
      QStyleOptionViewItem::HasCheckIndicator | QStyleOptionViewItem::HasDisplay | QStyleOptionViewItem::HasDecoration;
  option.decorationSize = tree->iconSize().isValid() ? tree->iconSize() : QSize(16, 16);
  option.text = item->text(0);
  option.icon = item->icon(0);
  return tree->style()->subElementRect(QStyle::SE_ItemViewItemCheckIndicator, &option, tree->viewport());
}

// Draws what the plots hold now instead of when their replot throttle next allows: fit() (the
// view follows the data, as it does until the user zooms or pans) replots at once, and the
// replots it queues run with the posted events.
void settle(TrainingPlots& plots) {
  plots.fit();
  QCoreApplication::sendPostedEvents();
}

}  // namespace

class TestPlots : public QObject {
  Q_OBJECT

 private slots:
  void init() { ThemeManager::instance().setMode(ThemeMode::Light); }

  void batchesMakePointsAndTheSmoothedLossIsSmoother() {
    TrainingPlots plots;
    std::mt19937 rng(1);
    const int run = plots.beginRun("a", "SGD");
    plots.addBatches(run, epochOf(1, 2, 50, 0.1, rng, 0.1));
    plots.addBatches(run, epochOf(2, 2, 50, 0.1, rng, 0.1));
    QCOMPARE(plots.runCount(), 1);
    QCOMPARE(plots.pointCount(run), 100);
    const QCPGraph* raw = plots.graph(run, Series::RawLoss);
    const QCPGraph* smooth = plots.graph(run, Series::SmoothedLoss);
    QCOMPARE(smooth->dataCount(), 100);
    QCOMPARE(plots.graph(run, Series::LearningRate)->dataCount(), 100);
    QCOMPARE(raw->data()->at(0)->key, 1.0);
    QCOMPARE(raw->data()->at(50)->key, 51.0);  // epoch 2, batch 1
    QCOMPARE(raw->data()->at(99)->key, 100.0);
    QCOMPARE(smooth->data()->at(0)->value, raw->data()->at(0)->value);  // debiased: starts on the data
    QVERIFY2(totalVariation(smooth) < 0.5 * totalVariation(raw),
             qPrintable(QStringLiteral("%1 vs %2").arg(totalVariation(smooth)).arg(totalVariation(raw))));
    QCOMPARE(plots.pointCount(7), 0);  // unknown runs are ignored
    plots.addBatches(7, epochOf(1, 1, 5, 0.1, rng, 0.1));
  }

  void epochsLandOnTheirEpochWithAccuracyInPercent() {
    TrainingPlots plots;
    const int run = plots.beginRun("a", "");
    plots.addEpoch(run, epochEnd(1, 2, 0.9, 0.70, 0.8, 0.75));
    plots.addEpoch(run, epochEnd(2, 2, 0.5, 0.85, 0.45, 0.88));
    const QCPGraph* acc = plots.graph(run, Series::EvalAccuracy);
    QCOMPARE(acc->valueAxis(), plots.epochPlot()->yAxis2);  // the right-hand axis
    QCOMPARE(acc->dataCount(), 2);
    QCOMPARE(acc->data()->at(1)->key, 2.0);
    QCOMPARE(acc->data()->at(1)->value, 88.0);
    QCOMPARE(plots.graph(run, Series::TrainAccuracy)->data()->at(0)->value, 70.0);
    QCOMPARE(plots.graph(run, Series::EvalLoss)->data()->at(0)->value, 0.8);
    QCOMPARE(plots.graph(run, Series::TrainLoss)->data()->at(1)->value, 0.5);
    QCOMPARE(plots.runInfo(run).bestEvalAccuracy, std::optional(0.88));
    QVERIFY(acc->visible());
    QVERIFY(plots.epochPlot()->yAxis2->visible());
    QCOMPARE(legendNames(plots.epochPlot()),
             QStringList({"val loss", "val acc", "train loss", "train acc"}));

    // A regression run reports accuracy 0: no accuracy curves, no accuracy axis.
    TrainingPlots regression;
    const int r = regression.beginRun("mse", "");
    EpochEnd e;
    e.epoch = 1;
    e.train_loss = 3.5;
    regression.addEpoch(r, e);
    QVERIFY(!regression.graph(r, Series::TrainAccuracy)->visible());
    QVERIFY(!regression.epochPlot()->yAxis2->visible());
    QCOMPARE(legendNames(regression.epochPlot()), QStringList({"train loss"}));
    QVERIFY(!regression.runInfo(r).bestEvalAccuracy);
  }

  void aSecondRunHasItsOwnColourAndHidesFromTheRunList() {
    TrainingPlots plots;
    RunList list(&plots);
    const int a = addRun(plots, "adam", "Adam lr 1e-3", 2, 20, 0.1, 1e-3, 1);
    const int b = addRun(plots, "sgd", "SGD lr 0.1", 2, 20, 0.2, 0.1, 2);
    QCOMPARE(plots.runCount(), 2);
    QVERIFY(plots.runInfo(a).colour != plots.runInfo(b).colour);
    QCOMPARE(plots.graph(b, Series::SmoothedLoss)->pen().color(), plots.runInfo(b).colour);
    QCOMPARE(list.topLevelItemCount(), 2);
    QTreeWidgetItem* item = list.itemForRun(b);
    QCOMPARE(item->text(RunList::NameColumn), QStringLiteral("sgd"));
    QCOMPARE(item->text(RunList::StatusColumn), QStringLiteral("completed"));
    QVERIFY(item->text(RunList::BestColumn).endsWith('%'));
    QVERIFY(item->toolTip(RunList::NameColumn).contains("SGD lr 0.1"));
    QCOMPARE(legendNames(plots.lossPlot()), QStringList({"adam", "sgd"}));

    list.resize(500, 200);
    list.show();
    QVERIFY(QTest::qWaitForWindowExposed(&list));
    const QRect box = checkBoxRect(&list, item);
    QVERIFY(box.isValid());
    QTest::mouseClick(list.viewport(), Qt::LeftButton, Qt::NoModifier, box.center());
    QCOMPARE(item->checkState(RunList::NameColumn), Qt::Unchecked);
    QVERIFY(!plots.runInfo(b).visible);
    for (Series s : {Series::RawLoss, Series::SmoothedLoss, Series::LearningRate, Series::EvalLoss,
                     Series::EvalAccuracy, Series::TrainLoss, Series::TrainAccuracy})
      QVERIFY(!plots.graph(b, s)->visible());
    QVERIFY(plots.graph(a, Series::SmoothedLoss)->visible());
    QCOMPARE(legendNames(plots.lossPlot()), QStringList({"adam"}));

    // The keyboard: Space on the current row shows it again.
    list.setCurrentItem(item);
    list.setFocus();
    QTest::keyClick(list.viewport(), Qt::Key_Space);
    QVERIFY(plots.runInfo(b).visible);
    QVERIFY(plots.graph(b, Series::EvalAccuracy)->visible());

    // Renaming in the list renames the legend entry.
    QTest::keyClick(list.viewport(), Qt::Key_F2);
    auto* editor = list.viewport()->findChild<QLineEdit*>();
    QVERIFY(editor);
    editor->selectAll();
    QTest::keyClicks(editor, "sgd momentum");
    QTest::keyClick(editor, Qt::Key_Return);
    QTRY_COMPARE(plots.runInfo(b).name, QStringLiteral("sgd momentum"));  // the view commits queued
    QCOMPARE(legendNames(plots.lossPlot()), QStringList({"adam", "sgd momentum"}));

    // New runs and cleared plots reach the list.
    const int c = plots.beginRun("third", "");
    QCOMPARE(list.itemForRun(c)->text(RunList::StatusColumn), QStringLiteral("running"));
    plots.finishRun(c, "failed: out of memory");
    QCOMPARE(list.itemForRun(c)->text(RunList::StatusColumn), QStringLiteral("failed: out of memory"));
    plots.clear();
    QCOMPARE(list.topLevelItemCount(), 0);
    QCOMPARE(plots.runCount(), 0);
    QCOMPARE(plots.lossPlot()->graphCount(), 0);
  }

  void aRemovedRunTakesItsCurvesAndRowAndTheOthersKeepTheirColours() {
    TrainingPlots plots;
    RunList list(&plots);
    QSignalSpy removed(&plots, &TrainingPlots::runRemoved);
    const int a = addRun(plots, "a", "", 2, 20, 0.1, 0.1, 1);
    const int b = addRun(plots, "b", "", 2, 20, 0.2, 0.1, 2);
    const int c = addRun(plots, "c", "", 2, 20, 0.3, 0.1, 3);
    const QColor colourC = plots.runInfo(c).colour;
    const int graphs = plots.lossPlot()->graphCount();
    plots.removeRun(b);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(plots.runIds(), (std::vector<int>{a, c}));
    QCOMPARE(plots.lossPlot()->graphCount(), graphs - 2);  // its raw and smoothed losses
    QVERIFY(!plots.graph(b, Series::SmoothedLoss));
    QCOMPARE(plots.runInfo(c).colour, colourC);
    QCOMPARE(legendNames(plots.lossPlot()), QStringList({"a", "c"}));
    QCOMPARE(list.topLevelItemCount(), 2);
    QVERIFY(!list.itemForRun(b));
    const int d = plots.beginRun("d", "");  // a new run never takes a removed run's id
    QVERIFY(d != a && d != b && d != c);
  }

  // A row's swatch is one icon through the run's updates: a new one per update left its pixmaps
  // in Qt's pixmap cache, which grew over a long session (test_app_soak, bench_soak).
  void aRunsSwatchIsOneIconThroughItsUpdates() {
    TrainingPlots plots;
    RunList list(&plots);
    const int run = plots.beginRun("a", "");
    const qint64 swatch = list.itemForRun(run)->icon(RunList::NameColumn).cacheKey();
    plots.addEpoch(run, epochEnd(1, 2, 0.9, 0.70, 0.8, 0.75));
    plots.finishRun(run, "completed");
    QCOMPARE(list.itemForRun(run)->icon(RunList::NameColumn).cacheKey(), swatch);
  }

  void theRunListsActionsFollowTheSelectedRun() {
    TrainingPlots plots;
    RunList list(&plots);
    const int kept = addRun(plots, "kept", "", 1, 10, 0.1, 0.1, 1);
    plots.setRunOrigin(kept, {"/runs/kept", QDateTime(QDate(2025, 6, 1), QTime(14, 3)), true, true, "Test: 97%"});
    const int live = plots.beginRun("live", "");
    plots.setRunOrigin(live, {"/runs/live", QDateTime::currentDateTime(), false, false, {}});
    QVERIFY(!list.continueAction()->isEnabled() && !list.deleteAction()->isEnabled());  // nothing selected

    list.setCurrentItem(list.itemForRun(kept));
    QVERIFY(list.continueAction()->isEnabled() && list.deleteAction()->isEnabled());
    QCOMPARE(list.itemForRun(kept)->text(RunList::StartedColumn), QStringLiteral("2025-06-01 14:03"));
    QVERIFY(list.itemForRun(kept)->toolTip(RunList::NameColumn).contains("Test: 97%"));
    list.setTraining(true);  // one run at a time
    QVERIFY(!list.continueAction()->isEnabled() && list.deleteAction()->isEnabled());
    QSignalSpy deleteRequested(&list, &RunList::deleteRequested);
    list.deleteAction()->trigger();
    QCOMPARE(deleteRequested.count(), 1);
    QCOMPARE(deleteRequested.at(0).at(0).toInt(), kept);

    list.setCurrentItem(list.itemForRun(live));  // training: neither continued nor deleted
    QVERIFY(!list.continueAction()->isEnabled() && !list.deleteAction()->isEnabled());
    QVERIFY(list.itemForRun(live)->text(RunList::StartedColumn).startsWith("this session, "));
    plots.finishRun(live, "completed");
    QVERIFY(list.deleteAction()->isEnabled());

    // A regression's best is its lowest validation loss.
    const int regression = plots.beginRun("regression", "");
    EpochEnd e;
    e.epoch = 1;
    e.has_eval = true;
    e.eval_loss = 0.25;
    plots.addEpoch(regression, e);
    e.epoch = 2;
    e.eval_loss = 0.5;
    plots.addEpoch(regression, e);
    QCOMPARE(list.itemForRun(regression)->text(RunList::BestColumn), QStringLiteral("loss 0.25"));
  }

  void theLogToggleSwitchesTheLossAxes() {
    TrainingPlots plots;
    addRun(plots, "a", "", 2, 20, 0.1, 0.1, 1);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    QToolButton* log = button(plots, "logScaleButton");
    QVERIFY(log && log->isCheckable());
    QTest::mouseClick(log, Qt::LeftButton);
    QVERIFY(plots.logScale());
    QCOMPARE(plots.lossPlot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
    QCOMPARE(plots.epochPlot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
    QVERIFY(plots.lossPlot()->yAxis->range().lower > 0);
    QCOMPARE(plots.lrPlot()->yAxis->scaleType(), QCPAxis::stLinear);
    QTest::mouseClick(log, Qt::LeftButton);
    QCOMPARE(plots.lossPlot()->yAxis->scaleType(), QCPAxis::stLinear);
    plots.setLogScale(true);
    QVERIFY(log->isChecked());
  }

  void wheelZoomStopsFollowingAndDoubleClickFits() {
    TrainingPlots plots;
    plots.resize(800, 700);
    const int run = addRun(plots, "a", "", 1, 100, 0.1, 0.1, 1);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    settle(plots);
    QCustomPlot* loss = plots.lossPlot();
    QCOMPARE(loss->xAxis->range().contains(100), true);

    const QPointF centre = loss->axisRect()->rect().center();
    QWheelEvent wheel(centre, loss->mapToGlobal(centre), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(loss, &wheel);
    const QCPRange zoomed = loss->xAxis->range();
    QVERIFY(zoomed.size() < 90);
    QCOMPARE(plots.lrPlot()->xAxis->range(), zoomed);  // the lr plot follows the loss plot's x

    std::mt19937 rng(3);
    auto more = epochOf(2, 2, 100, 0.1, rng, 0.1);
    QCoreApplication::sendPostedEvents();  // the zoom's own replots
    QSignalSpy replotted(loss, &QCustomPlot::afterReplot);
    plots.addBatches(run, more);
    QTRY_VERIFY_WITH_TIMEOUT(replotted.count() > 0, 10000);  // the new points are drawn
    QCOMPARE(loss->xAxis->range(), zoomed);  // and the user's view stays

    QTest::mouseDClick(loss, Qt::LeftButton, Qt::NoModifier, centre.toPoint());
    QTest::mouseRelease(loss, Qt::LeftButton, Qt::NoModifier, centre.toPoint());  // as a real double click ends
    QTRY_VERIFY_WITH_TIMEOUT(loss->xAxis->range().contains(1) && loss->xAxis->range().contains(200), 10000);
  }

  void hoverShowsTheValuesUnderThePointer() {
    TrainingPlots plots;
    plots.resize(800, 700);
    const int run = addRun(plots, "hover run", "", 2, 50, 0.1, 0.1, 1);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    settle(plots);
    const QCPGraph* smooth = plots.graph(run, Series::SmoothedLoss);
    const auto point = smooth->data()->at(60);
    const QPoint pixel = smooth->coordsToPixels(point->key, point->value).toPoint();
    QTest::mouseMove(plots.lossPlot(), pixel);
    QTRY_VERIFY_WITH_TIMEOUT(QToolTip::isVisible(), 10000);
    QVERIFY2(QToolTip::text().contains("step 61") && QToolTip::text().contains("epoch 2") &&
                 QToolTip::text().contains("smoothed") && QToolTip::text().contains("hover run"),
             qPrintable(QToolTip::text()));

    const QCPGraph* acc = plots.graph(run, Series::EvalAccuracy);
    const QPoint at = acc->coordsToPixels(2, acc->data()->at(1)->value).toPoint();
    QTest::mouseMove(plots.epochPlot(), at);
    QTRY_VERIFY_WITH_TIMEOUT(QToolTip::text().contains("epoch 2"), 10000);
    QVERIFY2(QToolTip::text().contains("validation") && QToolTip::text().contains('%'), qPrintable(QToolTip::text()));
  }

  void csvHasAHeaderAndOneRowPerPoint() {
    TrainingPlots plots;
    const int a = addRun(plots, "adam", "", 2, 30, 0.1, 1e-3, 1);
    const int b = addRun(plots, "sgd, momentum", "", 3, 10, 0.2, 0.1, 2);
    QTemporaryDir dir;
    const QString path = dir.filePath("runs.csv");
    QVERIFY(plots.exportCsv(path));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.first(), QStringLiteral("run,kind,step,epoch,loss,smoothed_loss,lr,train_loss,train_accuracy,"
                                           "eval_loss,eval_accuracy,node"));
    QCOMPARE(lines.size(), 1 + plots.pointCount(a) + plots.pointCount(b) + 2 + 3);
    int batches = 0, epochs = 0, quoted = 0;
    for (const QString& line : lines.mid(1)) {
      QString rest = line;
      if (rest.startsWith("\"sgd, momentum\",")) {  // quoted, as the name has a comma
        rest = rest.mid(16);
        ++quoted;
      } else {
        rest = rest.section(',', 1);
      }
      const QStringList f = rest.split(',');
      QCOMPARE(f.size(), 11);
      QVERIFY(f[10].isEmpty());  // every row a total: these runs have one loss
      if (f[0] == "batch") {
        ++batches;
        QVERIFY(!f[3].isEmpty() && !f[4].isEmpty() && f[6].isEmpty());
      } else {
        QCOMPARE(f[0], QStringLiteral("epoch"));
        ++epochs;
        bool ok = false;
        QVERIFY(f[9].toDouble(&ok) <= 1 && ok);  // a fraction
      }
    }
    QCOMPARE(batches, 60 + 30);
    QCOMPARE(epochs, 5);
    QCOMPARE(quoted, 30 + 3);
    QVERIFY(!plots.exportCsv(dir.filePath("no/such/dir/runs.csv")));
  }

  void aTwoLossRunGetsEachLossNodesCurvesNamed() {
    TrainingPlots plots;
    const int single = addRun(plots, "single", "", 2, 10, 0.1, 0.1, 1);
    const int lossGraphs = plots.lossPlot()->graphCount(), epochGraphs = plots.epochPlot()->graphCount();
    const int run = addTwoLossRun(plots, "multi", 3, 10, 2);
    QCOMPARE(plots.lossNodes(run), QStringList({"classify", "reconstruct"}));
    QCOMPARE(plots.lossNodes(single), QStringList());

    // Per batch: each node's smoothed loss, debiased as the total's, one point per batch.
    const QCPGraph* classify = plots.lossNodeGraph(run, "classify", Series::SmoothedLoss);
    const QCPGraph* reconstruct = plots.lossNodeGraph(run, "reconstruct", Series::SmoothedLoss);
    QVERIFY(classify && reconstruct);
    QCOMPARE(classify->dataCount(), 30);
    QCOMPARE(classify->data()->at(29)->key, 30.0);
    const QCPGraph* total = plots.graph(run, Series::RawLoss);
    // The first batch's total is its cross-entropy plus half its MSE: the smoothed parts start on them.
    QVERIFY(std::abs(total->data()->at(0)->value -
                     (classify->data()->at(0)->value + 0.5 * reconstruct->data()->at(0)->value)) < 1e-12);
    QVERIFY(classify->data()->at(29)->value < classify->data()->at(0)->value);  // it falls

    // Per epoch: training and validation means, on their epochs.
    const QCPGraph* trainReconstruct = plots.lossNodeGraph(run, "reconstruct", Series::TrainLoss);
    const QCPGraph* evalClassify = plots.lossNodeGraph(run, "classify", Series::EvalLoss);
    QCOMPARE(trainReconstruct->dataCount(), 3);
    QCOMPARE(trainReconstruct->data()->at(1)->key, 2.0);
    QCOMPARE(trainReconstruct->data()->at(1)->value, 0.05);
    QCOMPARE(evalClassify->data()->at(2)->value, 1.1 / 3);
    QVERIFY(!plots.lossNodeGraph(run, "classify", Series::EvalAccuracy));
    QVERIFY(!plots.lossNodeGraph(run, "nonesuch", Series::TrainLoss));

    // Named by their labels where known, else by their ids; in the legends of their own.
    QCOMPARE(classify->name(), QStringLiteral("CrossEntropy 'classify'"));
    QCOMPARE(evalClassify->name(), QStringLiteral("CrossEntropy 'classify'"));
    QCOMPARE(reconstruct->name(), QStringLiteral("reconstruct"));
    const QStringList nodes{"CrossEntropy 'classify'", "reconstruct"};
    QCOMPARE(lossNodeLegendNames(plots.lossPlot()), nodes);
    QCOMPARE(lossNodeLegendNames(plots.epochPlot()), nodes);
    QCOMPARE(legendNames(plots.lossPlot()), QStringList({"single", "multi"}));  // the runs, as before
    QCOMPARE(legendNames(plots.epochPlot()), QStringList({"val loss", "val acc", "train loss", "train acc"}));

    // In the run's hue but not its colour, and each node its own look.
    const QColor colour = plots.runInfo(run).colour;
    QVERIFY(classify->pen().color() != colour && reconstruct->pen().color() != colour);
    QVERIFY(classify->pen().color() != reconstruct->pen().color());
    QVERIFY(classify->pen().dashPattern() != reconstruct->pen().dashPattern());
    QVERIFY(classify->pen().widthF() < plots.graph(run, Series::SmoothedLoss)->pen().widthF());
    QCOMPARE(plots.lossNodeGraph(run, "classify", Series::TrainLoss)->pen().style(), Qt::DashLine);  // as the totals
    QCOMPARE(evalClassify->pen().style(), Qt::SolidLine);
    const auto shape = [&](const char* node) {
      return plots.lossNodeGraph(run, node, Series::EvalLoss)->scatterStyle().shape();
    };
    QVERIFY(shape("classify") != shape("reconstruct"));
    QVERIFY(shape("classify") != plots.graph(run, Series::EvalLoss)->scatterStyle().shape());
    QVERIFY(std::abs(classify->pen().color().hslHueF() - colour.hslHueF()) < 0.02);

    // A hidden run's loss nodes hide too, and leave the legends; a one-loss run has no such curves.
    plots.setRunVisible(run, false);
    QVERIFY(!classify->visible() && !evalClassify->visible());
    QCOMPARE(lossNodeLegendNames(plots.lossPlot()), QStringList());
    QCOMPARE(lossNodeLegendNames(plots.epochPlot()), QStringList());
    plots.setRunVisible(run, true);
    plots.removeRun(run);
    QCOMPARE(plots.lossPlot()->graphCount(), lossGraphs + 2);  // the two legend keys stay, unshown
    QCOMPARE(plots.epochPlot()->graphCount(), epochGraphs + 2);
    QCOMPARE(lossNodeLegendNames(plots.lossPlot()), QStringList());

    TrainingPlots one;
    const int r = addRun(one, "one", "", 2, 10, 0.1, 0.1, 1);
    QCOMPARE(one.lossNodes(r), QStringList());
    QCOMPARE(one.lossPlot()->graphCount(), 2);   // raw and smoothed
    QCOMPARE(one.epochPlot()->graphCount(), 8);  // the four legend keys and the run's four lines
    QCOMPARE(lossNodeLegendNames(one.lossPlot()), QStringList());
    QCOMPARE(lossNodeLegendNames(one.epochPlot()), QStringList());
  }

  // Hovering a node's line names the node and shows its values; the CSV has each node's rows.
  void aTwoLossRunsHoverAndCsvHaveTheLossNodes() {
    TrainingPlots plots;
    plots.resize(800, 700);
    const int run = addTwoLossRun(plots, "multi", 3, 20, 3);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    settle(plots);
    const QCPGraph* reconstruct = plots.lossNodeGraph(run, "reconstruct", Series::SmoothedLoss);
    const auto point = reconstruct->data()->at(44);
    QTest::mouseMove(plots.lossPlot(), reconstruct->coordsToPixels(point->key, point->value).toPoint());
    QTRY_VERIFY_WITH_TIMEOUT(QToolTip::isVisible(), 10000);
    QVERIFY2(QToolTip::text().contains("step 45") &&
                 QToolTip::text().contains(QStringLiteral("<b>reconstruct: loss ")) &&
                 QToolTip::text().contains(QString::number(point->value, 'g', 4)) &&
                 QToolTip::text().contains("CrossEntropy 'classify': loss"),
             qPrintable(QToolTip::text()));

    const QCPGraph* evalClassify = plots.lossNodeGraph(run, "classify", Series::EvalLoss);
    QTest::mouseMove(plots.epochPlot(), evalClassify->coordsToPixels(3, evalClassify->data()->at(2)->value).toPoint());
    QTRY_VERIFY_WITH_TIMEOUT(QToolTip::text().contains("epoch 3"), 10000);
    QVERIFY2(QToolTip::text().contains("<b>CrossEntropy 'classify': 0.3667</b>") &&  // validation, 1.1 / 3
                 QToolTip::text().contains("reconstruct: 0.03333"),  // training, 0.1 / 3
             qPrintable(QToolTip::text()));

    QTemporaryDir dir;
    const QString path = dir.filePath("runs.csv");
    QVERIFY(plots.exportCsv(path));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 1 + 3 * 60 + 3 * 3);  // each batch and epoch: the total and two nodes
    QMap<QString, int> batchRows, epochRows;
    for (const QString& line : lines.mid(1)) {
      const QStringList f = line.split(',');
      QCOMPARE(f.size(), 12);
      (f[1] == "batch" ? batchRows : epochRows)[f[11]]++;
    }
    QCOMPARE(batchRows, (QMap<QString, int>{{"", 60}, {"classify", 60}, {"reconstruct", 60}}));
    QCOMPARE(epochRows, (QMap<QString, int>{{"", 3}, {"classify", 3}, {"reconstruct", 3}}));
    // Batch 45's rows: the total, then each node's own loss and smoothed loss.
    const int at = lines.indexOf(QRegularExpression("^multi,batch,45,.*,$"));
    QVERIFY(at > 0);
    const QStringList node = lines[at + 2].split(',');
    QCOMPARE(node[11], QStringLiteral("reconstruct"));
    QCOMPARE(node[2], QStringLiteral("45"));
    QVERIFY(std::abs(node[5].toDouble() - point->value) < 1e-9);  // ten digits
    QVERIFY(!node[4].isEmpty() && node[6].isEmpty());
    // Epoch 2's classify row: its training and validation means, no accuracies.
    QVERIFY(lines.contains(QStringLiteral("multi,epoch,40,2,,,,0.5,,0.55,,classify")));
  }

  void pngHasTheSizeAskedFor() {
    TrainingPlots plots;
    addRun(plots, "a", "", 2, 30, 0.1, 0.1, 1);
    QTemporaryDir dir;
    const QString path = dir.filePath("plots.png");
    QVERIFY(plots.exportPng(path, QSize(900, 700)));
    QImage image(path);
    QCOMPARE(image.size(), QSize(900, 700));
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7)
      for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
    QVERIFY(colours.size() > 10);  // curves, text and grid, not a blank page

    plots.resize(640, 600);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    QVERIFY(plots.exportPng(path));  // as on screen
    QCOMPARE(QImage(path).width(), plots.lossPlot()->width());
    QVERIFY(!plots.exportPng(dir.filePath("no/such/dir/plots.png")));
  }

  // However fast batches come, the plots draw them at most about twenty times a second: once
  // the replot throttle holds a replot back, the deliveries that follow draw nothing of their
  // own, however many they are and however long they take, and the held-back replot draws them
  // all. Here 10000 batches come in 200 deliveries, the events they post (the plots' queued
  // replots) handled after each as the app's event loop would, its timers not: the loss plot
  // is drawn at most once meanwhile (a first delivery may find the throttle idle), and once more
  // when the throttle's timer fires, showing every point.
  void deliveriesWithinTheThrottleAreDrawnTogether() {
    TrainingPlots plots;
    plots.resize(800, 700);
    plots.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plots));
    settle(plots);
    const int run = plots.beginRun("fast", "");
    QCustomPlot* loss = plots.lossPlot();
    QSignalSpy replots(loss, &QCustomPlot::afterReplot);
    bool drewAll = false;
    connect(loss, &QCustomPlot::afterReplot, this, [&] { drewAll = loss->xAxis->range().contains(10000); });
    std::mt19937 rng(5);
    for (int epoch = 1; epoch <= 10; ++epoch) {
      const auto batches = epochOf(epoch, 10, 1000, 0.1, rng, 0.1);
      for (size_t i = 0; i < batches.size(); i += 50) {
        plots.addBatches(run, {batches.begin() + qsizetype(i), batches.begin() + qsizetype(i + 50)});
        QCoreApplication::sendPostedEvents();
      }
    }
    QCOMPARE(plots.pointCount(run), 10000);
    const int during = int(replots.count());
    QTRY_VERIFY_WITH_TIMEOUT(drewAll, 10000);  // the throttle's timer fired
    QCoreApplication::sendPostedEvents();      // any replot still queued
    qInfo("the loss plot drawn %d times during 200 deliveries, %d in all", during, int(replots.count()));
    QVERIFY2(during <= 1, qPrintable(QString::number(during)));
    QVERIFY2(replots.count() <= during + 1, qPrintable(QString::number(replots.count())));
  }

  void followsTheTheme() {
    TrainingPlots plots;
    addRun(plots, "a", "", 1, 20, 0.1, 0.1, 1);
    auto corner = [&] { return QColor(plots.lossPlot()->toPixmap(200, 150).toImage().pixel(2, 2)); };
    const QColor light = corner();
    const QColor lightColour = plots.runInfo(0).colour;
    QVERIFY(light.lightness() > 200);
    ThemeManager::instance().setMode(ThemeMode::Dark);
    QVERIFY(corner().lightness() < 60);
    QVERIFY(plots.runInfo(0).colour != lightColour);
    QCOMPARE(plots.graph(0, Series::SmoothedLoss)->pen().color(), plots.runInfo(0).colour);
    QCOMPARE(plots.lossPlot()->xAxis->labelColor(), ThemeManager::instance().theme().text);
  }

  void screenshots() {
    for (ThemeMode mode : {ThemeMode::Light, ThemeMode::Dark}) {
      ThemeManager::instance().setMode(mode);
      const QString suffix = toString(mode);
      QWidget dashboard;
      auto* plots = new TrainingPlots;
      auto* list = new RunList(plots);
      auto* layout = new QVBoxLayout(&dashboard);
      layout->addWidget(plots, 1);
      layout->addWidget(list);
      list->setMaximumHeight(110);
      addRun(*plots, "adam lr 1e-3", "Adam · lr 0.001 · batch 64 · 6 epochs", 6, 150, 0.08, 1e-3, 11);
      addRun(*plots, "sgd lr 0.05", "SGD · lr 0.05 · momentum 0.9 · batch 64 · 6 epochs", 6, 150, 0.2, 0.05, 12);
      dashboard.resize(1100, 1000);
      dashboard.show();
      QVERIFY(QTest::qWaitForWindowExposed(&dashboard));
      settle(*plots);
      QVERIFY(plots->exportPng(QDir::temp().filePath("plots-" + suffix + ".png"), QSize(1200, 900)));
      QVERIFY(dashboard.grab().save(QDir::temp().filePath("plots-dashboard-" + suffix + ".png")));

      TrainingPlots nodes;
      addRun(nodes, "one loss", "", 6, 100, 0.1, 0.1, 13);
      addTwoLossRun(nodes, "classify + reconstruct", 6, 100, 14);
      nodes.resize(640, 800);
      nodes.show();
      QVERIFY(QTest::qWaitForWindowExposed(&nodes));
      settle(nodes);
      QVERIFY(nodes.grab().save(QDir::temp().filePath("plots-loss-nodes-" + suffix + ".png")));
    }
  }
};

QTEST_MAIN(TestPlots)
#include "test_widgets_plots.moc"
