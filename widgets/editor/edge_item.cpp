#include "editor/edge_item.h"

#include <QFontMetricsF>
#include <QGuiApplication>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>

#include "common/theme.h"
#include "editor/block_item.h"
#include "editor/node_item.h"

namespace plexus::widgets {
namespace {

constexpr qreal kHitWidth = 10;
constexpr qreal kLabelPadX = 4, kLabelPadY = 1.5;
// The label keeps its on-screen size when zooming out to 50% (drawn up to twice as large in
// scene units) and grows with zooming in. Squeezed between close cards it shrinks, and it is
// left out below kMinLabelPixels on screen (zoom in to read it, or hover the wire).
constexpr qreal kMaxLabelScale = 2;
constexpr qreal kMinLabelPixels = 7.5;
constexpr qreal kLabelClearance = 4;

const QFont& labelFont() {
  static const QFont f = [] {
    QFont font = QGuiApplication::font();
    font.setPixelSize(10);
    return font;
  }();
  return f;
}

}  // namespace

QPainterPath wirePath(QPointF from, QPointF to) {
  // Horizontal tangents; the farther apart (or the more backwards) the ends, the wider the bend.
  const qreal dx = std::max(40.0, std::abs(to.x() - from.x()) * 0.5 + (to.x() < from.x() ? 40 : 0));
  QPainterPath path(from);
  path.cubicTo(from + QPointF(dx, 0), to - QPointF(dx, 0), to);
  return path;
}

QString shapeLabel(const std::optional<Shape>& shape) {
  if (!shape) return QStringLiteral("?");
  QString text = QStringLiteral("N");
  for (int64_t d : *shape) text += QChar(0x00D7) + QString::number(d);
  return text;
}

EdgeItem::EdgeItem(const graph::Edge& edge, NodeItem* from, NodeItem* to) : edge_(edge), from_(from), to_(to) {
  setFlags(ItemIsSelectable);
  setZValue(0);  // under every node (nodes start at 1)
  label_.setTextFormat(Qt::PlainText);
  label_.setPerformanceHint(QStaticText::AggressiveCaching);
  updatePath();
}

void EdgeItem::setLabel(const QString& text) {
  if (text == label_.text()) return;
  label_.setText(text);
  setToolTip(QStringLiteral("%1.%2 → %3.%4: %5")
                 .arg(QString::fromStdString(edge_.from.node), QString::fromStdString(edge_.from.port),
                      QString::fromStdString(edge_.to.node), QString::fromStdString(edge_.to.port), text));
  label_.prepare(QTransform(), labelFont());
  label_size_ = label_.size();
  updatePath();  // the bounds hold the label
}

void EdgeItem::setLabelShown(bool shown) {
  if (shown == label_shown_) return;
  label_shown_ = shown;
  updatePath();  // the bounds and the hit area hold the label only when it is drawn
  update();
}

QRectF EdgeItem::labelRect(qreal scale) const {
  const QSizeF size = (label_size_ + QSizeF(2 * kLabelPadX, 2 * kLabelPadY)) * scale;
  return QRectF(mid_ - QPointF(size.width() / 2, size.height() / 2), size);
}

void EdgeItem::setProxies(const BlockItem* from, const BlockItem* to) {
  if (from == from_proxy_ && to == to_proxy_) return;
  from_proxy_ = from;
  to_proxy_ = to;
  updatePath();
}

void EdgeItem::updatePath() {
  prepareGeometryChange();
  const QPointF from = from_proxy_ ? from_proxy_->portScenePos(edge_.from, false) : from_->portScenePos(edge_.from.port, false);
  const QPointF to = to_proxy_ ? to_proxy_->portScenePos(edge_.to, true) : to_->portScenePos(edge_.to.port, true);
  path_ = wirePath(from, to);
  mid_ = (from + to) / 2;  // the curve is symmetric about its middle
  hit_ = QPainterPath();  // rebuilt on the next hit test, not on every drag step
  bounds_ = path_.controlPointRect().adjusted(-kHitWidth, -kHitWidth, kHitWidth, kHitWidth);
  if (drawsLabel()) bounds_ |= labelRect(kMaxLabelScale).adjusted(-1, -1, 1, 1);
}

QRectF EdgeItem::boundingRect() const { return bounds_; }

QPainterPath EdgeItem::shape() const {
  if (hit_.isEmpty()) {
    QPainterPathStroker stroker;
    stroker.setWidth(kHitWidth);
    hit_ = stroker.createStroke(path_);
    if (drawsLabel()) {
      QPainterPath label;
      label.addRect(labelRect(1));
      hit_ = hit_.united(label);  // united, not added: overlapping sub-paths would cut holes
    }
  }
  return hit_;
}

// How large the label may be drawn: its preferred scale, shrunk until it clears both end cards.
qreal EdgeItem::labelScale(qreal preferred) const {
  const QSizeF box = labelRect(1).size();
  const qreal c = kLabelClearance;
  qreal scale = preferred;
  for (const QRectF& end : {from_proxy_ ? from_proxy_->sceneCardRect() : from_->sceneCardRect(),
                            to_proxy_ ? to_proxy_->sceneCardRect() : to_->sceneCardRect()}) {
    const QRectF card = end.adjusted(-c, -c, c, c);
    // Clear of the card either beside it or above/below it, whichever allows more.
    const qreal beside = std::max(card.left() - mid_.x(), mid_.x() - card.right()) * 2 / box.width();
    const qreal apart = std::max(card.top() - mid_.y(), mid_.y() - card.bottom()) * 2 / box.height();
    scale = std::min(scale, std::max({beside, apart, 0.0}));
  }
  return scale;
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const Theme& theme = ThemeManager::instance().theme();
  const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
  QPen pen(isSelected() ? theme.wireSelected : theme.wire, isSelected() ? 3 : 2);
  pen.setCapStyle(Qt::RoundCap);
  painter->setPen(pen);
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(path_);

  if (!drawsLabel()) return;
  const qreal scale = labelScale(std::clamp(1 / lod, 1.0, kMaxLabelScale));
  if (labelFont().pixelSize() * scale * lod < kMinLabelPixels) return;  // unreadable: the tooltip has it
  const QRectF box = labelRect(scale);
  painter->setPen(QPen(isSelected() ? theme.wireSelected : theme.wire, 1 * scale));
  painter->setBrush(theme.wireLabelBackground);
  painter->drawRoundedRect(box, box.height() / 2, box.height() / 2);
  painter->save();
  painter->translate(box.topLeft() + QPointF(kLabelPadX, kLabelPadY) * scale);
  painter->scale(scale, scale);
  painter->setFont(labelFont());
  painter->setPen(theme.wireLabel);
  painter->drawStaticText(QPointF(0, 0), label_);
  painter->restore();
}

}  // namespace plexus::widgets
