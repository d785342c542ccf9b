#include "tryit/heat_colours.h"

#include <QLinearGradient>
#include <QPainter>
#include <algorithm>
#include <array>

#include "explain/heat_image.h"

namespace plexus::widgets {

QColor heatColour(double t) {
  const std::array<uint8_t, 3> rgb = explain::magma(float(t));
  return QColor(rgb[0], rgb[1], rgb[2]);
}

QColor textOn(const QColor& background) {
  return background.lightnessF() > 0.55 ? QColor(Qt::black) : QColor(Qt::white);
}

HeatLegend::HeatLegend(QWidget* parent) : QWidget(parent), low_(tr("low")), high_(tr("high")) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void HeatLegend::setEnds(const QString& low, const QString& high) {
  low_ = low;
  high_ = high;
  update();
}

QSize HeatLegend::sizeHint() const { return {220, fontMetrics().height() + 14}; }

QSize HeatLegend::minimumSizeHint() const { return {120, fontMetrics().height() + 14}; }

void HeatLegend::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QFontMetrics fm = fontMetrics();
  const int lw = fm.horizontalAdvance(low_) + 6, hw = fm.horizontalAdvance(high_) + 6;
  const QRect bar(lw, 3, std::max(10, width() - lw - hw), height() - 6);
  QLinearGradient g(bar.topLeft(), bar.topRight());
  for (int i = 0; i <= 8; ++i) g.setColorAt(i / 8.0, heatColour(i / 8.0));
  p.fillRect(bar, g);
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(QRect(0, 0, lw - 4, height()), Qt::AlignRight | Qt::AlignVCenter, low_);
  p.drawText(QRect(bar.right() + 5, 0, hw, height()), Qt::AlignLeft | Qt::AlignVCenter, high_);
}

}  // namespace plexus::widgets
