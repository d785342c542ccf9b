#include "featuremaps/heat_matrix.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "featuremaps/colour_map.h"

namespace plexus::widgets {
namespace {

constexpr int kBars = 70;   // a vector's bar height
constexpr int kStrip = 18;  // its heat strip
constexpr int kSequenceRow = 14;    // a sequence's row

}  // namespace

HeatMatrix::HeatMatrix(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
  setMouseTracking(true);
}

void HeatMatrix::setValues(std::vector<float> values, int rows, int columns, QStringList rowLabels) {
  values_ = std::move(values);
  rows_ = rows;
  columns_ = columns;
  labels_ = rowLabels.size() == rows ? std::move(rowLabels) : QStringList();
  const auto [lo, hi] = std::minmax_element(values_.begin(), values_.end());
  lo_ = values_.empty() ? 0 : *lo;
  hi_ = values_.empty() ? 0 : *hi;
  setFixedHeight(sizeHint().height());
  update();
}

int HeatMatrix::labelWidth() const {
  int w = 0;
  for (const QString& l : labels_) w = std::max(w, fontMetrics().horizontalAdvance(l));
  return labels_.isEmpty() ? 0 : w + 6;
}

QSize HeatMatrix::sizeHint() const {
  const int h = rows_ == 1 ? kBars + kStrip : rows_ * kSequenceRow;
  return {240, h + fontMetrics().height() + 4};
}

QRect HeatMatrix::plotRect() const {
  const int top = rows_ == 1 ? kBars : 0;
  const int h = rows_ == 1 ? kStrip : rows_ * kSequenceRow;
  return {labelWidth(), top, std::max(1, width() - labelWidth() - 1), h};
}

void HeatMatrix::paintEvent(QPaintEvent*) {
  if (rows_ <= 0 || columns_ <= 0) return;
  QPainter p(this);
  const QRect plot = plotRect();
  const float range = hi_ - lo_;
  const auto shade = [&](float v) { return QColor(viridis(range > 0 ? (v - lo_) / range : 0.0)); };
  const auto x = [&](int c) { return plot.left() + int(int64_t(c) * plot.width() / columns_); };
  const int rowHeight = plot.height() / rows_;
  for (int r = 0; r < rows_; ++r)
    for (int c = 0; c < columns_; ++c)
      p.fillRect(QRect(x(c), plot.top() + r * rowHeight, std::max(1, x(c + 1) - x(c)), rowHeight),
                 shade(values_[size_t(r) * size_t(columns_) + size_t(c)]));
  if (rows_ == 1) {  // bars from zero (or from the least value when all are positive)
    const float base = std::min(std::max(0.0f, lo_), hi_);
    const float span = std::max(hi_ - std::min(base, lo_), 1e-12f);
    const auto y = [&](float v) { return int(kBars - 2 - (v - std::min(base, lo_)) / span * (kBars - 4)); };
    for (int c = 0; c < columns_; ++c) {
      const float v = values_[size_t(c)];
      const int a = y(base), b = y(v);
      p.fillRect(
          QRect(x(c), std::min(a, b), std::max(1, x(c + 1) - x(c) - (columns_ < 64 ? 1 : 0)), std::abs(a - b) + 1),
          shade(v));
    }
  }
  p.setPen(palette().color(QPalette::WindowText));
  for (int r = 0; r < labels_.size(); ++r)
    p.drawText(QRect(0, plot.top() + r * rowHeight, labelWidth() - 4, rowHeight), Qt::AlignRight | Qt::AlignVCenter,
               labels_[r]);
  p.setPen(palette().color(QPalette::PlaceholderText));
  const QRect scale(plot.left(), plot.bottom() + 3, plot.width(), fontMetrics().height());
  p.drawText(scale, Qt::AlignLeft, tr("%1 features, %2 … %3").arg(columns_).arg(lo_, 0, 'g', 3).arg(hi_, 0, 'g', 3));
}

int HeatMatrix::columnAt(const QPoint& pos) const {
  const QRect plot = plotRect();
  const bool inBars = rows_ == 1 && pos.y() >= 0 && pos.y() < plot.top();
  if (columns_ <= 0 || pos.x() < plot.left() || pos.x() > plot.right() || (!plot.contains(pos) && !inBars)) return -1;
  return std::min(columns_ - 1, int(int64_t(pos.x() - plot.left()) * columns_ / plot.width()));
}

void HeatMatrix::mousePressEvent(QMouseEvent* event) {
  const int c = columnAt(event->position().toPoint());
  if (c < 0 || event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  emit columnClicked(c);
}

bool HeatMatrix::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  const QRect plot = plotRect();
  const QPoint pos = help->pos();
  const int c = columnAt(pos);
  if (c < 0) {
    QToolTip::hideText();
    return true;
  }
  const int r =
      pos.y() < plot.top() ? 0 : std::min(rows_ - 1, (pos.y() - plot.top()) / std::max(1, plot.height() / rows_));
  const float v = values_[size_t(r) * size_t(columns_) + size_t(c)];
  const QString where = rows_ == 1 ? tr("feature %1").arg(c)
                                   : tr("position %1%2, feature %3")
                                         .arg(r)
                                         .arg(labels_.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(labels_[r]))
                                         .arg(c);
  QToolTip::showText(help->globalPos(), QStringLiteral("%1: %2").arg(where).arg(v, 0, 'g', 4), this);
  return true;
}

}  // namespace plexus::widgets
