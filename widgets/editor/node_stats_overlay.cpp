#include "editor/node_stats_overlay.h"

#include <QFontMetricsF>
#include <QGuiApplication>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>

#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/node_item.h"

namespace plexus::widgets {
namespace {

// Scene units, like the card's.
constexpr qreal kTuck = 8;        // the strip's top hides under the card's rounded bottom
constexpr qreal kPad = 5;
constexpr qreal kInset = 10;      // as the card's text
constexpr qreal kSparkHeight = 18;
constexpr qreal kRow = 13;
constexpr qreal kRadius = 7;      // as the card's corners
constexpr qreal kRim = 3;         // the tinted rim of a node with issues
// As the card: below this zoom text is unreadable; below the next, so is the sparkline.
constexpr qreal kTextLod = 0.4, kShapeLod = 0.2;

const QFont& stripFont() {
  static const QFont f = [] {
    QFont font = QGuiApplication::font();
    font.setPixelSize(10);  // pixels = scene units, as the card's fonts
    return font;
  }();
  return f;
}

// Two significant digits; small and large numbers in short scientific form: "0.12", "3.1e-3", "1.2e4".
QString compact(double v) {
  if (v == 0 || (std::abs(v) >= 0.01 && std::abs(v) < 1e4)) return QString::number(v, 'g', 2);
  QString s = QString::number(v, 'e', 1);  // "3.1e-03"
  return s.replace(QLatin1String("e-0"), QLatin1String("e-")).replace(QLatin1String("e+0"), QLatin1String("e")).replace(QLatin1String("e+"), QLatin1String("e"));
}

QString percent(double share) { return QString::number(std::lround(100 * share)) + '%'; }

QColor issueColour(const Theme& theme, bool severe) { return severe ? theme.error : theme.warning; }

qreal visibleHeight(bool params) { return kPad + kSparkHeight + 3 + kRow * (params ? 2 : 1) + kPad - 2; }

}  // namespace

// ---- NodeHealthBadge -----------------------------------------------------------------------

NodeHealthBadge::NodeHealthBadge(NodeItem* node) : QGraphicsItem(node) {
  setFlag(ItemIgnoresTransformations);  // the same size on screen at every zoom
  setPos(node->size().width() - 3, 3);  // on the card's corner
  setCacheMode(DeviceCoordinateCache);
  setAcceptedMouseButtons(Qt::NoButton);  // presses go to the card below
  hide();
}

QRectF NodeHealthBadge::boundingRect() const {
  const qreal r = kRadius + 1.5;
  return QRectF(-r, -r, 2 * r, 2 * r);
}

void NodeHealthBadge::setSevere(bool severe) {
  if (severe == severe_) return;
  severe_ = severe;
  update();
}

void NodeHealthBadge::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
  const Theme& theme = ThemeManager::instance().theme();
  painter->setRenderHint(QPainter::Antialiasing);
  painter->setPen(QPen(theme.canvas, 1.5));  // sets it off from the header under it
  painter->setBrush(issueColour(theme, severe_));
  painter->drawEllipse(QPointF(0, 0), kRadius, kRadius);
  static const QFont font = [] {
    QFont f = QGuiApplication::font();
    f.setPixelSize(12);
    f.setBold(true);
    return f;
  }();
  painter->setFont(font);
  painter->setPen(Qt::white);
  painter->drawText(QRectF(-kRadius, -kRadius, 2 * kRadius, 2 * kRadius), Qt::AlignCenter, QStringLiteral("!"));
}

// ---- NodeStatsOverlay ----------------------------------------------------------------------

NodeStatsOverlay::NodeStatsOverlay(NodeItem* node) : QGraphicsItem(node), badge_(new NodeHealthBadge(node)) {
  setFlag(ItemStacksBehindParent);
  setCacheMode(DeviceCoordinateCache);
  setAcceptedMouseButtons(Qt::NoButton);
}

NodeItem* NodeStatsOverlay::node() const { return static_cast<NodeItem*>(parentItem()); }

QRectF NodeStatsOverlay::stripRect() const {
  const QSizeF card = node()->size();
  return QRectF(0, card.height(), card.width(), visibleHeight(params_));
}

QRectF NodeStatsOverlay::drawerRect() const { return stripRect().adjusted(0, -kTuck, 0, 0); }

QRectF NodeStatsOverlay::boundingRect() const {
  if (!hasIssues()) return drawerRect();
  const QRectF all = QRectF(QPointF(0, 0), node()->size()) | drawerRect();
  return all.adjusted(-kRim, -kRim, kRim, kRim);
}

void NodeStatsOverlay::setStatistics(const std::vector<NodeSample>& samples,
                                     const std::vector<train::HealthIssue>& issues) {
  QStringList reasons;
  bool severe = false;
  for (const train::HealthIssue& i : issues) {
    reasons << qstr(i.reason);
    severe = severe || isSevere(i.kind);
  }
  const QString joined = reasons.join('\n');
  if (samples.back().step == shown_step_ && samples.size() == shown_count_ && joined == reasons_) return;
  shown_step_ = samples.back().step;
  shown_count_ = samples.size();

  const NodeSample& last = samples.back();
  prepareGeometryChange();  // the strip's height and the rim may change
  params_ = last.hasParams;
  finite_ = last.finite;
  severe_ = severe;
  reasons_ = joined;
  if (finite_)
    figures_ = QStringLiteral("μ %1  σ %2  zeros %3").arg(compact(last.mean), compact(last.std), percent(last.zeroFraction));
  else
    figures_ = QObject::tr("NaN or Inf in the output");
  param_figures_ = params_ ? QStringLiteral("|g| %1  Δ/w %2").arg(compact(last.gradNorm), compact(last.updateRatio))
                           : QString();
  buildSparkline(samples);
  showIssues();
  update();
}

// The mean as a line and mean ± std as a band over the last kRecent samples, equally spaced,
// scaled to their own range; non-finite samples leave a gap.
void NodeStatsOverlay::buildSparkline(const std::vector<NodeSample>& samples) {
  const size_t n = std::min(samples.size(), kRecent);
  const auto first = samples.end() - std::ptrdiff_t(n);
  double lo = INFINITY, hi = -INFINITY;
  for (auto it = first; it != samples.end(); ++it)
    if (it->finite && std::isfinite(it->mean) && std::isfinite(it->std)) {
      lo = std::min(lo, it->mean - it->std);
      hi = std::max(hi, it->mean + it->std);
    }
  band_ = QPainterPath();
  line_ = QPainterPath();
  if (lo > hi) return;  // nothing finite to draw
  if (hi - lo < 1e-12) {  // a constant: a flat line in the middle
    lo -= 1;
    hi += 1;
  }
  const QRectF area(kInset, node()->size().height() + kPad, node()->size().width() - 2 * kInset, kSparkHeight);
  const auto y = [&](double v) { return area.bottom() - area.height() * (v - lo) / (hi - lo); };
  // One run of consecutive finite samples: its band polygon and its line.
  QPolygonF upper, lower, mean;
  const auto flush = [&] {
    if (mean.isEmpty()) return;
    std::reverse(lower.begin(), lower.end());
    band_.addPolygon(upper + lower);
    band_.closeSubpath();
    line_.addPolygon(mean);
    upper.clear();
    lower.clear();
    mean.clear();
  };
  for (size_t i = 0; i < n; ++i) {
    const NodeSample& s = *(first + std::ptrdiff_t(i));
    if (!s.finite || !std::isfinite(s.mean) || !std::isfinite(s.std)) {
      flush();
      continue;
    }
    // A single sample spans the width, so it reads as a level rather than a dot.
    const std::vector<qreal> xs = n == 1 ? std::vector<qreal>{area.left(), area.right()}
                                         : std::vector<qreal>{area.left() + area.width() * qreal(i) / qreal(n - 1)};
    for (const qreal x : xs) {
      upper << QPointF(x, y(s.mean + s.std));
      lower << QPointF(x, y(s.mean - s.std));
      mean << QPointF(x, y(s.mean));
    }
  }
  flush();
}

void NodeStatsOverlay::showIssues() {
  const bool shown = isVisible() && hasIssues();
  badge_->setVisible(shown);
  badge_->setSevere(severe_);
  badge_->setToolTip(reasons_);
  node()->setToolTipNote(shown ? QObject::tr("Training: %1").arg(QString(reasons_).replace('\n', QLatin1String("\nTraining: ")))
                               : QString());
}

QVariant NodeStatsOverlay::itemChange(GraphicsItemChange change, const QVariant& value) {
  if (change == ItemVisibleHasChanged) showIssues();
  return QGraphicsItem::itemChange(change, value);
}

void NodeStatsOverlay::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const Theme& theme = ThemeManager::instance().theme();
  const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
  const QRectF drawer = drawerRect();
  if (hasIssues()) {  // behind the card: only a rim around card and strip shows
    QColor rim = issueColour(theme, severe_);
    rim.setAlpha(200);
    painter->setPen(Qt::NoPen);
    painter->setBrush(rim);
    const QRectF all = QRectF(QPointF(0, 0), node()->size()) | drawer;
    painter->drawRoundedRect(all.adjusted(-kRim, -kRim, kRim, kRim), kRadius + kRim, kRadius + kRim);
  }
  painter->setPen(QPen(theme.nodeBorder, 1));
  painter->setBrush(theme.dark ? theme.nodeBody.darker(125) : theme.nodeBody.darker(104));
  painter->drawRoundedRect(drawer, kRadius, kRadius);
  if (lod < kShapeLod) return;

  const graph::LayerType* type = node()->layerType();
  QColor colour = theme.category(type ? qstr(type->category) : QString());
  if (theme.dark) colour = colour.lighter(170);  // the dark theme's header colours are deep
  QColor band = colour;
  band.setAlpha(60);
  painter->setRenderHint(QPainter::Antialiasing);
  painter->setPen(Qt::NoPen);
  painter->setBrush(band);
  painter->drawPath(band_);
  painter->setPen(QPen(colour, 1.4));
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(line_);
  if (lod < kTextLod) return;

  const QRectF strip = stripRect();
  const qreal width = strip.width() - 2 * kInset;
  const QFontMetricsF metrics(stripFont());
  painter->setFont(stripFont());
  painter->setPen(finite_ ? theme.nodeSubtext : theme.error);
  QRectF row(kInset, strip.top() + kPad + kSparkHeight + 2, width, kRow);
  painter->drawText(row, Qt::AlignLeft | Qt::AlignVCenter, metrics.elidedText(figures_, Qt::ElideRight, width));
  if (params_) {
    painter->setPen(theme.nodeSubtext);
    painter->drawText(row.translated(0, kRow), Qt::AlignLeft | Qt::AlignVCenter,
                      metrics.elidedText(param_figures_, Qt::ElideRight, width));
  }
}

}  // namespace plexus::widgets
