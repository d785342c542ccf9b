#include "common/plot_style.h"

#include <cmath>

#include "common/theme.h"

namespace plexus::widgets {

PlotColours plotColours(const Theme& t) {
  return {t.dark ? t.canvas : QColor(Qt::white), t.text, t.mutedText, t.dark ? t.gridMajor : t.gridMinor, t.nodeBorder};
}

void styleAxis(QCPAxis* axis, const PlotColours& c) {
  const QPen pen(c.axis, 1);
  axis->setBasePen(pen);
  axis->setTickPen(pen);
  axis->setSubTickPen(pen);
  axis->setTickLengthIn(0);
  axis->setTickLengthOut(4);
  axis->setSubTicks(false);
  axis->setTickLabelColor(c.muted);
  axis->setLabelColor(c.text);
  axis->grid()->setPen(QPen(c.grid, 1));
  axis->grid()->setZeroLinePen(Qt::NoPen);
}

QVector<double> LogTicker::createTickVector(double tickStep, const QCPRange& range) {
  const double decades = range.lower > 0 ? std::log10(range.upper / range.lower) : 0;
  if (decades <= 0 || decades >= 3) return QCPAxisTickerLog::createTickVector(tickStep, range);
  QVector<double> ticks;
  for (int e = int(std::floor(std::log10(range.lower))); e <= int(std::ceil(std::log10(range.upper))); ++e)
    for (double mantissa : {1.0, 2.0, 5.0})
      if (const double v = mantissa * std::pow(10.0, e); range.contains(v)) ticks << v;
  return ticks.size() >= 3 ? ticks : QCPAxisTickerLog::createTickVector(tickStep, range);
}

}  // namespace plexus::widgets
