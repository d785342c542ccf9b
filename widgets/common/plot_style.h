#pragma once
// The look the app's QCustomPlot plots share (the training dashboard, the node statistics
// panel): colours from the theme, quiet axes, and a log ticker that labels short ranges.
#include <QColor>
#include <qcustomplot.h>

namespace plexus::widgets {

struct Theme;

struct PlotColours {
  QColor background, text, muted, grid, axis;
};

PlotColours plotColours(const Theme& t);

void styleAxis(QCPAxis* axis, const PlotColours& c);

// Log ticks at 1, 2 and 5 times the powers of ten where plain powers of ten would be too few
// (QCustomPlot falls back to linear steps there, which leave the low end bare).
class LogTicker : public QCPAxisTickerLog {
 protected:
  QVector<double> createTickVector(double tickStep, const QCPRange& range) override;
};

}  // namespace plexus::widgets
