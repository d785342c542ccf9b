#include "dataset/dataset_profile_delegate.h"

#include <QPainter>

#include <algorithm>

#include "common/theme.h"
#include "dataset/dataset_class_colours.h"
#include "dataset/dataset_columns_model.h"

namespace plexus::widgets {

void DatasetProfileDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                                   const QModelIndex& index) const {
  QStyledItemDelegate::paint(painter, option, index);  // the selection's background
  const QVariantList counts = index.data(DatasetColumnsModel::ProfileCountsRole).toList();
  if (counts.isEmpty()) return;
  qlonglong largest = 0;
  for (const QVariant& c : counts) largest = std::max(largest, c.toLongLong());
  if (largest <= 0) return;
  const bool categories = index.data(DatasetColumnsModel::ProfileCategoriesRole).toBool();
  const Theme& theme = ThemeManager::instance().theme();
  const QRectF area = QRectF(option.rect).adjusted(4, 3, -4, -3);
  const double step = area.width() / double(counts.size());
  const double gap = categories ? std::min(2.0, step / 4) : 0.0;
  painter->save();
  painter->setPen(Qt::NoPen);
  // On a selected row's highlight (the theme's selection colour) the bars take its text colour.
  const bool selected = option.state & QStyle::State_Selected;
  painter->setBrush(selected ? option.palette.highlightedText().color() : theme.selection);
  for (int i = 0; i < counts.size(); ++i) {
    if (categories && !selected) painter->setBrush(classColour(i, theme.dark));  // as the class histogram's
    const double height = area.height() * double(counts[i].toLongLong()) / double(largest);
    painter->drawRect(QRectF(area.left() + i * step, area.bottom() - height, step - gap, height));
  }
  painter->setPen(theme.mutedText);
  painter->drawLine(area.bottomLeft(), area.bottomRight());
  painter->restore();
}

QSize DatasetProfileDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
  const QSize text = QStyledItemDelegate::sizeHint(option, index);
  return {120, std::max(text.height(), 26)};
}

}  // namespace plexus::widgets
