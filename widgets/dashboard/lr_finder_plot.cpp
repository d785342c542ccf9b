#include "dashboard/lr_finder_plot.h"

#include <algorithm>
#include <cmath>

#include "common/plot_style.h"
#include "common/theme.h"

namespace plexus::widgets {

LrFinderPlot::LrFinderPlot(QWidget* parent) : EvaluationPlot(tr("Loss against learning rate"), parent) {
  xAxis->setScaleType(QCPAxis::stLogarithmic);
  xAxis->setTicker(QSharedPointer<LogTicker>::create());
  xAxis->setNumberFormat(QStringLiteral("eb"));
  xAxis->setNumberPrecision(0);
  xAxis->setLabel(tr("learning rate"));
  yAxis->setLabel(tr("loss"));
  raw_ = addGraph();
  raw_->setName(tr("loss"));
  smoothed_ = addGraph();
  smoothed_->setName(tr("smoothed"));
  mark_ = addGraph();
  mark_->setLineStyle(QCPGraph::lsNone);
  mark_->removeFromLegend();
  label_ = new QCPItemText(this);
  label_->position->setType(QCPItemPosition::ptPlotCoords);
  label_->setVisible(false);
  legend->setVisible(true);
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignLeft);  // below the plateau
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &LrFinderPlot::restyle);
  restyle();
}

void LrFinderPlot::restyle() {
  const Theme& t = ThemeManager::instance().theme();
  raw_->setPen(QPen(t.mutedText, 1));
  smoothed_->setPen(dataPen());
  mark_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, markPen(), QBrush(markPen().color()), 9));
  label_->setColor(markPen().color());
  QFont bold = font();
  bold.setBold(true);
  label_->setFont(bold);
  replot(QCustomPlot::rpQueuedReplot);
}

void LrFinderPlot::clear() {
  points_.clear();
  suggestion_.reset();
  for (QCPGraph* g : {raw_, smoothed_, mark_}) g->data()->clear();
  label_->setVisible(false);
  replot(QCustomPlot::rpQueuedReplot);
}

void LrFinderPlot::addPoint(const session::LrPoint& p) {
  points_.push_back(p);
  // The diverging step may be inf or nan: a gap rather than a line off the plot.
  raw_->addData(p.lr, std::isfinite(p.loss) ? p.loss : qQNaN());
  smoothed_->addData(p.lr, std::isfinite(p.smoothed) ? p.smoothed : qQNaN());
  rescale();
}

void LrFinderPlot::setSuggestion(std::optional<int64_t> index) {
  suggestion_ = index && *index >= 0 && *index < int64_t(points_.size()) ? index : std::nullopt;
  mark_->data()->clear();
  label_->setVisible(bool(suggestion_));
  if (suggestion_) {
    const session::LrPoint& p = points_[size_t(*suggestion_)];
    mark_->addData(p.lr, p.smoothed);
    label_->position->setCoords(p.lr, p.smoothed);
    label_->setText(suggestionText());
    placeLabel();
  }
  replot(QCustomPlot::rpQueuedReplot);
}

QString LrFinderPlot::suggestionText() const {
  if (!suggestion_) return {};
  return tr("suggested %1").arg(points_[size_t(*suggestion_)].lr, 0, 'g', 3);
}

void LrFinderPlot::rescale() {
  size_t lowest = 0;  // the point of the lowest smoothed loss
  for (size_t i = 1; i < points_.size(); ++i)
    if (std::isfinite(points_[i].smoothed) && !(points_[i].smoothed >= points_[lowest].smoothed)) lowest = i;
  if (!std::isfinite(points_[lowest].smoothed)) return;
  // Up to the highest loss before the lowest point (the plateau the curve falls from), or twice
  // the lowest for a curve that only rises: the blow-up after it is cut off, not scaled in.
  double top = lowest == 0 ? 2 * points_[0].smoothed : points_[0].smoothed, bottom = points_[lowest].smoothed;
  for (size_t i = 0; i < points_.size(); ++i)
    for (double v : {points_[i].loss, points_[i].smoothed}) {
      if (!std::isfinite(v)) continue;
      if (i < lowest) top = std::max(top, v);
      bottom = std::min(bottom, v);
    }
  const double pad = std::max(top - bottom, 1e-6) * 0.08;
  yAxis->setRange(bottom - pad, top + pad);
  xAxis->setRange(points_.front().lr, std::max(points_.back().lr, points_.front().lr * 10));
  placeLabel();
  replot(QCustomPlot::rpQueuedReplot);
}

void LrFinderPlot::placeLabel() {
  // Beside the marker, on the side with room: right of it in the left half of the axis, else left.
  if (!suggestion_) return;
  const double x = points_[size_t(*suggestion_)].lr;
  const QCPRange r = xAxis->range();
  const bool left_half = std::log(x / r.lower) < 0.5 * std::log(r.upper / r.lower);
  label_->setPositionAlignment((left_half ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignBottom);
  label_->setPadding(left_half ? QMargins(6, 0, 0, 4) : QMargins(0, 0, 6, 4));
}

}  // namespace plexus::widgets
