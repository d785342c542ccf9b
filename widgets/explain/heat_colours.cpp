#include "explain/heat_colours.h"

#include <QLinearGradient>
#include <QPainter>

#include <algorithm>
#include <array>

namespace plexus::widgets {

namespace {

// Inferno at 0, 1/8, ..., 1 (matplotlib's table, rounded); linear between stops is within a few
// levels of the full table.
constexpr std::array<std::array<int, 3>, 9> kInferno{{{0, 0, 4},
                                                       {31, 12, 72},
                                                       {85, 15, 109},
                                                       {136, 34, 106},
                                                       {186, 54, 85},
                                                       {227, 89, 51},
                                                       {249, 140, 10},
                                                       {249, 201, 50},
                                                       {252, 255, 164}}};

}  // namespace

QColor heatColour(double t) {
  const double x = std::clamp(t, 0.0, 1.0) * double(kInferno.size() - 1);
  const size_t i = std::min(size_t(x), kInferno.size() - 2);
  const double f = x - double(i);
  const auto mix = [&](int c) { return int(kInferno[i][c] + f * (kInferno[i + 1][c] - kInferno[i][c]) + 0.5); };
  return QColor(mix(0), mix(1), mix(2));
}

QColor textOn(const QColor& background) {
  return background.lightnessF() > 0.55 ? QColor(Qt::black) : QColor(Qt::white);
}

QImage heatOverlay(const QImage& picture, const std::vector<float>& heat, int height, int width, double opacity) {
  QImage out = picture.isNull() ? QImage(width, height, QImage::Format_RGB32)
                                : picture.convertToFormat(QImage::Format_RGB32)
                                      .scaled(width, height, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
  if (picture.isNull()) out.fill(Qt::black);
  const float top = heat.empty() ? 0.f : *std::max_element(heat.begin(), heat.end());
  const double a = std::clamp(opacity, 0.0, 1.0);
  for (int y = 0; y < height; ++y) {
    auto* row = reinterpret_cast<QRgb*>(out.scanLine(y));
    for (int x = 0; x < width; ++x) {
      const float v = heat[size_t(y) * size_t(width) + size_t(x)];
      const QColor c = heatColour(top > 0 ? v / top : 0.0);
      const QRgb p = row[x];
      row[x] = qRgb(int((1 - a) * qRed(p) + a * c.red() + 0.5), int((1 - a) * qGreen(p) + a * c.green() + 0.5),
                    int((1 - a) * qBlue(p) + a * c.blue() + 0.5));
    }
  }
  return out;
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
