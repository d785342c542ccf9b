#pragma once
// DatasetChoiceDelegate: edits a cell of the column table (DatasetColumnsModel) with what its
// ChoicesRole offers: a combo box of the choices, which commits as soon as one is picked, or,
// where there are none (a fill constant), a line edit.
#include <QStyledItemDelegate>

namespace plexus::widgets {

class DatasetChoiceDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  void setEditorData(QWidget* editor, const QModelIndex& index) const override;
  void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override;
};

}  // namespace plexus::widgets
