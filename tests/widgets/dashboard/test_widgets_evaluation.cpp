// The test set's judging views, driven as a person would: the threshold slider of a two-class
// model recounts the confusion matrix as train::confusion_at does and moves the marks on the
// curves; the per-class table and the regression figures show the report's numbers beside the
// baseline's; the predicted-versus-actual scatter holds every example and the residual
// histogram counts each once.
#include <QSlider>
#include <QTest>

#include "dashboard/baseline_comparison.h"
#include "dashboard/binary_curves.h"
#include "dashboard/class_report_view.h"
#include "dashboard/confusion_matrix.h"
#include "dashboard/regression_view.h"
#include "train/class_report.h"
#include "train/regression_report.h"
#include "train/roc.h"

using namespace plexus;
using namespace plexus::widgets;

namespace {

// Three negatives and three positives; the positive scored 0.32 ranks below the negative 0.42.
const std::vector<float> kScores{0.1f, 0.42f, 0.32f, 0.8f, 0.65f, 0.2f};
const std::vector<int32_t> kLabels{0, 0, 1, 1, 1, 0};

session::BinaryReport binaryReport() {
  const std::vector<train::RocPoint> roc = train::roc_curve(kScores, kLabels);
  const std::vector<train::PrPoint> pr = train::precision_recall_curve(kScores, kLabels);
  return {kScores, kLabels, roc, pr, train::area_under(roc), train::average_precision(pr), 0.5, 0.5};
}

}  // namespace

class TestWidgetsEvaluation : public QObject {
  Q_OBJECT

 private slots:
  void theThresholdSliderRecountsTheMatrixAndMovesTheMarks() {
    BinaryCurvesView view;
    view.resize(700, 560);
    view.setReport(binaryReport(), {"cat", "dog"});
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto* slider = view.findChild<QSlider*>(QStringLiteral("thresholdSlider"));
    QVERIFY(slider);
    const ConfusionMatrixView* m = view.confusion();

    // At 0.5: 0.8 and 0.65 are called dogs (both are); the dog scored 0.32 is missed.
    QCOMPARE(view.threshold(), 0.5);
    QCOMPARE(m->count(1, 1), int64_t(2));
    QCOMPARE(m->count(1, 0), int64_t(1));
    QCOMPARE(m->count(0, 1), int64_t(0));
    QCOMPARE(m->count(0, 0), int64_t(3));
    QCOMPARE(view.rocMark(), QPointF(0.0, 2.0 / 3.0));
    QCOMPARE(view.prMark(), QPointF(2.0 / 3.0, 1.0));

    // Down to 0.3, a page at a time: the cat at 0.42 is taken for a dog, then the dog at 0.32 caught.
    slider->setFocus();
    QTest::keyClick(slider, Qt::Key_PageDown);
    QCOMPARE(view.threshold(), 0.45);
    QCOMPARE(m->count(0, 1), int64_t(0));
    QTest::keyClick(slider, Qt::Key_PageDown);  // 0.40
    QCOMPARE(m->count(0, 1), int64_t(1));
    QCOMPARE(m->count(1, 1), int64_t(2));
    QTest::keyClick(slider, Qt::Key_PageDown);  // 0.35
    QCOMPARE(m->count(1, 1), int64_t(2));
    QTest::keyClick(slider, Qt::Key_PageDown);  // 0.30
    QCOMPARE(m->count(1, 1), int64_t(3));
    QCOMPARE(view.rocMark(), QPointF(1.0 / 3.0, 1.0));
    QCOMPARE(view.prMark(), QPointF(1.0, 0.75));

    // Every position the keys reach counts as confusion_at does.
    for (Qt::Key key : {Qt::Key_Home, Qt::Key_End, Qt::Key_PageDown, Qt::Key_PageDown, Qt::Key_Left}) {
      QTest::keyClick(slider, key);
      const train::ConfusionMatrix want = train::confusion_at(kScores, kLabels, view.threshold());
      for (int t : {0, 1})
        for (int p : {0, 1}) QCOMPARE(m->count(t, p), want.count(t, p));
    }
    QCOMPARE(view.threshold(), 0.899);
    QCOMPARE(m->count(0, 1) + m->count(1, 1), int64_t(0));  // nothing scores 0.899 or more
    QCOMPARE(view.rocMark(), QPointF(0.0, 0.0));
    QCOMPARE(view.prMark(), QPointF(0.0, 1.0));  // the curve's first point: precision 1 at recall 0
    QTest::keyClick(slider, Qt::Key_Home);
    QCOMPARE(m->count(0, 1) + m->count(1, 1), int64_t(6));  // everything at threshold 0

    // The areas beside a constant score's: 8 of the 9 (dog, cat) pairs are ranked right.
    QCOMPARE(view.areas()->text(0, 1), QString("0.8889"));
    QCOMPARE(view.areas()->text(0, 2), QString("0.5000"));
    QCOMPARE(view.rocPoints(), int(train::roc_curve(kScores, kLabels).size()));
  }

  void theClassTableShowsTheReportsNumbers() {
    // Rows are true classes. Class 2 has no examples but is predicted once; class 3 is neither.
    const train::ConfusionMatrix matrix(4, {5, 1, 0, 0,  //
                                            1, 3, 1, 0,  //
                                            0, 0, 0, 0,  //
                                            0, 0, 0, 0});
    session::ClassificationReport r;
    r.model = train::class_report(matrix);
    r.baseline_class = 1;
    r.baseline = train::class_report(train::constant_prediction(matrix, 1));
    ClassReportView view;
    view.resize(600, 500);
    view.setReport(r, {"ant", "bee", "cow", "dog"}, "training");
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));

    QCOMPARE(view.rows(), 6);
    QCOMPARE(view.text(0, 0), QString("ant"));
    QCOMPARE(view.text(0, 1), QString("0.8333"));  // 5 of the 6 called ants are
    QCOMPARE(view.text(1, 2), QString("0.6000"));  // 3 of the 5 bees are found
    QCOMPARE(view.text(1, 4), QString("5"));
    QCOMPARE(view.text(2, 3), QString("0.0000"));  // predicted, never right
    QCOMPARE(view.text(3, 1), QString("–"));       // neither in the data nor predicted
    QCOMPARE(view.text(4, 0), QString("macro avg"));
    QCOMPARE(view.text(4, 3), BaselineComparison::number(r.model.macro.f1));
    QCOMPARE(view.text(5, 0), QString("weighted avg"));
    QCOMPARE(view.text(5, 1), BaselineComparison::number(r.model.weighted.precision));
    QCOMPARE(view.text(5, 4), QString("11"));

    // Always "bee": 5 of the 11 right.
    const BaselineComparison* b = view.baseline();
    QCOMPARE(b->text(0, 1), QString("72.73 %"));
    QCOMPARE(b->text(0, 2), QString("45.45 %"));
    QCOMPARE(b->horizontalHeaderItem(2)->text(), QString("Always 'bee'"));
    QCOMPARE(b->text(1, 2), BaselineComparison::number(r.baseline.macro.f1));
  }

  void theScatterHoldsEveryExampleAndTheHistogramCountsEachOnce() {
    session::RegressionReport r;
    for (int i = 0; i < 200; ++i) {
      r.targets.push_back(float(i));
      r.predictions.push_back(float(i) + float((i * 37) % 11) - 5.f);  // residuals -5 .. 5
    }
    r.model = train::regression_figures(r.targets, r.predictions);
    r.baseline_mean = {99.5};
    r.baseline = train::constant_figures(r.targets, r.baseline_mean);
    RegressionView view;
    view.resize(800, 500);
    view.setReport(r, "training");
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));

    // Every example's (actual, predicted), in order of the actual values (here the examples').
    const std::vector<QPointF> points = view.points();
    QCOMPARE(int(points.size()), 200);
    for (int i = 0; i < 200; ++i) QCOMPARE(points[size_t(i)], QPointF(r.targets[size_t(i)], r.predictions[size_t(i)]));
    const auto bins = view.bins();
    QCOMPARE(int(bins.size()), RegressionView::binCount(200));
    double total = 0;
    for (const auto& [centre, count] : bins) {
      total += count;
      QVERIFY(centre > -5.5 && centre < 5.5);
    }
    QCOMPARE(total, 200.0);
    QCOMPARE(bins.front().second, 19.0);  // the residuals of -5, alone in the lowest bin: i = 0, 11, ..., 198
    QCOMPARE(view.figures()->text(0, 1), BaselineComparison::number(r.model.mae));
    QCOMPARE(view.figures()->text(2, 1), BaselineComparison::number(r.model.r2));
    QCOMPARE(view.figures()->text(2, 2), QString("0.0000"));  // the mean, on a test set of that mean
    QVERIFY(r.model.r2 > 0.99);
  }
};

QTEST_MAIN(TestWidgetsEvaluation)
#include "test_widgets_evaluation.moc"
