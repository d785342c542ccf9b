#include "editor/diff_marks.h"

#include <QFontMetricsF>
#include <QGuiApplication>
#include <QPainter>
#include <QPen>

#include <algorithm>

#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/card_style.h"
#include "editor/edge_item.h"
#include "editor/node_item.h"

namespace plexus::widgets {
namespace {

// Scene units, as the cards'.
constexpr qreal kRing = 5;          // the outline's distance from the card
constexpr qreal kRingRadius = card::kRadius + kRing;
constexpr qreal kBadgeHeight = 16;
constexpr qreal kNoteGap = 10;      // between the card and its note
constexpr qreal kNoteLine = 17;
constexpr qreal kNotePad = 6;
constexpr qreal kWireWidth = 3;

QFont pixelFont(int pixels, bool bold) {
  QFont f = QGuiApplication::font();
  f.setPixelSize(pixels);
  f.setBold(bold);
  return f;
}
const QFont& badgeFont() { static const QFont f = pixelFont(10, true); return f; }
const QFont& noteFont() { static const QFont f = pixelFont(11, false); return f; }
const QFont& noteBoldFont() { static const QFont f = pixelFont(11, true); return f; }

QRectF badgeRect(DiffKind kind, QSizeF card) {
  const qreal width = QFontMetricsF(badgeFont()).horizontalAdvance(diffKindName(kind)) + 14;
  return QRectF(card.width() - width - 8, -kRing - kBadgeHeight / 2, width, kBadgeHeight);
}

}  // namespace

QColor diffColour(DiffKind kind, const Theme& theme) {
  switch (kind) {
    case DiffKind::Added: return theme.dark ? QColor(0x4ADE80) : QColor(0x16A34A);
    case DiffKind::Removed: return theme.dark ? QColor(0xF87171) : QColor(0xDC2626);
    case DiffKind::Changed: break;
  }
  return theme.dark ? QColor(0xFBBF24) : QColor(0xD97706);
}

QString diffKindName(DiffKind kind) {
  switch (kind) {
    case DiffKind::Added: return QObject::tr("added");
    case DiffKind::Removed: return QObject::tr("removed");
    case DiffKind::Changed: break;
  }
  return QObject::tr("changed");
}

QString DiffNoteLine::text() const { return QStringLiteral("%1 %2 → %3").arg(name, before, after); }

std::vector<DiffNoteLine> diffNote(const graph::NodeChange& c) {
  std::vector<DiffNoteLine> lines;
  if (c.retyped()) lines.push_back({QObject::tr("type"), qstr(c.type_before), qstr(c.type_after)});
  if (c.renamed())
    lines.push_back({QObject::tr("name"), qstr(c.name_before.empty() ? c.id : c.name_before),
                     qstr(c.name_after.empty() ? c.id : c.name_after)});
  if (!c.retyped())
    for (const graph::ParamChange& p : c.params) lines.push_back({qstr(p.name), qstr(p.before), qstr(p.after)});
  for (const graph::ParamChange& p : c.settings) lines.push_back({qstr(p.name), qstr(p.before), qstr(p.after)});
  return lines;
}

// ---- NodeDiffMark ---------------------------------------------------------------------------

NodeDiffMark::NodeDiffMark(const NodeItem* node, DiffKind kind, std::vector<DiffNoteLine> note)
    : kind_(kind), card_(node->size()), note_(std::move(note)) {
  setPos(node->pos());
  setZValue(node->zValue() + 0.5);  // over its card, under a card raised above it
  QStringList tip{QObject::tr("%1 since run A").arg(diffKindName(kind))};
  for (const DiffNoteLine& line : note_) tip << line.text();
  setToolTip(tip.join('\n'));
}

QColor NodeDiffMark::colour() const { return diffColour(kind_, ThemeManager::instance().theme()); }

QRectF NodeDiffMark::noteRect() const {
  if (note_.empty()) return {};
  return QRectF(0, card_.height() + kNoteGap, card_.width(), 2 * kNotePad + kNoteLine * qreal(note_.size()));
}

QRectF NodeDiffMark::boundingRect() const {
  const QRectF ring = QRectF(QPointF(0, 0), card_).adjusted(-kRing - 2, -kRing - kBadgeHeight, kRing + 2, kRing + 2);
  return ring | noteRect().adjusted(-1, -1, 1, 1);
}

void NodeDiffMark::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
  const Theme& theme = ThemeManager::instance().theme();
  const QColor c = colour();
  const QRectF card(QPointF(0, 0), card_);

  // A light wash over the card, the outline around it (dashed: no longer there).
  QColor wash = c;
  wash.setAlpha(kind_ == DiffKind::Removed ? 0 : 28);
  QPen ring(c, 2.5);
  if (kind_ == DiffKind::Removed) ring.setStyle(Qt::DashLine);
  painter->setPen(Qt::NoPen);
  painter->setBrush(wash);
  painter->drawRoundedRect(card, 7, 7);
  painter->setPen(ring);
  painter->setBrush(Qt::NoBrush);
  painter->drawRoundedRect(card.adjusted(-kRing, -kRing, kRing, kRing), kRingRadius, kRingRadius);

  // The badge, on the outline's top edge.
  const QRectF badge = badgeRect(kind_, card_);
  painter->setPen(Qt::NoPen);
  painter->setBrush(c);
  painter->drawRoundedRect(badge, kBadgeHeight / 2, kBadgeHeight / 2);
  painter->setFont(badgeFont());
  painter->setPen(theme.dark ? QColor(0x111318) : QColor(Qt::white));
  painter->drawText(badge, Qt::AlignCenter, diffKindName(kind_));

  if (note_.empty()) return;
  // The note: a card of its own, an accent bar on the left, "name  before → after" per line.
  const QRectF box = noteRect();
  painter->setPen(QPen(c, 1.2));
  painter->setBrush(theme.nodeBody);
  painter->drawRoundedRect(box, 5, 5);
  painter->setPen(Qt::NoPen);
  painter->setBrush(c);
  painter->drawRoundedRect(QRectF(box.left(), box.top(), 4, box.height()), 2, 2);
  qreal y = box.top() + kNotePad;
  const qreal left = box.left() + 10, width = box.width() - 16;
  for (const DiffNoteLine& line : note_) {
    const QRectF row(left, y, width, kNoteLine);
    const QString change = line.before + QStringLiteral(" → ") + line.after;
    const QFontMetricsF bold(noteBoldFont());
    const QString value = bold.elidedText(change, Qt::ElideMiddle, width * 0.7);
    const QString name =
        QFontMetricsF(noteFont()).elidedText(line.name, Qt::ElideRight, width - bold.horizontalAdvance(value) - 6);
    painter->setFont(noteFont());
    painter->setPen(theme.nodeSubtext);
    painter->drawText(row, Qt::AlignLeft | Qt::AlignVCenter, name);
    painter->setFont(noteBoldFont());
    painter->setPen(theme.nodeText);
    painter->drawText(row, Qt::AlignRight | Qt::AlignVCenter, value);
    y += kNoteLine;
  }
}

// ---- WireDiffMark ---------------------------------------------------------------------------

WireDiffMark::WireDiffMark(const EdgeItem* wire, DiffKind kind)
    : QGraphicsPathItem(wire->path()), kind_(kind), edge_(wire->edge()) {
  setZValue(wire->zValue() + 0.5);  // over its wire, under the cards
  setToolTip(QObject::tr("Wire %1.%2 → %3.%4 %5 since run A")
                 .arg(qstr(edge_.from.node), qstr(edge_.from.port), qstr(edge_.to.node), qstr(edge_.to.port),
                      diffKindName(kind)));
  refreshTheme();
}

void WireDiffMark::refreshTheme() {
  QPen pen(diffColour(kind_, ThemeManager::instance().theme()), kWireWidth);
  pen.setCapStyle(Qt::RoundCap);
  if (kind_ == DiffKind::Removed) pen.setStyle(Qt::DashLine);
  setPen(pen);
}

}  // namespace plexus::widgets
