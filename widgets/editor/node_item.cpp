#include "editor/node_item.h"

#include <QCursor>
#include <QFontMetricsF>
#include <QGuiApplication>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>

#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/card_style.h"
#include "editor/edge_item.h"
#include "editor/node_scene.h"
#include "graph/node_settings.h"

namespace plexus::widgets {
namespace {

// Scene units; the grid is 20, so a card spans whole grid cells horizontally.
constexpr qreal kNodeWidth = 176;
constexpr qreal kParamLine = 18;
constexpr qreal kNodeMargin = 5;  // room outside the card for the selection ring and the shadow
constexpr qreal kPortRadius = 5;
constexpr qreal kPortHit = 9;
constexpr size_t kMaxParams = 3;
constexpr qreal kLockWidth = 11;  // the padlock of a frozen node, right of its title

const QFont& smallBoldFont() { static const QFont f = cardFont(11, true); return f; }

// An unknown type has no ports and one line naming the type. A node's output ports may follow
// from its parameters (Split), so the rows count the node's own.
size_t portRows(const graph::LayerType* type, size_t outputs) { return type ? std::max(type->inputs.size(), outputs) : 0; }
size_t paramLines(const graph::LayerType* type) { return type ? std::min(type->params.size(), kMaxParams) : 1; }

qreal paramsTop(size_t rows) { return card::kBodyTop + card::kPortRow * qreal(rows) + 2; }

QSizeF cardSize(const graph::LayerType* type, size_t outputs) {
  const size_t lines = paramLines(type);
  return {kNodeWidth, paramsTop(portRows(type, outputs)) + kParamLine * qreal(lines) + card::kBottom};
}

std::vector<graph::PortSpec> outputPorts(const graph::LayerType* type, const graph::Node& node) {
  return type ? type->outputs_of(node) : std::vector<graph::PortSpec>{};
}

// How the node trains, when not as the project says (graph/node_settings.h): "frozen",
// "lr ×0.1", "wd ×0", "lr ×2 · wd ×0"; "" otherwise.
QString trainingBadge(const graph::Node& node) {
  if (!graph::node_settings_apply(node)) return {};
  if (node.frozen) return QObject::tr("frozen");
  QStringList parts;
  const auto factor = [](double v) { return qstr(graph::to_string(graph::ParamValue(v))); };
  if (node.lr_mult != 1) parts << QObject::tr("lr ×%1").arg(factor(node.lr_mult));
  if (node.weight_decay_mult != 1) parts << QObject::tr("wd ×%1").arg(factor(node.weight_decay_mult));
  return parts.join(QStringLiteral(" · "));
}

}  // namespace

QFont cardFont(int pixels, bool bold) {
  QFont f = QGuiApplication::font();
  f.setPixelSize(pixels);  // pixels = scene units: text fits the fixed geometry on any screen
  f.setBold(bold);
  return f;
}

QSizeF nodeCardSize(const graph::Node& node) {
  const graph::LayerType* type = graph::Registry::instance().find(node.type);
  return cardSize(type, outputPorts(type, node).size());
}

// ---- PortItem ------------------------------------------------------------------------------

PortItem::PortItem(NodeItem* node, const graph::PortSpec& spec, bool input, QPointF centre)
    : PortItem(node, spec, input, centre, {node->id().toStdString(), spec.name}, qstr(spec.name),
               kNodeWidth / 2 - card::kTextInset - 4) {}

PortItem::PortItem(QGraphicsItem* owner, const graph::PortSpec& spec, bool input, QPointF centre, graph::PortRef ref,
                   const QString& label, qreal label_width)
    : QGraphicsItem(owner), ref_(std::move(ref)), label_(label), label_width_(label_width), input_(input),
      required_(spec.required), variadic_(spec.variadic) {
  setPos(centre);
  setAcceptHoverEvents(true);
  setCursor(Qt::CrossCursor);
  setToolTip(spec.doc.empty() ? label : QStringLiteral("%1 — %2").arg(label, qstr(spec.doc)));
  setCacheMode(DeviceCoordinateCache);
}

QRectF PortItem::labelRect() const {
  const qreal left = input_ ? card::kTextInset : -card::kTextInset - label_width_;
  return QRectF(left, -card::kPortRow / 2, label_width_, card::kPortRow);
}

QRectF PortItem::boundingRect() const {
  const qreal r = kPortHit + 1;
  return QRectF(-r, -r, 2 * r, 2 * r) | labelRect();
}

QPainterPath PortItem::shape() const {
  QPainterPath p;
  p.addEllipse(QPointF(0, 0), kPortHit, kPortHit);
  return p;
}

void PortItem::setConnected(bool connected) {
  if (connected == connected_) return;
  connected_ = connected;
  update();
}

void PortItem::setWireState(WireState state) {
  if (state == state_) return;
  state_ = state;
  update();
}

void PortItem::hoverEnterEvent(QGraphicsSceneHoverEvent*) {
  hovered_ = true;
  update();
}

void PortItem::hoverLeaveEvent(QGraphicsSceneHoverEvent*) {
  hovered_ = false;
  update();
}

void PortItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const Theme& theme = ThemeManager::instance().theme();
  const bool refuses = state_ == WireState::Refuses;
  const bool target = state_ == WireState::Target || (hovered_ && state_ == WireState::Idle);
  // A required input with nothing wired to it is drawn hollow: the graph is not complete.
  const bool hollow = input_ && required_ && !connected_;

  const qreal radius = target ? kPortRadius + 2 : kPortRadius;
  const QColor ring = refuses ? theme.portDimmed : target ? theme.selection : theme.portBorder;
  const QColor fill = refuses ? theme.portDimmed : hollow ? theme.portFill : theme.portBorder;
  painter->setPen(QPen(ring, target || hollow ? 2 : 1.2));
  painter->setBrush(fill);
  painter->drawEllipse(QPointF(0, 0), radius, radius);

  if (option->levelOfDetailFromTransform(painter->worldTransform()) < card::kTextLod) return;
  painter->setFont(card::smallFont());
  painter->setPen(refuses ? theme.mutedText : theme.nodeText);
  const QRectF label = labelRect();
  const QString text = QFontMetricsF(card::smallFont()).elidedText(label_, Qt::ElideRight, label.width());
  painter->drawText(label, Qt::AlignVCenter | (input_ ? Qt::AlignLeft : Qt::AlignRight), text);
}

// ---- NodeItem ------------------------------------------------------------------------------

NodeItem::NodeItem(const graph::Node& node)
    : id_(qstr(node.id)), type_(graph::Registry::instance().find(node.type)), size_(nodeCardSize(node)) {
  setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges);
  // Rendered once per zoom level into a device-resolution pixmap (sharp on high-DPI screens,
  // unlike ItemCoordinateCache); dragging then only blits it.
  setCacheMode(DeviceCoordinateCache);
  setPos(node.position.x, node.position.y);
  if (type_)
    for (size_t i = 0; i < type_->inputs.size(); ++i)
      ports_.push_back(new PortItem(this, type_->inputs[i], true, QPointF(0, card::portY(i))));
  setNode(node);
}

void NodeItem::setOutputPorts(std::vector<graph::PortSpec> outputs) {
  const auto same_name = [](const graph::PortSpec& a, const graph::PortSpec& b) { return a.name == b.name; };
  if (std::equal(outputs.begin(), outputs.end(), outputs_.begin(), outputs_.end(), same_name)) return;
  std::erase_if(ports_, [](PortItem* p) {
    if (p->isInput()) return false;
    delete p;
    return true;
  });
  outputs_ = std::move(outputs);
  for (size_t i = 0; i < outputs_.size(); ++i)
    ports_.push_back(new PortItem(this, outputs_[i], false, QPointF(kNodeWidth, card::portY(i))));
  prepareGeometryChange();
  size_ = cardSize(type_, outputs_.size());
  refreshConnections();
  for (EdgeItem* e : edges_) e->updatePath();  // a wire from a port that went meets the card's side
}

void NodeItem::setNode(const graph::Node& node) {
  setOutputPorts(outputPorts(type_, node));
  const QFontMetricsF title_metrics(card::titleFont()), small_metrics(card::smallFont());
  const qreal text_width = kNodeWidth - 2 * card::kTextInset;
  frozen_ = graph::node_settings_apply(node) && node.frozen;
  title_ = title_metrics.elidedText(type_ ? qstr(type_->display_name) : QObject::tr("Unknown layer"), Qt::ElideRight,
                                    text_width - (frozen_ ? kLockWidth + 4 : 0));
  badge_ = trainingBadge(node);
  const qreal badge_width = badge_.isEmpty() ? 0 : small_metrics.horizontalAdvance(badge_) + 6;
  subtitle_ = small_metrics.elidedText(qstr(node.name.empty() ? node.id : node.name), Qt::ElideRight,
                                       text_width - badge_width);
  params_.clear();
  if (type_) {
    // Show what the user changed first, then the type's leading parameters, in the type's order.
    std::vector<const graph::ParamSpec*> shown;
    for (const graph::ParamSpec& p : type_->params)
      if (shown.size() < kMaxParams && node.params.count(p.name) && node.params.at(p.name) != p.default_value)
        shown.push_back(&p);
    for (const graph::ParamSpec& p : type_->params)
      if (shown.size() < kMaxParams && std::find(shown.begin(), shown.end(), &p) == shown.end()) shown.push_back(&p);
    std::sort(shown.begin(), shown.end());  // pointers into type_->params: the type's order
    for (const graph::ParamSpec* p : shown) {
      const auto it = node.params.find(p->name);
      const graph::ParamValue& value = it == node.params.end() ? p->default_value : it->second;
      const bool changed = value != p->default_value;
      const std::string text = !changed && !p->default_means.empty() ? p->default_means : graph::to_string(value);
      params_.push_back({qstr(p->name), qstr(text), changed});
    }
    description_ = qstr(type_->display_name + ": " + type_->description);  // the title may be elided
  } else {
    description_ = QObject::tr("Layer type '%1' is not known").arg(qstr(node.type));
    params_.push_back({QObject::tr("type"), qstr(node.type), true});
  }
  refreshToolTip();
  update();
}

void NodeItem::setProblems(const std::vector<graph::Problem>& problems) {
  if (problems == problems_) return;
  problems_ = problems;
  severity_.reset();
  for (const graph::Problem& p : problems_)
    if (!severity_ || p.severity == graph::Severity::Error) severity_ = p.severity;
  refreshToolTip();
  update();
}

void NodeItem::setToolTipNote(const QString& note) {
  if (note == note_) return;
  note_ = note;
  refreshToolTip();
}

void NodeItem::refreshToolTip() {
  QStringList lines;
  for (const graph::Problem& p : problems_)
    lines << (p.severity == graph::Severity::Error ? QObject::tr("Error: %1") : QObject::tr("Warning: %1"))
                 .arg(qstr(p.message));
  if (lines.isEmpty()) lines << description_;
  if (!badge_.isEmpty()) lines << QObject::tr("Trains: %1").arg(badge_);
  if (!note_.isEmpty()) lines << note_;
  setToolTip(lines.join('\n'));
}

PortItem* NodeItem::port(const std::string& name, bool input) const {
  for (PortItem* p : ports_)
    if (p->isInput() == input && p->ref().port == name) return p;
  return nullptr;
}

QPointF NodeItem::portScenePos(const std::string& name, bool input) const {
  if (const PortItem* p = port(name, input)) return p->scenePos();
  return mapToScene(input ? 0 : kNodeWidth, size_.height() / 2);
}

void NodeItem::attach(EdgeItem* edge) {
  edges_.push_back(edge);
  refreshConnections();
}

void NodeItem::detach(EdgeItem* edge) {
  edges_.erase(std::remove(edges_.begin(), edges_.end(), edge), edges_.end());
  refreshConnections();
}

void NodeItem::refreshConnections() {
  const std::string id = id_.toStdString();
  for (PortItem* p : ports_) {
    const std::string name = p->ref().port;
    p->setConnected(std::any_of(edges_.begin(), edges_.end(), [&](const EdgeItem* e) {
      const graph::PortRef& end = p->isInput() ? e->edge().to : e->edge().from;
      return end.node == id && end.port == name;
    }));
  }
}

QVariant NodeItem::itemChange(GraphicsItemChange change, const QVariant& value) {
  if (change == ItemPositionChange)
    if (const auto* scene = qobject_cast<const NodeScene*>(this->scene())) return scene->dragPosition(value.toPointF());
  if (change == ItemPositionHasChanged)
    for (EdgeItem* e : edges_) e->updatePath();  // wires follow live, nothing else is touched
  return QGraphicsItem::itemChange(change, value);
}

QRectF NodeItem::boundingRect() const {
  return QRectF(QPointF(0, 0), size_).adjusted(-kNodeMargin, -kNodeMargin, kNodeMargin, kNodeMargin);
}

QPainterPath NodeItem::shape() const {
  QPainterPath p;
  p.addRoundedRect(QRectF(QPointF(0, 0), size_), card::kRadius, card::kRadius);
  return p;
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const Theme& theme = ThemeManager::instance().theme();
  const bool detailed = option->levelOfDetailFromTransform(painter->worldTransform()) >= card::kTextLod;
  const QRectF card(QPointF(0, 0), size_);

  painter->setPen(Qt::NoPen);
  painter->setBrush(theme.nodeShadow);
  painter->drawRoundedRect(card.translated(0, 3), card::kRadius, card::kRadius);
  painter->setBrush(theme.nodeBody);
  painter->drawRoundedRect(card, card::kRadius, card::kRadius);
  paintHeader(painter, card, detailed);
  if (detailed) paintParams(painter);

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

void NodeItem::paintHeader(QPainter* painter, const QRectF& card, bool detailed) const {
  const Theme& theme = ThemeManager::instance().theme();
  QPainterPath header;
  header.addRoundedRect(card, card::kRadius, card::kRadius);
  QPainterPath band;
  band.addRect(QRectF(0, 0, card.width(), card::kHeader));
  painter->setPen(Qt::NoPen);
  const QColor band_colour = theme.category(type_ ? qstr(type_->category) : QString());  // neutral grey if unknown
  painter->setBrush(band_colour);
  painter->drawPath(header.intersected(band));
  if (!detailed) return;
  painter->setPen(Qt::white);  // category colours are chosen for white text
  painter->setFont(card::titleFont());
  painter->drawText(QRectF(card::kTextInset, 4, card.width() - 2 * card::kTextInset, 18), Qt::AlignLeft | Qt::AlignVCenter, title_);
  if (frozen_) paintLock(painter, QRectF(card.width() - card::kTextInset - kLockWidth, 5, kLockWidth, 14), band_colour);
  painter->setFont(card::smallFont());
  painter->setPen(QColor(255, 255, 255, 200));
  const QRectF line(card::kTextInset, 21, card.width() - 2 * card::kTextInset, 15);
  painter->drawText(line, Qt::AlignLeft | Qt::AlignVCenter, subtitle_);
  painter->drawText(line, Qt::AlignRight | Qt::AlignVCenter, badge_);
}

// A padlock in the header's white: a shackle over a body with a keyhole, drawn so that it stays
// sharp at any zoom.
void NodeItem::paintLock(QPainter* painter, const QRectF& where, const QColor& keyhole) const {
  const qreal body_top = where.top() + where.height() * 0.45;
  const QRectF body(where.left(), body_top, where.width(), where.bottom() - body_top);
  const qreal inset = where.width() * 0.22;
  const QRectF shackle(where.left() + inset, where.top(), where.width() - 2 * inset, (body_top - where.top()) * 2);
  painter->save();
  painter->setRenderHint(QPainter::Antialiasing);
  painter->setPen(QPen(Qt::white, 1.8));
  painter->setBrush(Qt::NoBrush);
  painter->drawArc(shackle, 0, 180 * 16);
  painter->drawLine(QPointF(shackle.left(), shackle.center().y()), QPointF(shackle.left(), body_top));
  painter->drawLine(QPointF(shackle.right(), shackle.center().y()), QPointF(shackle.right(), body_top));
  painter->setPen(Qt::NoPen);
  painter->setBrush(Qt::white);
  painter->drawRoundedRect(body, 1.5, 1.5);
  painter->setBrush(keyhole);
  painter->drawEllipse(QPointF(body.center().x(), body.center().y() - 0.5), 1.4, 1.4);
  painter->restore();
}

void NodeItem::paintParams(QPainter* painter) const {
  const Theme& theme = ThemeManager::instance().theme();
  qreal y = paramsTop(portRows(type_, outputs_.size()));
  const qreal width = kNodeWidth - 2 * card::kTextInset;
  for (const ParamLine& line : params_) {
    const QRectF row(card::kTextInset, y, width, kParamLine);
    // Values are short ("128", "true") and matter most: the value first, the name gets the rest.
    const QFont& font = line.changed ? smallBoldFont() : card::smallFont();
    const QFontMetricsF value_metrics(font);
    const QString value = value_metrics.elidedText(line.value, Qt::ElideRight, width * 0.6);
    const QString name = QFontMetricsF(card::smallFont()).elidedText(line.name, Qt::ElideRight,
                                                               width - value_metrics.horizontalAdvance(value) - 6);
    painter->setFont(card::smallFont());
    painter->setPen(theme.nodeSubtext);
    painter->drawText(row, Qt::AlignLeft | Qt::AlignVCenter, name);
    painter->setFont(font);
    painter->setPen(line.changed ? theme.nodeText : theme.nodeSubtext);
    painter->drawText(row, Qt::AlignRight | Qt::AlignVCenter, value);
    y += kParamLine;
  }
}

}  // namespace plexus::widgets
