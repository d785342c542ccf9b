#pragma once
// RegressionView: a regression judged on the test split (session::RegressionReport): each
// example's prediction against its target with the y = x line a perfect model sits on, the
// histogram of the residuals (prediction - target), and MAE, RMSE and R² beside the baseline's
// that predicts the training split's mean for every example. Several outputs are pooled.
#include <QPointF>
#include <QWidget>
#include <vector>

#include "session/evaluation_report.h"

class QCPBars;
class QCPGraph;

namespace plexus::widgets {

class BaselineComparison;
class EvaluationPlot;

class RegressionView : public QWidget {
  Q_OBJECT

 public:
  explicit RegressionView(QWidget* parent = nullptr);

  // `baselineSplit` is where the baseline's mean was taken ("training", or "test").
  void setReport(const session::RegressionReport& report, const QString& baselineSplit);
  void clear();

  std::vector<QPointF> points() const;  // on the scatter: (actual, predicted), by actual value
  // The histogram's bins: their centres and counts (the counts sum to points()).
  std::vector<std::pair<double, double>> bins() const;
  const BaselineComparison* figures() const { return figures_; }

  // How many bins n residuals get: about √n, from 10 to 40.
  static int binCount(size_t n);

 private:
  void applyTheme();

  BaselineComparison* figures_;
  EvaluationPlot* scatter_;
  EvaluationPlot* residuals_;
  QCPGraph* points_;
  QCPGraph* identity_;  // y = x
  QCPBars* bars_;
};

}  // namespace plexus::widgets
