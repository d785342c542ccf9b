#pragma once
// TileGrid: small pictures in rows that wrap with the width, each magnified by a whole factor to
// about the same size (pixels stay square and sharp) with a caption under it: a convolution's
// channels, its filters, a channel's top examples. A click selects a tile (tileClicked); the
// selected one is framed. Its height follows its width, so it scrolls inside a QScrollArea.
#include <QImage>
#include <QString>
#include <QWidget>
#include <vector>

namespace plexus::widgets {

class TileGrid : public QWidget {
  Q_OBJECT

 public:
  struct Tile {
    QImage image;  // at its own resolution
    QString caption;
    QString toolTip;
  };

  explicit TileGrid(QWidget* parent = nullptr);

  // The tiles and the side their pictures are magnified to, at most (at least their own size).
  void setTiles(std::vector<Tile> tiles, int side = 56);
  const std::vector<Tile>& tiles() const { return tiles_; }
  int count() const { return int(tiles_.size()); }
  void setSelected(int index);  // -1: none
  int selected() const { return selected_; }
  QRect tileRect(int index) const;  // where tile `index` is drawn, in widget coordinates

  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize sizeHint() const override;

 signals:
  void tileClicked(int index);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;  // tool tips

 private:
  QSize cell() const;
  int columns(int width) const;
  int tileAt(const QPoint& pos) const;

  std::vector<Tile> tiles_;
  int side_ = 56;
  int selected_ = -1;
};

}  // namespace plexus::widgets
