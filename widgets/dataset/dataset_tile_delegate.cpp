#include "dataset/dataset_tile_delegate.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>

#include "common/qt_text.h"
#include "common/theme.h"
#include "dataset/dataset_class_colours.h"
#include "dataset/dataset_content.h"

namespace plexus::widgets {
namespace {

constexpr int kTilePad = 6;
constexpr int kPictureBox = 64;  // at most the picture's longer side, in logical pixels
constexpr int kMinTextWidth = 72;

QColor successColour(const Theme& theme) { return theme.dark ? QColor(0x4ADE80) : QColor(0x16A34A); }

int lineHeight(const QFont& font) { return QFontMetrics(font).height(); }

// A tick or a cross in a filled disc, for the picture's corner.
void paintBadge(QPainter* painter, const QPointF& centre, qreal radius, const QColor& fill, bool tick) {
  painter->setPen(Qt::NoPen);
  painter->setBrush(fill);
  painter->drawEllipse(centre, radius, radius);
  QPainterPath mark;
  const qreal r = radius * 0.45;
  if (tick) {
    mark.moveTo(centre + QPointF(-r, 0.05 * r));
    mark.lineTo(centre + QPointF(-0.3 * r, 0.7 * r));
    mark.lineTo(centre + QPointF(r, -0.6 * r));
  } else {
    mark.moveTo(centre + QPointF(-r, -r));
    mark.lineTo(centre + QPointF(r, r));
    mark.moveTo(centre + QPointF(r, -r));
    mark.lineTo(centre + QPointF(-r, r));
  }
  painter->setPen(QPen(Qt::white, std::max(1.5, radius / 3.5), Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(mark);
}

}  // namespace

QSize DatasetTileDelegate::shownPictureSize() const {
  const int longer = std::max({picture_.width(), picture_.height(), 1});
  if (longer <= kPictureBox) return picture_ * std::max(1, kPictureBox / longer);  // whole multiples stay crisp
  return picture_.scaled(kPictureBox, kPictureBox, Qt::KeepAspectRatio);
}

QSize DatasetTileDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex&) const {
  const QSize shown = shownPictureSize();
  const int width = std::max(shown.width(), kMinTextWidth) + 2 * kTilePad;
  const int height = kTilePad + shown.height() + 4 + lineHeight(option.font) + lineHeight(smallerFont(option.font)) + kTilePad;
  return {width, height};
}

QRect DatasetTileDelegate::pictureRect(const QRect& tile) const {
  const QSize shown = shownPictureSize();
  return {tile.left() + (tile.width() - shown.width()) / 2, tile.top() + kTilePad, shown.width(), shown.height()};
}

void DatasetTileDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
  painter->save();
  painter->setRenderHint(QPainter::Antialiasing);
  paintFrame(painter, option);
  const QRect picture = pictureRect(option.rect);
  paintPicture(painter, picture, index);
  paintVerdict(painter, picture, index.data(VerdictRole).toInt());
  paintText(painter, option, picture, index);
  painter->restore();
}

void DatasetTileDelegate::paintFrame(QPainter* painter, const QStyleOptionViewItem& option) const {
  const QPalette& pal = option.palette;
  const bool selected = option.state & QStyle::State_Selected;
  const bool hovered = option.state & QStyle::State_MouseOver;
  const QColor fill = pal.color(hovered ? QPalette::Midlight : QPalette::AlternateBase);
  const QColor border = selected ? pal.color(QPalette::Highlight) : pal.color(QPalette::Midlight);
  painter->setPen(QPen(border, selected ? 2.0 : 1.0));
  painter->setBrush(fill);
  painter->drawRoundedRect(QRectF(option.rect).adjusted(1.5, 1.5, -1.5, -1.5), 6, 6);
}

void DatasetTileDelegate::paintPicture(QPainter* painter, const QRect& target, const QModelIndex& index) const {
  const QImage image = index.data(Qt::DecorationRole).value<QImage>();
  if (image.isNull()) return;
  // Nearest neighbour when scaling up (crisp pixels), smooth when a large image is shrunk.
  painter->setRenderHint(QPainter::SmoothPixmapTransform, target.width() < image.width());
  painter->drawImage(target, image);
}

void DatasetTileDelegate::paintVerdict(QPainter* painter, const QRect& picture, int verdict) const {
  const Theme& theme = ThemeManager::instance().theme();
  const QRectF frame = QRectF(picture).adjusted(-1, -1, 1, 1);
  if (verdict == int(Verdict::Wrong)) {
    painter->setPen(QPen(theme.error, 2.5));
    painter->setBrush(Qt::NoBrush);
    painter->drawRect(frame);
    paintBadge(painter, frame.topRight() + QPointF(-1, 1), 7.5, theme.error, false);
  } else if (verdict == int(Verdict::Right)) {
    paintBadge(painter, frame.topRight() + QPointF(-5, 5), 5.0, successColour(theme), true);
  }
}

void DatasetTileDelegate::paintText(QPainter* painter, const QStyleOptionViewItem& option, const QRect& picture,
                                    const QModelIndex& index) const {
  const QRect label(option.rect.left() + kTilePad, picture.bottom() + 5, option.rect.width() - 2 * kTilePad,
                    lineHeight(option.font));
  paintLabel(painter, option.font, label, index);
  const QFont small = smallerFont(option.font);
  paintDetail(painter, small, QRect(label.left(), label.bottom() + 1, label.width(), lineHeight(small)), index);
}

void DatasetTileDelegate::paintLabel(QPainter* painter, const QFont& font, const QRect& area,
                                     const QModelIndex& index) const {
  const Theme& theme = ThemeManager::instance().theme();
  const QFontMetrics fm(font);
  const int cls = index.data(LabelRole).toInt();
  const int dot = cls >= 0 ? 7 : 0;  // the class colour, as in the histogram
  const int gap = dot ? 4 : 0;
  const QString name = fm.elidedText(index.data(Qt::DisplayRole).toString(), Qt::ElideRight, area.width() - dot - gap);
  const int width = dot + gap + fm.horizontalAdvance(name);
  const int left = area.left() + std::max(0, (area.width() - width) / 2);
  if (dot) {
    painter->setPen(Qt::NoPen);
    painter->setBrush(classColour(cls, theme.dark));
    painter->drawEllipse(QRectF(left, area.center().y() - dot / 2.0 + 1, dot, dot));
  }
  painter->setFont(font);
  painter->setPen(theme.text);
  painter->drawText(QRect(left + dot + gap, area.top(), area.right() - left, area.height()),
                    Qt::AlignLeft | Qt::AlignVCenter, name);
}

// "→ 9 · 87%" once there is a prediction (red when wrong), the sample's index before.
void DatasetTileDelegate::paintDetail(QPainter* painter, const QFont& font, const QRect& area,
                                      const QModelIndex& index) const {
  const Theme& theme = ThemeManager::instance().theme();
  const auto verdict = Verdict(index.data(VerdictRole).toInt());
  QString text = QStringLiteral("#%1").arg(index.data(SampleIndexRole).toLongLong());
  QColor colour = theme.mutedText;
  if (verdict != Verdict::None) {
    text = QStringLiteral("\u2192 %1 \u00b7 %2%")
               .arg(index.data(PredictedNameRole).toString())
               .arg(qRound(100 * index.data(ConfidenceRole).toFloat()));
    colour = verdict == Verdict::Wrong ? theme.error : theme.mutedText;  // the tick already says right
  }
  painter->setFont(font);
  painter->setPen(colour);
  painter->drawText(area, Qt::AlignHCenter | Qt::AlignVCenter,
                    QFontMetrics(font).elidedText(text, Qt::ElideRight, area.width()));
}

}  // namespace plexus::widgets
