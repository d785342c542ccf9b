#include "tryit/digit_canvas.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QTimer>

#include <algorithm>

#include "common/theme.h"

namespace plexus::widgets {

namespace {

constexpr int kCanvasMargin = 6;
constexpr double kCorner = 8;

}  // namespace

DigitCanvas::DigitCanvas(QWidget* parent) : QWidget(parent), throttle_(new QTimer(this)) {
  setObjectName(QStringLiteral("tryItCanvas"));
  setCursor(Qt::CrossCursor);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setToolTip(tr("Draw with the mouse; drop an image file here to try it instead"));
  // Every mouse move would otherwise re-run the model; 25 inputs a second still look live.
  throttle_->setSingleShot(true);
  throttle_->setInterval(40);
  connect(throttle_, &QTimer::timeout, this, &DigitCanvas::changed);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, qOverload<>(&QWidget::update));
}

QRectF DigitCanvas::sheetRect() const {
  const double side = std::max(1, std::min(width(), height()) - 2 * kCanvasMargin);
  return {(width() - side) / 2, (height() - side) / 2, side, side};
}

QPointF DigitCanvas::toSheet(const QPointF& pos) const {
  const QRectF sheet = sheetRect();
  return {(pos.x() - sheet.left()) / sheet.width(), (pos.y() - sheet.top()) / sheet.height()};
}

void DigitCanvas::drawStrokes(QPainter& painter, double side) const {
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(Qt::white, kPenWidth * side, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  for (const QPolygonF& stroke : strokes_) {
    QPolygonF scaled;
    for (const QPointF& p : stroke) scaled << p * side;
    if (scaled.size() == 1)
      painter.drawPoint(scaled.front());  // a click: a dot
    else
      painter.drawPolyline(scaled);
  }
}

QImage DigitCanvas::render(int side) const {
  QImage image(side, side, QImage::Format_Grayscale8);
  image.fill(0);
  QPainter painter(&image);
  drawStrokes(painter, side);
  return image;
}

void DigitCanvas::addStroke(const QPolygonF& stroke) {
  if (stroke.isEmpty()) return;
  picture_ = QImage();
  strokes_.push_back(stroke);
  update();
  emit changed();
}

void DigitCanvas::undo() {
  if (strokes_.empty()) return;
  strokes_.pop_back();
  update();
  emit changed();
}

void DigitCanvas::clear() {
  const bool had_strokes = !strokes_.empty();
  strokes_.clear();
  picture_ = QImage();
  update();
  if (had_strokes) emit changed();
}

void DigitCanvas::setPicture(const QImage& picture) {
  strokes_.clear();
  picture_ = picture;
  update();
}

void DigitCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const Theme& theme = ThemeManager::instance().theme();
  const QRectF sheet = sheetRect();
  QPainterPath rounded;
  rounded.addRoundedRect(sheet, kCorner, kCorner);
  painter.fillPath(rounded, Qt::black);
  painter.save();
  painter.setClipPath(rounded);
  if (!picture_.isNull()) {
    painter.setRenderHint(QPainter::SmoothPixmapTransform);
    const QSizeF fitted = QSizeF(picture_.size()).scaled(sheet.size(), Qt::KeepAspectRatio);
    painter.drawImage(QRectF(sheet.center() - QPointF(fitted.width() / 2, fitted.height() / 2), fitted), picture_);
  } else if (strokes_.empty()) {
    painter.setPen(QColor(0x80, 0x80, 0x80));
    painter.drawText(sheet, Qt::AlignCenter | Qt::TextWordWrap, tr("Draw a digit here\nor drop an image file"));
  } else {
    painter.translate(sheet.topLeft());
    drawStrokes(painter, sheet.width());
  }
  painter.restore();
  painter.setPen(QPen(theme.nodeBorder, 1));
  painter.setBrush(Qt::NoBrush);
  painter.drawRoundedRect(sheet.adjusted(0.5, 0.5, -0.5, -0.5), kCorner, kCorner);
}

void DigitCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  picture_ = QImage();
  strokes_.push_back(QPolygonF{toSheet(event->position())});
  drawing_ = true;
  update();
  changedWhileDrawing();
}

void DigitCanvas::mouseMoveEvent(QMouseEvent* event) {
  if (!drawing_) return;
  strokes_.back() << toSheet(event->position());
  update();
  changedWhileDrawing();
}

void DigitCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !drawing_) return;
  drawing_ = false;
  throttle_->stop();
  emit changed();  // the finished stroke, at once
}

void DigitCanvas::changedWhileDrawing() {
  if (!throttle_->isActive()) throttle_->start();
}

}  // namespace plexus::widgets
