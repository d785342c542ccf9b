#pragma once
// EvaluationPlot: the look the test set's judging plots share (ROC and precision-recall curves,
// predicted versus actual, residuals): a bold title over the axes, the theme's plot colours,
// fixed axes that neither drag nor zoom, restyled when the theme changes. The owners draw the
// data in dataPen()'s and markPen()'s colours and restyle it on ThemeManager::changed.
#include <QPen>
#include <qcustomplot.h>

namespace plexus::widgets {

class EvaluationPlot : public QCustomPlot {
  Q_OBJECT

 public:
  explicit EvaluationPlot(const QString& title, QWidget* parent = nullptr);

  void setTitle(const QString& title);
  QString title() const;

  static QPen dataPen();       // the model's curve or points
  static QPen referencePen();  // y = x, a chance diagonal, the baseline: dashed and muted
  static QPen markPen();       // the point a threshold picks

  QSize minimumSizeHint() const override { return {160, 140}; }

 private:
  void applyTheme();

  QCPTextElement* title_;
};

}  // namespace plexus::widgets
