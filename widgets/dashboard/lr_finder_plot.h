#pragma once
// LrFinderPlot: the learning-rate finder's curve (session/lr_finder.h): each step's loss (thin,
// muted) and the smoothed loss (bold) against the learning rate on a log axis, and a marker at
// the suggested rate with its value. It shows points; it never trains. The y axis spans the
// smoothed loss from its start down to its lowest, so the blow-up at the end does not flatten
// the part that matters.
#include <optional>
#include <vector>

#include "dashboard/evaluation_plot.h"
#include "session/lr_finder.h"

namespace plexus::widgets {

class LrFinderPlot : public EvaluationPlot {
  Q_OBJECT

 public:
  explicit LrFinderPlot(QWidget* parent = nullptr);

  void clear();
  void addPoint(const session::LrPoint& p);  // the next step, live
  // The marker at point `index` of those added (none: std::nullopt, and the marker goes).
  void setSuggestion(std::optional<int64_t> index);

  int pointCount() const { return int(points_.size()); }
  QString suggestionText() const;  // the marker's label, "" without one

 private:
  void restyle();
  void rescale();
  void placeLabel();

  std::vector<session::LrPoint> points_;
  std::optional<int64_t> suggestion_;
  QCPGraph* raw_;
  QCPGraph* smoothed_;
  QCPGraph* mark_;
  QCPItemText* label_;
};

}  // namespace plexus::widgets
