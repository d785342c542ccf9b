#include "editor/node_stats_overlay.h"

#include <QFontMetricsF>
#include <QGuiApplication>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>

#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/card_style.h"
#include "editor/node_item.h"

namespace plexus::widgets {
namespace {

// Scene units, like the card's.
constexpr qreal kTuck = 8;        // the strip's top hides under the card's rounded bottom
constexpr qreal kOverlayPad = 5;
constexpr qreal kInset = 10;      // as the card's text
constexpr qreal kSparkHeight = 18;
constexpr qreal kHistogramWidth = 48;  // the latest histogram, right of the sparkline
constexpr qreal kOverlayGap = 6;
constexpr qreal kRow = 13;
constexpr qreal kBadgeRadius = card::kRadius;
constexpr qreal kRim = 3;         // the tinted rim of a node with issues
// As the card's text: below this zoom the strip is drawn plain (with its rim), its figures and
// sparkline unreadable. It is the overview of a big graph, where redrawing them all would cost.
constexpr qreal kDetailLod = 0.4;

const QFont& stripFont() {
  static const QFont f = [] {
    QFont font = QGuiApplication::font();
    font.setPixelSize(10);  // pixels = scene units, as the card's fonts
    return font;
  }();
  return f;
}

// Short: "0.12", "-1.5", "190", and small or large numbers in short scientific form: "3.1e-3", "1.2e4".
QString compact(double v) {
  const double size = std::abs(v);
  if (v == 0 || (size >= 0.01 && size < 10)) return QString::number(v, 'g', 2);
  if (size >= 10 && size < 1e4) return QString::number(std::lround(v));
  int exponent = int(std::floor(std::log10(size)));
  double mantissa = v / std::pow(10.0, exponent);
  if (std::abs(mantissa) >= 9.95) {  // would print as "10.0"
    mantissa /= 10;
    ++exponent;
  }
  return QString::number(mantissa, 'f', 1) + 'e' + QString::number(exponent);
}


QColor issueColour(const Theme& theme, bool severe) { return severe ? theme.error : theme.warning; }

qreal visibleHeight(bool params) { return kOverlayPad + kSparkHeight + 3 + kRow * (params ? 2 : 1) + kOverlayPad - 2; }

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
  const qreal r = kBadgeRadius + 1.5;
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
  painter->drawEllipse(QPointF(0, 0), kBadgeRadius, kBadgeRadius);
  static const QFont font = [] {
    QFont f = QGuiApplication::font();
    f.setPixelSize(12);
    f.setBold(true);
    return f;
  }();
  painter->setFont(font);
  painter->setPen(Qt::white);
  painter->drawText(QRectF(-kBadgeRadius, -kBadgeRadius, 2 * kBadgeRadius, 2 * kBadgeRadius), Qt::AlignCenter, QStringLiteral("!"));
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
  return QRectF(0, card.height(), card.width(), visibleHeight(last_.hasParams));
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
  const bool reshaped = last.hasParams != last_.hasParams || joined.isEmpty() != reasons_.isEmpty();
  const bool issues_changed = joined != reasons_ || severe != severe_;
  if (reshaped) prepareGeometryChange();  // the strip's height, the rim
  last_ = last;
  severe_ = severe;
  reasons_ = joined;
  recent_.clear();
  for (auto it = samples.end() - std::ptrdiff_t(std::min(samples.size(), kRecent)); it != samples.end(); ++it)
    recent_.push_back(it->finite && std::isfinite(it->mean) && std::isfinite(it->std) ? QPointF(it->mean, it->std)
                                                                                     : QPointF(qQNaN(), 0));
  prepared_ = false;  // the texts and paths are made when next painted: most nodes may be off screen
  showIssues();
  // At an overview zoom new numbers change nothing drawn, and zooming in renders afresh anyway.
  if (reshaped || issues_changed || painted_lod_ >= kDetailLod) update();
}

QString NodeStatsOverlay::figures() const {
  if (!last_.finite) return QObject::tr("NaN or Inf in the output");
  return QStringLiteral("μ %1  σ %2  zeros %3").arg(compact(last_.mean), compact(last_.std), percentText(last_.zeroFraction, 0));
}

QString NodeStatsOverlay::paramFigures() const {
  if (!last_.hasParams) return {};
  return QStringLiteral("|g| %1  Δ/w %2").arg(compact(last_.gradNorm), compact(last_.updateRatio));
}

void NodeStatsOverlay::prepare() {
  prepared_ = true;
  const QRectF strip = stripRect();
  const QFontMetricsF metrics(stripFont());
  const qreal width = strip.width() - 2 * kInset;
  lines_ = {metrics.elidedText(figures(), Qt::ElideRight, width), metrics.elidedText(paramFigures(), Qt::ElideRight, width)};
  const QRectF area(kInset, strip.top() + kOverlayPad, width, kSparkHeight);
  buildSparkline(area.adjusted(0, 0, -kHistogramWidth - kOverlayGap, 0));
  buildHistogram(area.adjusted(area.width() - kHistogramWidth, 0, 0, 0));
}

// The mean as a line and mean ± std as a band over the recent samples, equally spaced, scaled to
// their own range; non-finite samples leave a gap.
void NodeStatsOverlay::buildSparkline(const QRectF& area) {
  band_ = QPainterPath();
  line_ = QPainterPath();
  double lo = INFINITY, hi = -INFINITY;
  for (const QPointF& s : recent_)  // x: the mean, y: the std
    if (!std::isnan(s.x())) {
      lo = std::min(lo, s.x() - s.y());
      hi = std::max(hi, s.x() + s.y());
    }
  if (lo > hi) return;  // nothing finite to draw
  if (hi - lo < 1e-12) {  // a constant: a flat line in the middle
    lo -= 1;
    hi += 1;
  }
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
  const size_t n = recent_.size();
  const auto add = [&](qreal x, const QPointF& s) {
    upper << QPointF(x, y(s.x() + s.y()));
    lower << QPointF(x, y(s.x() - s.y()));
    mean << QPointF(x, y(s.x()));
  };
  for (size_t i = 0; i < n; ++i) {
    const QPointF& s = recent_[i];
    if (std::isnan(s.x())) {
      flush();
    } else if (n == 1) {  // a single sample spans the width, so it reads as a level rather than a dot
      add(area.left(), s);
      add(area.right(), s);
    } else {
      add(area.left() + area.width() * qreal(i) / qreal(n - 1), s);
    }
  }
  flush();
}

// One bar per bin, scaled to the fullest one: a spike at zero (dead units) or a collapse shows
// at a glance.
void NodeStatsOverlay::buildHistogram(const QRectF& area) {
  histogram_ = QPainterPath();
  const auto& shares = last_.histogram;
  const float fullest = *std::max_element(shares.begin(), shares.end());
  if (!last_.finite || fullest <= 0) return;
  const qreal bar = area.width() / train::kHistogramBins;
  for (int b = 0; b < train::kHistogramBins; ++b) {
    const qreal h = std::max(area.height() * qreal(shares[size_t(b)] / fullest), qreal(0.5));
    histogram_.addRect(QRectF(area.left() + bar * b, area.bottom() - h, bar * 0.8, h));
  }
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
  painted_lod_ = lod;
  const QRectF drawer = drawerRect();
  if (hasIssues()) {  // behind the card: only a rim around card and strip shows
    QColor rim = issueColour(theme, severe_);
    rim.setAlpha(200);
    painter->setPen(Qt::NoPen);
    painter->setBrush(rim);
    const QRectF all = QRectF(QPointF(0, 0), node()->size()) | drawer;
    painter->drawRoundedRect(all.adjusted(-kRim, -kRim, kRim, kRim), kBadgeRadius + kRim, kBadgeRadius + kRim);
  }
  painter->setPen(QPen(theme.nodeBorder, 1));
  painter->setBrush(theme.dark ? theme.nodeBody.darker(125) : theme.nodeBody.darker(104));
  painter->drawRoundedRect(drawer, kBadgeRadius, kBadgeRadius);
  if (lod < kDetailLod) return;
  if (!prepared_) prepare();

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
  painter->setPen(Qt::NoPen);
  painter->setBrush(colour);
  painter->drawPath(histogram_);

  const QRectF strip = stripRect();
  const QRectF row(kInset, strip.top() + kOverlayPad + kSparkHeight + 2, strip.width() - 2 * kInset, kRow);
  painter->setFont(stripFont());
  painter->setPen(last_.finite ? theme.nodeSubtext : theme.error);
  painter->drawText(row, Qt::AlignLeft | Qt::AlignVCenter, lines_[0]);
  painter->setPen(theme.nodeSubtext);
  painter->drawText(row.translated(0, kRow), Qt::AlignLeft | Qt::AlignVCenter, lines_[1]);
}

}  // namespace plexus::widgets
