#pragma once
// ParallelCoordinates: a sweep's trials as lines across one vertical axis per swept parameter
// and a last one for the validation metric, so which settings lead to good trials shows at a
// glance. A log parameter gets a log axis; a parameter of text values (a choice) spaces them
// evenly. Lines are coloured by the metric (the theme's accent for the best, a warm colour for
// the worst); the best trial is drawn thick and on top, a trial without the figure yet (running,
// failed) thin and grey without the metric's point. Selected trials stand out and the others
// fade. A click on a line selects its trial (Ctrl toggles it), a click elsewhere clears the
// selection; hovering a line names its trial's values. It follows ThemeManager.
#include <QList>
#include <QPointF>
#include <QWidget>
#include <optional>
#include <vector>

#include "experiment/trial.h"

namespace plexus::widgets {

class ParallelCoordinates : public QWidget {
  Q_OBJECT

 public:
  static constexpr double kHitDistance = 5;  // pixels from a line that still pick it

  explicit ParallelCoordinates(QWidget* parent = nullptr);

  void setParameters(const std::vector<SweptParameter>& parameters);
  void setTrials(const std::vector<Trial>& trials);
  void setMetric(TrialMetric metric);
  TrialMetric trialMetric() const { return metric_; }

  // Trial numbers (Trial::index). Setting them emits nothing.
  void setSelectedTrials(const QList<int>& trials);
  QList<int> selectedTrials() const { return selected_; }
  int bestTrial() const { return best_; }  // -1 when no trial has the metric

  int axisCount() const { return int(parameters_.size()) + 1; }  // the parameters', then the metric's
  bool axisIsLog(int axis) const;
  // Where the trial's line crosses `axis`, in widget pixels; none for a trial not drawn there.
  std::optional<QPointF> linePoint(int trial, int axis) const;
  // The trial whose line passes within kHitDistance of `pixel` (the nearest), else -1.
  int trialAt(QPointF pixel) const;

  QSize sizeHint() const override { return {480, 260}; }
  QSize minimumSizeHint() const override { return {180, 160}; }

 signals:
  // The user changed the selection by clicking.
  void selectionChanged(const QList<int>& trials);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;  // tool tips

 private:
  // One axis: its values' range, on a log scale or not; text values at evenly spaced places.
  struct Axis {
    QString name;
    bool log = false;
    double min = 0, max = 1;
    QStringList categories;  // a choice's values, bottom to top; empty for a numeric axis
  };
  void rebuildAxes();
  std::optional<double> position(const Axis& axis, const QVariant& value) const;  // 0 bottom, 1 top
  std::optional<double> axisValue(const Trial& trial, int axis) const;            // position on it
  QRectF plotRect() const;
  double axisX(int axis) const;
  std::vector<std::optional<QPointF>> points(const Trial& trial) const;
  QColor lineColour(const Trial& trial) const;
  QString tickText(const Axis& axis, double position) const;

  std::vector<SweptParameter> parameters_;
  std::vector<Trial> trials_;
  std::vector<Axis> axes_;  // the parameters', then the metric's
  TrialMetric metric_ = TrialMetric::Loss;
  QList<int> selected_;
  int best_ = -1;
};

}  // namespace plexus::widgets
