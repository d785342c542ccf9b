#include "dashboard/binary_curves.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QVBoxLayout>
#include <cmath>

#include "common/theme.h"
#include "dashboard/baseline_comparison.h"
#include "dashboard/confusion_matrix.h"
#include "dashboard/evaluation_plot.h"
#include "train/roc.h"

namespace plexus::widgets {

namespace {

QCPCurve* addCurve(EvaluationPlot* plot) {
  auto* curve = new QCPCurve(plot->xAxis, plot->yAxis);
  curve->setScatterSkip(0);
  return curve;
}

QCPGraph* addMark(EvaluationPlot* plot) {
  QCPGraph* mark = plot->addGraph();
  mark->setLineStyle(QCPGraph::lsNone);
  return mark;
}

void setUnitAxes(EvaluationPlot* plot, const QString& x, const QString& y) {
  plot->xAxis->setLabel(x);
  plot->yAxis->setLabel(y);
  plot->xAxis->setRange(-0.02, 1.02);
  plot->yAxis->setRange(-0.02, 1.02);
}

// Leaves out the points a rate is undefined at (no negatives, or no positives).
void setCurve(QCPCurve* curve, const std::vector<double>& x, const std::vector<double>& y) {
  QVector<double> keys, values;
  for (size_t i = 0; i < x.size(); ++i)
    if (std::isfinite(x[i]) && std::isfinite(y[i])) {
      keys << x[i];
      values << y[i];
    }
  curve->setData(keys, values);
}

double ratio(int64_t part, int64_t whole, double none) { return whole > 0 ? double(part) / double(whole) : none; }

}  // namespace

BinaryCurvesView::BinaryCurvesView(QWidget* parent)
    : QWidget(parent),
      areas_(new BaselineComparison(this)),
      roc_(new EvaluationPlot(tr("ROC curve"), this)),
      pr_(new EvaluationPlot(tr("Precision-recall curve"), this)),
      slider_(new QSlider(Qt::Horizontal, this)),
      threshold_(new QLabel(this)),
      at_threshold_(new QLabel(this)),
      confusion_(new ConfusionMatrixView(this)) {
  areas_->setObjectName(QStringLiteral("curveAreas"));
  roc_->setObjectName(QStringLiteral("rocPlot"));
  pr_->setObjectName(QStringLiteral("precisionRecallPlot"));
  setUnitAxes(roc_, tr("false positive rate"), tr("true positive rate"));
  setUnitAxes(pr_, tr("recall"), tr("precision"));
  chance_ = addCurve(roc_);
  chance_->setData({0.0, 1.0}, {0.0, 1.0});
  roc_curve_ = addCurve(roc_);
  prevalence_ = addCurve(pr_);
  pr_curve_ = addCurve(pr_);
  roc_mark_ = addMark(roc_);
  pr_mark_ = addMark(pr_);

  slider_->setObjectName(QStringLiteral("thresholdSlider"));
  slider_->setRange(0, kSteps);
  slider_->setSingleStep(1);
  slider_->setPageStep(kSteps / 20);
  slider_->setValue(kSteps / 2);
  slider_->setToolTip(tr("Predict the positive class for scores at or above this threshold"));
  threshold_->setObjectName(QStringLiteral("thresholdValue"));
  threshold_->setMinimumWidth(threshold_->fontMetrics().horizontalAdvance(tr("Threshold 0.000")) + 4);
  at_threshold_->setObjectName(QStringLiteral("thresholdFigures"));
  at_threshold_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  confusion_->setObjectName(QStringLiteral("thresholdConfusion"));
  confusion_->setMinimumSize(200, 180);

  auto* plots = new QHBoxLayout;
  plots->setSpacing(4);
  plots->addWidget(roc_, 1);
  plots->addWidget(pr_, 1);
  auto* sliderRow = new QHBoxLayout;
  sliderRow->addWidget(threshold_);
  sliderRow->addWidget(slider_, 1);
  auto* bottom = new QHBoxLayout;
  bottom->addWidget(at_threshold_, 0, Qt::AlignTop);
  bottom->addWidget(confusion_, 1);
  // The slider first, as wide as the view, right above the curves whose marks it moves; the
  // figures at the threshold as a narrow column beside its matrix, to fit a laptop's dashboard.
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(sliderRow);
  layout->addLayout(plots, 3);
  layout->addWidget(areas_);
  layout->addLayout(bottom, 2);

  connect(slider_, &QSlider::valueChanged, this, &BinaryCurvesView::showThreshold);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &BinaryCurvesView::applyTheme);
  applyTheme();
}

void BinaryCurvesView::applyTheme() {
  chance_->setPen(EvaluationPlot::referencePen());
  prevalence_->setPen(EvaluationPlot::referencePen());
  for (QCPCurve* c : {roc_curve_, pr_curve_}) c->setPen(EvaluationPlot::dataPen());
  for (QCPGraph* m : {roc_mark_, pr_mark_})
    m->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, EvaluationPlot::markPen(),
                                       QBrush(EvaluationPlot::markPen().color()), 9));
  for (EvaluationPlot* p : {roc_, pr_}) p->replot(QCustomPlot::rpQueuedReplot);
}

void BinaryCurvesView::setReport(const session::BinaryReport& report, const std::vector<QString>& classNames) {
  report_ = report;
  names_ = classNames;
  std::vector<double> fpr, tpr, recall, precision;
  for (const train::RocPoint& p : report.roc) {
    fpr.push_back(p.fpr);
    tpr.push_back(p.tpr);
  }
  for (const train::PrPoint& p : report.pr) {
    recall.push_back(p.recall);
    precision.push_back(p.precision);
  }
  setCurve(roc_curve_, fpr, tpr);
  setCurve(pr_curve_, recall, precision);
  prevalence_->setData({0.0, 1.0}, {report.baseline_average_precision, report.baseline_average_precision});
  roc_->setTitle(tr("ROC curve, AUC %1").arg(BaselineComparison::number(report.roc_auc)));
  pr_->setTitle(tr("PR curve, AP %1").arg(BaselineComparison::number(report.average_precision)));
  const QString positive = names_.size() > 1 ? names_[1] : QStringLiteral("1");
  areas_->setRows({{tr("ROC AUC"), report.roc_auc, report.baseline_roc_auc, false,
                    tr("The chance that a random '%1' example scores above a random other one").arg(positive)},
                   {tr("Average precision"), report.average_precision, report.baseline_average_precision, false,
                    tr("Precision averaged over the recall each threshold adds")}},
                  tr("Constant score"),
                  tr("Scores every example alike: the diagonal ROC curve, and the share of '%1' examples as "
                     "precision at every recall").arg(positive));
  showThreshold();
}

void BinaryCurvesView::clear() {
  report_ = {};
  for (QCPCurve* c : {roc_curve_, pr_curve_, prevalence_}) c->data()->clear();
  for (QCPGraph* m : {roc_mark_, pr_mark_}) m->data()->clear();
  confusion_->clear();
  at_threshold_->clear();
  areas_->setRows({}, tr("Baseline"), {});
  for (EvaluationPlot* p : {roc_, pr_}) p->replot(QCustomPlot::rpQueuedReplot);
}

double BinaryCurvesView::threshold() const { return double(slider_->value()) / kSteps; }

void BinaryCurvesView::setThreshold(double threshold) { slider_->setValue(int(std::lround(threshold * kSteps))); }

QString BinaryCurvesView::thresholdText() const { return threshold_->text() + QLatin1Char('\n') + at_threshold_->text(); }

QPointF BinaryCurvesView::rocMark() const {
  return roc_mark_->dataCount() ? QPointF(roc_mark_->data()->at(0)->key, roc_mark_->data()->at(0)->value) : QPointF();
}

QPointF BinaryCurvesView::prMark() const {
  return pr_mark_->dataCount() ? QPointF(pr_mark_->data()->at(0)->key, pr_mark_->data()->at(0)->value) : QPointF();
}

int BinaryCurvesView::rocPoints() const { return roc_curve_->dataCount(); }

void BinaryCurvesView::showThreshold() {
  const double t = threshold();
  threshold_->setText(tr("Threshold %1").arg(t, 0, 'f', 3));
  if (report_.scores.empty()) return;
  const train::ConfusionMatrix m = train::confusion_at(report_.scores, report_.labels, t);
  std::vector<int64_t> counts;
  for (int64_t truth : {0, 1})
    for (int64_t predicted : {0, 1}) counts.push_back(m.count(truth, predicted));
  confusion_->setMatrix(counts, 2, names_);
  const int64_t tn = m.count(0, 0), fp = m.count(0, 1), fn = m.count(1, 0), tp = m.count(1, 1);
  const double tpr = ratio(tp, tp + fn, std::nan("")), fpr = ratio(fp, fp + tn, std::nan(""));
  const double precision = ratio(tp, tp + fp, 1.0);  // nothing predicted positive: the curves' first point
  roc_mark_->data()->clear();
  pr_mark_->data()->clear();
  if (std::isfinite(fpr) && std::isfinite(tpr)) roc_mark_->addData(fpr, tpr);
  if (std::isfinite(tpr)) pr_mark_->addData(tpr, precision);
  at_threshold_->setText(tr("At this threshold:\nprecision %1\nrecall %2\nfalse positive rate %3\naccuracy %4")
                             .arg(BaselineComparison::number(precision), BaselineComparison::number(tpr),
                                  BaselineComparison::number(fpr), BaselineComparison::number(m.accuracy(), true)));
  for (EvaluationPlot* p : {roc_, pr_}) p->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace plexus::widgets
