#pragma once
// BinaryCurvesView: a two-class model judged across every threshold on the test split
// (session::BinaryReport, the second class positive): its ROC and precision-recall curves with
// their areas beside a constant score's, and a threshold slider. Moving it recounts the 2×2
// confusion matrix of predicting the positive class at score >= threshold (train::confusion_at)
// and marks where that threshold sits on both curves.
#include <QPointF>
#include <QWidget>
#include <vector>

#include "session/evaluation_report.h"

class QCPCurve;
class QCPGraph;
class QLabel;
class QSlider;

namespace plexus::widgets {

class BaselineComparison;
class ConfusionMatrixView;
class EvaluationPlot;

class BinaryCurvesView : public QWidget {
  Q_OBJECT

 public:
  explicit BinaryCurvesView(QWidget* parent = nullptr);

  // `classNames` holds the two classes' names (the second is the positive one).
  void setReport(const session::BinaryReport& report, const std::vector<QString>& classNames);
  void clear();

  static constexpr int kSteps = 1000;  // the slider's positions: thresholds 0, 0.001, ..., 1
  double threshold() const;
  void setThreshold(double threshold);  // to the nearest slider position

  const ConfusionMatrixView* confusion() const { return confusion_; }
  // Where the threshold's mark is: (false positive rate, true positive rate) on the ROC curve,
  // (recall, precision) on the precision-recall curve.
  QPointF rocMark() const;
  QPointF prMark() const;
  int rocPoints() const;  // the curves as drawn
  const BaselineComparison* areas() const { return areas_; }
  QString thresholdText() const;

 private:
  void showThreshold();
  void applyTheme();

  session::BinaryReport report_;
  std::vector<QString> names_;
  BaselineComparison* areas_;
  EvaluationPlot* roc_;
  EvaluationPlot* pr_;
  QCPCurve* roc_curve_;
  QCPCurve* pr_curve_;
  QCPCurve* chance_;     // the ROC diagonal
  QCPCurve* prevalence_; // precision-recall of a constant score
  QCPGraph* roc_mark_;
  QCPGraph* pr_mark_;
  QSlider* slider_;
  QLabel* threshold_;
  QLabel* at_threshold_;
  ConfusionMatrixView* confusion_;
};

}  // namespace plexus::widgets
