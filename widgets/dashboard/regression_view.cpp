#include "dashboard/regression_view.h"

#include <QHBoxLayout>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "common/theme.h"
#include "dashboard/baseline_comparison.h"
#include "dashboard/evaluation_plot.h"

namespace plexus::widgets {

RegressionView::RegressionView(QWidget* parent)
    : QWidget(parent),
      figures_(new BaselineComparison(this)),
      scatter_(new EvaluationPlot(tr("Predicted vs actual"), this)),
      residuals_(new EvaluationPlot(tr("Residuals"), this)) {
  figures_->setObjectName(QStringLiteral("regressionFigures"));
  scatter_->setObjectName(QStringLiteral("predictedVsActual"));
  residuals_->setObjectName(QStringLiteral("residualHistogram"));
  scatter_->xAxis->setLabel(tr("actual"));
  scatter_->yAxis->setLabel(tr("predicted"));
  residuals_->xAxis->setLabel(tr("predicted − actual"));
  residuals_->yAxis->setLabel(tr("examples"));
  identity_ = scatter_->addGraph();
  points_ = scatter_->addGraph();
  points_->setLineStyle(QCPGraph::lsNone);
  points_->setAdaptiveSampling(false);  // every example is a dot, not a sampled line
  bars_ = new QCPBars(residuals_->xAxis, residuals_->yAxis);

  auto* plots = new QHBoxLayout;
  plots->setSpacing(4);
  plots->addWidget(scatter_, 1);
  plots->addWidget(residuals_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(figures_);
  layout->addLayout(plots, 1);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &RegressionView::applyTheme);
  applyTheme();
}

void RegressionView::applyTheme() {
  identity_->setPen(EvaluationPlot::referencePen());
  QColor dot = EvaluationPlot::dataPen().color();
  dot.setAlphaF(0.45);  // overlapping dots read as density
  points_->setPen(Qt::NoPen);
  points_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, dot, 5));
  QColor fill = EvaluationPlot::dataPen().color();
  fill.setAlphaF(0.6);
  bars_->setPen(QPen(EvaluationPlot::dataPen().color(), 1));
  bars_->setBrush(fill);
  scatter_->replot(QCustomPlot::rpQueuedReplot);
  residuals_->replot(QCustomPlot::rpQueuedReplot);
}

int RegressionView::binCount(size_t n) { return std::clamp(int(std::lround(std::sqrt(double(n)))), 10, 40); }

void RegressionView::setReport(const session::RegressionReport& report, const QString& baselineSplit) {
  QString mean;
  for (double m : report.baseline_mean) mean += (mean.isEmpty() ? QString() : QStringLiteral(", ")) + QString::number(m, 'g', 6);
  figures_->setRows({{tr("MAE"), report.model.mae, report.baseline.mae, false, tr("Mean absolute error: lower is better")},
                     {tr("RMSE"), report.model.rmse, report.baseline.rmse, false,
                      tr("Root mean squared error: lower is better, large errors weigh more")},
                     {tr("R²"), report.model.r2, report.baseline.r2, false,
                      tr("Coefficient of determination: 1 is perfect, 0 predicts as well as the test set's own "
                         "mean, below 0 worse")}},
                    tr("Baseline: the mean"), tr("Predicts the %1 split's mean target, %2, for every example").arg(baselineSplit, mean));

  const size_t n = std::min(report.targets.size(), report.predictions.size());
  QVector<double> actual(static_cast<qsizetype>(n)), predicted(static_cast<qsizetype>(n));
  std::vector<double> residual(n);
  for (size_t i = 0; i < n; ++i) {
    actual[qsizetype(i)] = report.targets[i];
    predicted[qsizetype(i)] = report.predictions[i];
    residual[i] = double(report.predictions[i]) - double(report.targets[i]);
  }
  points_->setData(actual, predicted);  // sorts by the actual value, as a graph keeps its keys
  bool found = false;
  QCPRange x = points_->getKeyRange(found), y = points_->getValueRange(found);
  // One scale on both axes, so y = x is the diagonal and a model that shrinks towards the mean
  // shows as a flatter cloud.
  const double lo = std::min(x.lower, y.lower), hi = std::max(x.upper, y.upper), pad = (hi - lo) * 0.04 + 1e-9;
  identity_->setData({lo - pad, hi + pad}, {lo - pad, hi + pad});
  scatter_->xAxis->setRange(lo - pad, hi + pad);
  scatter_->yAxis->setRange(lo - pad, hi + pad);

  bars_->data()->clear();
  if (n > 0) {
    const auto [rmin, rmax] = std::minmax_element(residual.begin(), residual.end());
    const int count = binCount(n);
    const double width = std::max((*rmax - *rmin) / count, 1e-12);
    std::vector<double> counts(size_t(count), 0);
    for (double r : residual) counts[size_t(std::min(count - 1, int((r - *rmin) / width)))] += 1;
    for (int b = 0; b < count; ++b) bars_->addData(*rmin + (b + 0.5) * width, counts[size_t(b)]);
    bars_->setWidth(width);
    residuals_->xAxis->setRange(*rmin - width, *rmax + width);
    residuals_->yAxis->setRange(0, *std::max_element(counts.begin(), counts.end()) * 1.08);
  }
  scatter_->replot(QCustomPlot::rpQueuedReplot);
  residuals_->replot(QCustomPlot::rpQueuedReplot);
}

void RegressionView::clear() {
  figures_->setRows({}, tr("Baseline"), {});
  points_->data()->clear();
  identity_->data()->clear();
  bars_->data()->clear();
  scatter_->replot(QCustomPlot::rpQueuedReplot);
  residuals_->replot(QCustomPlot::rpQueuedReplot);
}

std::vector<QPointF> RegressionView::points() const {
  std::vector<QPointF> out;
  for (auto it = points_->data()->constBegin(); it != points_->data()->constEnd(); ++it) out.emplace_back(it->key, it->value);
  return out;
}

std::vector<std::pair<double, double>> RegressionView::bins() const {
  std::vector<std::pair<double, double>> out;
  for (auto it = bars_->data()->constBegin(); it != bars_->data()->constEnd(); ++it) out.emplace_back(it->key, it->value);
  return out;
}

}  // namespace plexus::widgets
