#include "projector/projector_plot.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <map>

#include "common/theme.h"
#include "dataset/dataset_class_colours.h"

namespace plexus::widgets {

namespace {
constexpr double kMargin = 16, kLegendWidth = 150, kDot = 3.2, kPick = 7;
}

ProjectorPlot::ProjectorPlot(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(320, 240);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, [this] {
    render();
    update();
  });
}

void ProjectorPlot::setPoints(std::vector<Point> points, const QStringList& class_names) {
  points_ = std::move(points);
  class_names_ = class_names;
  x0_ = y0_ = 0, x1_ = y1_ = 1;
  if (!points_.empty()) {
    x0_ = x1_ = points_[0].x, y0_ = y1_ = points_[0].y;
    for (const Point& p : points_) {
      x0_ = std::min(x0_, p.x), x1_ = std::max(x1_, p.x);
      y0_ = std::min(y0_, p.y), y1_ = std::max(y1_, p.y);
    }
  }
  hovered_ = -1;
  render();
  update();
}

QRectF ProjectorPlot::plotRect() const {
  const double legend = class_names_.isEmpty() ? 0 : kLegendWidth;
  return QRectF(kMargin, kMargin, std::max(1.0, width() - 2 * kMargin - legend), std::max(1.0, height() - 2 * kMargin));
}

QPointF ProjectorPlot::screenPosition(int row) const {
  const QRectF r = plotRect();
  const Point& p = points_.at(size_t(row));
  // The same scale on both axes: distances in the map mean the same either way.
  const double span = std::max({double(x1_ - x0_), double(y1_ - y0_) * r.width() / r.height(), 1e-12});
  const double scale = r.width() / span;
  const double cx = (x0_ + x1_) / 2.0, cy = (y0_ + y1_) / 2.0;
  return {r.center().x() + (p.x - cx) * scale, r.center().y() - (p.y - cy) * scale};
}

int ProjectorPlot::pointAt(const QPointF& pos) const {
  int best = -1;
  double best_d = kPick * kPick;
  for (int i = 0; i < count(); ++i) {
    const QPointF d = screenPosition(i) - pos;
    const double d2 = d.x() * d.x() + d.y() * d.y();
    if (d2 <= best_d) best = i, best_d = d2;
  }
  return best;
}

void ProjectorPlot::render() {
  const qreal ratio = devicePixelRatioF();
  cache_ = QImage(size() * ratio, QImage::Format_ARGB32_Premultiplied);
  cache_.setDevicePixelRatio(ratio);
  const Theme& theme = ThemeManager::instance().theme();
  cache_.fill(palette().base().color());
  QPainter p(&cache_);
  p.setRenderHint(QPainter::Antialiasing);
  // Each class's dot and ring drawn once, then stamped: thousands of antialiased ellipses
  // would hold the UI thread for tens of milliseconds.
  std::map<std::pair<int, bool>, QImage> sprites;
  auto sprite = [&](int label, bool miss) -> const QImage& {
    QImage& img = sprites[{label, miss}];
    if (!img.isNull()) return img;
    img = QImage(QSize(16, 16) * ratio, QImage::Format_ARGB32_Premultiplied);
    img.setDevicePixelRatio(ratio);
    img.fill(Qt::transparent);
    QPainter d(&img);
    d.setRenderHint(QPainter::Antialiasing);
    const QColor c = label >= 0 ? classColour(label, theme.dark) : theme.mutedText;
    const QPointF at(8, 8);
    if (!miss) {
      d.setPen(Qt::NoPen);
      d.setBrush(c);
      d.drawEllipse(at, kDot, kDot);
    } else {
      d.setPen(QPen(c, 1.4));
      d.drawEllipse(at, kDot + 1.5, kDot + 1.5);
      d.drawLine(at + QPointF(-2.5, -2.5), at + QPointF(2.5, 2.5));
      d.drawLine(at + QPointF(-2.5, 2.5), at + QPointF(2.5, -2.5));
    }
    return img;
  };
  // Correct ones first, the misclassified on top where they can be seen.
  for (const bool wrong : {false, true})
    for (int i = 0; i < count(); ++i) {
      const Point& pt = points_[size_t(i)];
      const bool miss = pt.label >= 0 && pt.predicted >= 0 && pt.label != pt.predicted;
      if (miss == wrong) p.drawImage(screenPosition(i) - QPointF(8, 8), sprite(pt.label, miss));
    }
  if (class_names_.isEmpty()) return;
  const double left = width() - kLegendWidth + 4;
  double y = kMargin + 8;
  p.setPen(theme.text);
  p.drawText(QPointF(left, y), tr("True class"));
  y += 18;
  for (int c = 0; c < class_names_.size() && y < height() - 40; ++c, y += 17) {
    p.setPen(Qt::NoPen);
    p.setBrush(classColour(c, theme.dark));
    p.drawEllipse(QPointF(left + 5, y - 4), 4.5, 4.5);
    p.setPen(theme.text);
    p.drawText(QPointF(left + 16, y), fontMetrics().elidedText(class_names_[c], Qt::ElideRight, int(kLegendWidth) - 24));
  }
  y += 8;
  const QPointF mark(left + 5, y - 4);
  p.setPen(QPen(theme.mutedText, 1.4));
  p.setBrush(Qt::NoBrush);
  p.drawEllipse(mark, kDot + 1.5, kDot + 1.5);
  p.drawLine(mark + QPointF(-2.5, -2.5), mark + QPointF(2.5, 2.5));
  p.drawLine(mark + QPointF(-2.5, 2.5), mark + QPointF(2.5, -2.5));
  p.setPen(theme.text);
  p.drawText(QPointF(left + 16, y), tr("misclassified"));
}

void ProjectorPlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.drawImage(0, 0, cache_);
  if (hovered_ >= 0) paintCard(p);
}

// The hovered example: a highlight ring, then a card beside it with its picture and classes.
void ProjectorPlot::paintCard(QPainter& p) const {
  const Theme& theme = ThemeManager::instance().theme();
  const Point& pt = points_[size_t(hovered_)];
  const QPointF at = screenPosition(hovered_);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(theme.selection, 2));
  p.setBrush(Qt::NoBrush);
  p.drawEllipse(at, kDot + 4, kDot + 4);
  auto name = [this](int c) { return c >= 0 && c < class_names_.size() ? class_names_[c] : QString("?"); };
  const QString text = tr("true: %1\npredicted: %2").arg(name(pt.label), name(pt.predicted));
  const QImage picture = preview_ ? preview_(hovered_) : QImage();
  const QSize shown = picture.isNull() ? QSize(0, 0) : picture.size().scaled(96, 96, Qt::KeepAspectRatio);
  const QRect text_box = fontMetrics().boundingRect(QRect(0, 0, 200, 100), 0, text);
  const double w = std::max(shown.width(), text_box.width()) + 16, h = shown.height() + text_box.height() + 20;
  QPointF corner = at + QPointF(12, 12);
  if (corner.x() + w > width()) corner.setX(at.x() - 12 - w);
  if (corner.y() + h > height()) corner.setY(at.y() - 12 - h);
  const QRectF card(corner, QSizeF(w, h));
  p.setPen(QPen(theme.mutedText, 1));
  p.setBrush(palette().toolTipBase());
  p.drawRoundedRect(card, 4, 4);
  if (!picture.isNull()) p.drawImage(QRectF(card.topLeft() + QPointF(8, 8), QSizeF(shown)), picture);
  p.setPen(palette().toolTipText().color());
  p.drawText(QRectF(card.left() + 8, card.top() + 12 + shown.height(), w - 16, text_box.height() + 4), 0, text);
}

void ProjectorPlot::resizeEvent(QResizeEvent*) { render(); }

void ProjectorPlot::hover(int row) {
  if (row == hovered_ || row >= count()) return;
  hovered_ = row;
  update();
  emit hovered(row);
}

void ProjectorPlot::mouseMoveEvent(QMouseEvent* event) { hover(pointAt(event->position())); }

void ProjectorPlot::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  if (const int row = pointAt(event->position()); row >= 0) emit clicked(row);
}

void ProjectorPlot::leaveEvent(QEvent*) { hover(-1); }

}  // namespace plexus::widgets
