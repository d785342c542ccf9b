#include "featuremaps/tile_grid.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace plexus::widgets {
namespace {

constexpr int kGap = 6;

}  // namespace

TileGrid::TileGrid(QWidget* parent) : QWidget(parent) {
  QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
}

void TileGrid::setTiles(std::vector<Tile> tiles, int side) {
  tiles_ = std::move(tiles);
  side_ = side;
  selected_ = -1;
  updateGeometry();
  setMinimumHeight(heightForWidth(width()));
  update();
}

void TileGrid::setSelected(int index) {
  selected_ = index >= 0 && index < count() ? index : -1;
  update();
}

// The largest picture magnified by the same whole factor as every other: tiles line up.
QSize TileGrid::cell() const {
  int w = 1, h = 1;
  for (const Tile& t : tiles_) {
    w = std::max(w, t.image.width());
    h = std::max(h, t.image.height());
  }
  const int factor = std::max(1, side_ / std::max(w, h));
  return {w * factor, h * factor + fontMetrics().height() + 2};
}

int TileGrid::columns(int width) const { return std::max(1, (width - kGap) / (cell().width() + kGap)); }

int TileGrid::heightForWidth(int width) const {
  if (tiles_.empty()) return 0;
  const int rows = (count() + columns(width) - 1) / columns(width);
  return kGap + rows * (cell().height() + kGap);
}

QSize TileGrid::sizeHint() const {
  const int w = kGap + std::min(count(), 4) * (cell().width() + kGap);
  return {w, heightForWidth(w)};
}

QRect TileGrid::tileRect(int index) const {
  const QSize c = cell();
  const int n = columns(width());
  return {kGap + (index % n) * (c.width() + kGap), kGap + (index / n) * (c.height() + kGap), c.width(), c.height()};
}

int TileGrid::tileAt(const QPoint& pos) const {
  for (int i = 0; i < count(); ++i)
    if (tileRect(i).contains(pos)) return i;
  return -1;
}

void TileGrid::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const int caption = fontMetrics().height() + 2;
  for (int i = 0; i < count(); ++i) {
    const QRect r = tileRect(i);
    const QRect picture = r.adjusted(0, 0, 0, -caption);
    const QImage& image = tiles_[size_t(i)].image;
    // Centred at the common factor: a smaller picture (a text's tile) keeps its proportions.
    const int factor = std::max(
        1, std::min(picture.width() / std::max(1, image.width()), picture.height() / std::max(1, image.height())));
    const QSize size = image.size() * factor;
    const QRect target(picture.center().x() - size.width() / 2 + 1, picture.top(), size.width(), size.height());
    p.drawImage(target, image);
    p.setPen(palette().color(i == selected_ ? QPalette::Highlight : QPalette::Mid));
    p.drawRect(target.adjusted(-1, -1, 0, 0));
    if (i == selected_) p.drawRect(target.adjusted(-2, -2, 1, 1));
    p.setPen(palette().color(i == selected_ ? QPalette::Highlight : QPalette::WindowText));
    p.drawText(QRect(r.left() - kGap / 2, r.bottom() - caption + 1, r.width() + kGap, caption),
               Qt::AlignHCenter | Qt::AlignTop, tiles_[size_t(i)].caption);
  }
}

void TileGrid::mousePressEvent(QMouseEvent* event) {
  const int i = tileAt(event->position().toPoint());
  if (i < 0 || event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  setSelected(i);
  emit tileClicked(i);
}

void TileGrid::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // In a resizable scroll area the height must follow the width by hand.
  setMinimumHeight(heightForWidth(width()));
}

bool TileGrid::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int i = tileAt(help->pos());
    if (i >= 0 && !tiles_[size_t(i)].toolTip.isEmpty())
      QToolTip::showText(help->globalPos(), tiles_[size_t(i)].toolTip, this, tileRect(i));
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

}  // namespace plexus::widgets
