#pragma once
// ClassReportView: a classifier judged class by class on the test split (session::
// ClassificationReport): each class's precision, recall, F1 and support, their macro and
// support-weighted averages, and below them accuracy and the averaged F1s beside the baseline's
// that always predicts the most frequent class.
#include <QWidget>
#include <vector>

#include "session/evaluation_report.h"

class QLabel;
class QTableWidget;

namespace plexus::widgets {

class BaselineComparison;

class ClassReportView : public QWidget {
  Q_OBJECT

 public:
  explicit ClassReportView(QWidget* parent = nullptr);

  // Missing names are shown as the class index; `baselineSplit` is where the baseline counted
  // its classes ("training", or "test" for a dataset without a training split).
  void setReport(const session::ClassificationReport& report, const std::vector<QString>& classNames,
                 const QString& baselineSplit);
  void clear();

  // The per-class table: one row per class, then "macro avg" and "weighted avg"; columns
  // class, precision, recall, F1, support.
  int rows() const;
  QString text(int row, int column) const;  // "" outside the table
  const BaselineComparison* baseline() const { return baseline_; }

 private:
  QLabel* title_;
  QTableWidget* table_;
  BaselineComparison* baseline_;
};

}  // namespace plexus::widgets
