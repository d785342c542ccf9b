#include "editor/block_item.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>

#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/edge_item.h"
#include "editor/card_style.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"

namespace plexus::widgets {
namespace {

// Scene units. Wider than a node's card: proxy labels name the member as well as the port.
constexpr qreal kBlockWidth = 240;
constexpr qreal kStack = 5;    // the second card peeking out below and right: "several inside"
constexpr qreal kBlockMargin = 6;  // room outside for the stack, the selection ring and the shadow
constexpr qreal kLabelWidth = kBlockWidth / 2 - card::kTextInset - 4;

}  // namespace

QSizeF BlockItem::cardSize(size_t rows) { return {kBlockWidth, card::kBodyTop + card::kPortRow * qreal(std::max<size_t>(rows, 1)) + card::kBottom}; }

BlockItem::BlockItem(const QString& id, const Card& card, QPointF pos)
    : id_(id), name_(card.name), summary_(card.summary), collapsed_(true),
      size_(cardSize(std::max(card.inputs.size(), card.outputs.size()))) {
  setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges);
  setCacheMode(DeviceCoordinateCache);
  setPos(pos);
  for (const bool input : {true, false}) {
    const std::vector<Proxy>& proxies = input ? card.inputs : card.outputs;
    for (size_t i = 0; i < proxies.size(); ++i) {
      auto* port = new PortItem(this, proxies[i].spec, input, QPointF(input ? 0 : kBlockWidth, card::portY(i)), proxies[i].ref,
                                proxies[i].label, kLabelWidth);
      port->setConnected(proxies[i].connected);
      ports_.push_back(port);
    }
  }
  refreshToolTip();
}

BlockItem::BlockItem(const QString& id, const QString& name, const QString& summary, const QRectF& members, int depth)
    : id_(id), name_(name), summary_(summary), collapsed_(false) {
  setFlags(ItemIsSelectable);
  const QRectF frame = members.adjusted(-kFramePadding, -kFramePadding - kFrameTitle, kFramePadding, kFramePadding);
  setPos(frame.topLeft());
  size_ = frame.size();
  setZValue(-1000 + depth);  // under the wires and nodes; an inner frame over the one around it
  refreshToolTip();
}

QRectF BlockItem::sceneTitleRect() const { return QRectF(pos(), QSizeF(size_.width(), kFrameTitle)); }

QRectF BlockItem::boundingRect() const {
  return QRectF(QPointF(0, 0), size_).adjusted(-kBlockMargin, -kBlockMargin, kBlockMargin + (collapsed_ ? kStack : 0),
                                               kBlockMargin + (collapsed_ ? kStack : 0));
}

QPainterPath BlockItem::shape() const {
  QPainterPath p;
  if (collapsed_)
    p.addRoundedRect(QRectF(QPointF(0, 0), size_), card::kRadius, card::kRadius);
  else  // the title bar only: inside the frame the canvas takes clicks and rubber bands
    p.addRect(QRectF(0, 0, size_.width(), kFrameTitle));
  return p;
}

PortItem* BlockItem::port(const graph::PortRef& ref, bool input) const {
  for (PortItem* p : ports_)
    if (p->isInput() == input && p->ref() == ref) return p;
  return nullptr;
}

QPointF BlockItem::portScenePos(const graph::PortRef& ref, bool input) const {
  if (const PortItem* p = port(ref, input)) return p->scenePos();
  return mapToScene(input ? 0 : size_.width(), collapsed_ ? size_.height() / 2 : kFrameTitle / 2);
}

void BlockItem::setProblems(const std::vector<graph::Problem>& problems) {
  if (problems == problems_) return;
  problems_ = problems;
  severity_.reset();
  for (const graph::Problem& p : problems_)
    if (!severity_ || p.severity == graph::Severity::Error) severity_ = p.severity;
  refreshToolTip();
  update();
}

void BlockItem::refreshToolTip() {
  QStringList lines{QObject::tr("Block '%1': %2").arg(name_, summary_)};
  lines << (collapsed_ ? QObject::tr("Double-click to open it") : QObject::tr("Double-click the title to close it"));
  for (const graph::Problem& p : problems_)
    lines << (p.severity == graph::Severity::Error ? QObject::tr("Error in %1: %2") : QObject::tr("Warning in %1: %2"))
                 .arg(qstr(p.node), qstr(p.message));
  setToolTip(lines.join('\n'));
}

QVariant BlockItem::itemChange(GraphicsItemChange change, const QVariant& value) {
  if (change == ItemPositionChange)
    if (const auto* scene = qobject_cast<const NodeScene*>(this->scene())) return scene->dragPosition(value.toPointF());
  if (change == ItemPositionHasChanged)
    for (EdgeItem* e : edges_) e->updatePath();
  return QGraphicsItem::itemChange(change, value);
}

void BlockItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const bool detailed = option->levelOfDetailFromTransform(painter->worldTransform()) >= card::kTextLod;
  if (collapsed_)
    paintCard(painter, detailed);
  else
    paintFrame(painter, detailed);
}

void BlockItem::paintCard(QPainter* painter, bool detailed) const {
  const Theme& theme = ThemeManager::instance().theme();
  const QRectF card(QPointF(0, 0), size_);
  painter->setPen(Qt::NoPen);
  painter->setBrush(theme.nodeShadow);
  painter->drawRoundedRect(card.translated(kStack, kStack + 3), card::kRadius, card::kRadius);
  painter->setPen(QPen(theme.nodeBorder, 1));
  painter->setBrush(theme.nodeBody);
  painter->drawRoundedRect(card.translated(kStack, kStack), card::kRadius, card::kRadius);
  painter->setPen(Qt::NoPen);
  painter->drawRoundedRect(card, card::kRadius, card::kRadius);

  QPainterPath rounded;
  rounded.addRoundedRect(card, card::kRadius, card::kRadius);
  QPainterPath band;
  band.addRect(QRectF(0, 0, card.width(), card::kHeader));
  painter->setBrush(theme.block);
  painter->drawPath(rounded.intersected(band));
  if (detailed) {
    const qreal text_width = card.width() - 2 * card::kTextInset;
    painter->setPen(Qt::white);
    painter->setFont(card::titleFont());
    painter->drawText(QRectF(card::kTextInset, 4, text_width, 18), Qt::AlignLeft | Qt::AlignVCenter,
                      QFontMetricsF(card::titleFont()).elidedText(name_, Qt::ElideRight, text_width));
    painter->setFont(card::smallFont());
    painter->setPen(QColor(255, 255, 255, 200));
    painter->drawText(QRectF(card::kTextInset, 21, text_width, 15), Qt::AlignLeft | Qt::AlignVCenter,
                      QFontMetricsF(card::smallFont()).elidedText(summary_, Qt::ElideRight, text_width));
  }

  QPen border(theme.nodeBorder, 1);
  if (severity_) border = QPen(*severity_ == graph::Severity::Error ? theme.error : theme.warning, 2.5);
  painter->setPen(border);
  painter->setBrush(Qt::NoBrush);
  painter->drawRoundedRect(card, card::kRadius, card::kRadius);
  if (isSelected()) {
    painter->setPen(QPen(theme.selection, 2.5));
    painter->drawRoundedRect(card.adjusted(-3, -3, 3, 3), card::kRadius + 3, card::kRadius + 3);
  }
}

void BlockItem::paintFrame(QPainter* painter, bool detailed) const {
  const Theme& theme = ThemeManager::instance().theme();
  const QRectF frame(QPointF(0, 0), size_);
  QColor tint = theme.block;
  tint.setAlpha(theme.dark ? 46 : 22);
  QColor edge = theme.block;
  edge.setAlpha(theme.dark ? 200 : 150);
  painter->setPen(QPen(isSelected() ? theme.selection : edge, isSelected() ? 2.5 : 1.2));
  painter->setBrush(tint);
  painter->drawRoundedRect(frame, card::kRadius, card::kRadius);

  QPainterPath rounded;
  rounded.addRoundedRect(frame, card::kRadius, card::kRadius);
  QPainterPath band;
  band.addRect(QRectF(0, 0, frame.width(), kFrameTitle));
  painter->setPen(Qt::NoPen);
  painter->setBrush(theme.block);
  painter->drawPath(rounded.intersected(band));
  if (!detailed) return;
  // "▾ name" on the left (the frame can be closed), the summary on the right.
  const QRectF title(card::kTextInset, 0, frame.width() - 2 * card::kTextInset, kFrameTitle);
  const QFontMetricsF title_metrics(card::titleFont()), small_metrics(card::smallFont());
  const QString name = title_metrics.elidedText(QStringLiteral("▾ ") + name_, Qt::ElideRight, title.width() * 0.6);
  painter->setPen(Qt::white);
  painter->setFont(card::titleFont());
  painter->drawText(title, Qt::AlignLeft | Qt::AlignVCenter, name);
  painter->setFont(card::smallFont());
  painter->setPen(QColor(255, 255, 255, 200));
  const qreal rest = title.width() - title_metrics.horizontalAdvance(name) - 12;
  if (rest > 20)
    painter->drawText(title, Qt::AlignRight | Qt::AlignVCenter, small_metrics.elidedText(summary_, Qt::ElideRight, rest));
}

}  // namespace plexus::widgets
