#pragma once
// DatasetProfileDelegate: a column's profile drawn in its cell of the column table, from
// DatasetColumnsModel's ProfileCountsRole: a histogram of numbers and dates (touching bins), or
// the most frequent categories as separate bars in the class colours, most frequent first, each as tall as its count
// relative to the largest. Its tooltip (the model's) says the figures.
#include <QStyledItemDelegate>

namespace plexus::widgets {

class DatasetProfileDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
};

}  // namespace plexus::widgets
