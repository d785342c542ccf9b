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
  label_->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
  label_->position->setType(QCPItemPosition::ptPlotCoords);
  label_->setPadding(QMargins(6, 0, 0, 4));
  label_->setVisible(false);
  legend->setVisible(true);
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
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
  }
  replot(QCustomPlot::rpQueuedReplot);
}

QString LrFinderPlot::suggestionText() const {
  if (!suggestion_) return {};
  return tr("suggested %1").arg(points_[size_t(*suggestion_)].lr, 0, 'g', 3);
}

void LrFinderPlot::rescale() {
  double lowest = INFINITY, low_raw = INFINITY;
  for (const session::LrPoint& p : points_) {
    if (std::isfinite(p.smoothed)) lowest = std::min(lowest, p.smoothed);
    if (std::isfinite(p.loss)) low_raw = std::min(low_raw, p.loss);
  }
  if (!std::isfinite(lowest)) return;
  // From a little below the lowest step up to the start of the smoothed curve (or twice its
  // lowest, for a curve that only rises): where the loss falls and where it turns.
  const double top = std::max(points_.front().smoothed, 2 * lowest);
  const double bottom = std::min(lowest, low_raw);
  const double pad = std::max(top - bottom, 1e-6) * 0.08;
  yAxis->setRange(bottom - pad, top + pad);
  xAxis->setRange(points_.front().lr, std::max(points_.back().lr, points_.front().lr * 10));
  replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace plexus::widgets
