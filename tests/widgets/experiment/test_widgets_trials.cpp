// A sweep's trials as the experiment view shows them: the table sorts numbers as numbers and
// keeps trials without a figure last, filters by status and text, and updates rows in place;
// the parallel-coordinates plot puts log parameters on log axes, finds the best trial and
// selects the trial whose line is clicked.
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <cmath>

#include "experiment/parallel_coordinates.h"
#include "experiment/trial_table.h"

using namespace plexus::widgets;

namespace {

Trial trialOf(int index, double lr, int width, std::optional<double> loss, const QString& status = "completed") {
  Trial t;
  t.index = index;
  t.values = {lr, width};
  t.status = status;
  t.bestLoss = loss;
  if (loss) t.bestAccuracy = 1 - *loss;
  t.bestEpoch = loss ? 2 : 0;
  t.epochs = 3;
  t.seconds = 10 * index;
  return t;
}

const std::vector<SweptParameter> kParameters{{"lr", true}, {"fc1.out_features", false}};

// Trial numbers down the proxy's rows.
QList<int> order(const TrialFilter& filter) {
  QList<int> out;
  for (int row = 0; row < filter.rowCount(); ++row)
    out << filter.index(row, 0).data(TrialTableModel::TrialRole).toInt();
  return out;
}

// A table of `trials` over kParameters, seen through a filter.
struct Table {
  TrialTableModel model;
  TrialFilter filter;
  explicit Table(const std::vector<Trial>& trials) {
    model.setParameters(kParameters);
    model.setTrials(trials);
    filter.setSourceModel(&model);
  }
};

}  // namespace

class TestWidgetsTrials : public QObject {
  Q_OBJECT

 private slots:
  void sortsNumbersAsNumbersWithMissingFiguresLast() {
    Table table({trialOf(1, 0.1, 9, 0.5), trialOf(2, 0.001, 100, std::nullopt, "running"), trialOf(3, 0.01, 10, 0.05)});
    const TrialTableModel& model = table.model;
    TrialFilter& filter = table.filter;
    QCOMPARE(model.headerData(2, Qt::Horizontal, Qt::DisplayRole).toString(), QString("fc1.out_features"));
    filter.sort(2, Qt::AscendingOrder);  // as text 10 < 100 < 9
    QCOMPARE(order(filter), (QList<int>{1, 3, 2}));
    filter.sort(2, Qt::DescendingOrder);
    QCOMPARE(order(filter), (QList<int>{2, 3, 1}));
    const int loss = model.column(TrialTableModel::LossColumn);
    filter.sort(loss, Qt::AscendingOrder);
    QCOMPARE(order(filter), (QList<int>{3, 1, 2}));  // the running trial, without a loss, last
    filter.sort(loss, Qt::DescendingOrder);
    QCOMPARE(order(filter), (QList<int>{1, 3, 2}));  // and last again
    QCOMPARE(model.index(0, loss).data().toString(), QString("0.5000"));
    QCOMPARE(model.index(2, model.column(TrialTableModel::AccuracyColumn)).data().toString(), QString("95.00 %"));
    QCOMPARE(model.index(1, 1).data().toString(), QString("0.001"));
  }

  void filtersByStatusAndText() {
    Table table(
        {trialOf(1, 0.1, 64, 0.5), trialOf(2, 0.001, 128, std::nullopt, "failed"), trialOf(3, 0.01, 256, 0.05)});
    TrialFilter& filter = table.filter;
    filter.setStatus("completed");
    QCOMPARE(order(filter), (QList<int>{1, 3}));
    filter.setText("256");
    QCOMPARE(order(filter), (QList<int>{3}));
    filter.setStatus({});
    filter.setText("FAIL");  // any cell's text, ignoring case
    QCOMPARE(order(filter), (QList<int>{2}));
    filter.setText({});
    QCOMPARE(filter.rowCount(), 3);
  }

  void rowsUpdateInPlaceKeepingTheSelection() {
    TrialTableModel model;
    model.setParameters(kParameters);
    model.setTrials({trialOf(1, 0.1, 64, 0.5), trialOf(2, 0.001, 128, std::nullopt, "running")});
    QTableView view;
    view.setModel(&model);
    view.selectRow(1);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    // Trial 2 finishes and trial 3 starts; trial 1 is as it was.
    model.setTrials(
        {trialOf(1, 0.1, 64, 0.5), trialOf(2, 0.001, 128, 0.2), trialOf(3, 0.01, 32, std::nullopt, "running")});
    QCOMPARE(reset.count(), 0);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.first().at(0).value<QModelIndex>().row(), 1);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.index(1, model.column(TrialTableModel::StatusColumn)).data().toString(), QString("completed"));
    QCOMPARE(view.selectionModel()->selectedRows().size(), 1);
    QCOMPARE(view.selectionModel()->selectedRows().first().row(), 1);
    // A trial no longer listed goes.
    model.setTrials({trialOf(2, 0.001, 128, 0.2)});
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.rowOf(2), 0);
  }

  void durationsReadAsTimes() {
    QCOMPARE(durationText(42.4), QString("42 s"));
    QCOMPARE(durationText(185), QString("3 min 05 s"));
    QCOMPARE(durationText(3720), QString("1 h 02 min"));
  }

  void logParametersGetLogAxesAndTheBestTrialIsFound() {
    ParallelCoordinates plot;
    plot.resize(600, 300);
    plot.setParameters(kParameters);
    plot.setTrials({trialOf(1, 1e-4, 64, 0.5), trialOf(2, 1e-3, 128, 0.1), trialOf(3, 1e-2, 256, 0.3),
                    trialOf(4, 1e-3, 32, std::nullopt, "running")});
    QCOMPARE(plot.axisCount(), 3);
    QVERIFY(plot.axisIsLog(0));
    QVERIFY(!plot.axisIsLog(1));
    QCOMPARE(plot.bestTrial(), 2);  // the lowest validation loss
    // 1e-3 is half-way between 1e-4 and 1e-2 on a log axis.
    const double low = plot.linePoint(1, 0)->y(), high = plot.linePoint(3, 0)->y();
    QVERIFY(low > high);  // larger values higher up
    QVERIFY(std::abs(plot.linePoint(2, 0)->y() - (low + high) / 2) < 0.5);
    // A trial without the figure is not drawn on the metric's axis.
    QVERIFY(plot.linePoint(4, 1).has_value());
    QVERIFY(!plot.linePoint(4, 2).has_value());
    plot.setMetric(TrialMetric::Accuracy);
    QCOMPARE(plot.bestTrial(), 2);  // the highest accuracy (1 - loss)
  }

  void clickingALineSelectsItsTrial() {
    ParallelCoordinates plot;
    plot.resize(600, 300);
    plot.setParameters(kParameters);
    plot.setTrials({trialOf(1, 1e-4, 64, 0.5), trialOf(2, 1e-3, 128, 0.1), trialOf(3, 1e-2, 256, 0.3)});
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    QSignalSpy selected(&plot, &ParallelCoordinates::selectionChanged);
    // Half-way along trial 3's segment between the first two axes.
    const QPointF on3 = (*plot.linePoint(3, 0) + *plot.linePoint(3, 1)) / 2;
    QCOMPARE(plot.trialAt(on3), 3);
    QCOMPARE(plot.trialAt(on3 + QPointF(0, ParallelCoordinates::kHitDistance + 20)), -1);
    QTest::mouseClick(&plot, Qt::LeftButton, {}, on3.toPoint());
    QCOMPARE(selected.count(), 1);
    QCOMPARE(plot.selectedTrials(), QList<int>{3});
    // Ctrl adds a trial, and takes it away again.
    const QPointF on1 = (*plot.linePoint(1, 1) + *plot.linePoint(1, 2)) / 2;
    QTest::mouseClick(&plot, Qt::LeftButton, Qt::ControlModifier, on1.toPoint());
    QCOMPARE(plot.selectedTrials(), (QList<int>{3, 1}));
    QTest::mouseClick(&plot, Qt::LeftButton, Qt::ControlModifier, on1.toPoint());
    QCOMPARE(plot.selectedTrials(), QList<int>{3});
    // A click on no line clears the selection.
    QTest::mouseClick(&plot, Qt::LeftButton, {}, QPoint(2, 2));
    QVERIFY(plot.selectedTrials().isEmpty());
    QCOMPARE(selected.count(), 4);
    QCOMPARE(selected.last().at(0).value<QList<int>>(), QList<int>());
  }
};

QTEST_MAIN(TestWidgetsTrials)
#include "test_widgets_trials.moc"
