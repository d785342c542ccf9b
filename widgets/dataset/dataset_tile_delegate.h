#pragma once
// How the gallery draws one sample: its picture (small ones enlarged by whole multiples, nearest
// neighbour, so pixels stay square; large ones shrunk smoothly; the aspect ratio kept), the label
// with its class colour, and once there are predictions the predicted class and confidence: a
// red frame and cross on a mistake, a small green tick on a correct one. Reads the item roles of
// DatasetGalleryModel.
#include <QStyledItemDelegate>

namespace plexus::widgets {

class DatasetTileDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  // The dataset's image size (every tile is the same size).
  void setPictureSize(QSize size) { picture_ = size; }
  QSize pictureSize() const { return picture_; }
  // The size the picture is drawn at, in logical pixels, and where in a tile.
  QSize shownPictureSize() const;
  QRect pictureRect(const QRect& tile) const;

  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

 private:
  void paintFrame(QPainter* painter, const QStyleOptionViewItem& option) const;
  void paintPicture(QPainter* painter, const QRect& target, const QModelIndex& index) const;
  void paintVerdict(QPainter* painter, const QRect& picture, int verdict) const;
  void paintText(QPainter* painter, const QStyleOptionViewItem& option, const QRect& picture,
                 const QModelIndex& index) const;
  void paintLabel(QPainter* painter, const QFont& font, const QRect& area, const QModelIndex& index) const;
  void paintDetail(QPainter* painter, const QFont& font, const QRect& area, const QModelIndex& index) const;

  QSize picture_{28, 28};
};

}  // namespace plexus::widgets
