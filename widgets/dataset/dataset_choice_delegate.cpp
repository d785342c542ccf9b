#include "dataset/dataset_choice_delegate.h"

#include <QComboBox>

#include "dataset/dataset_columns_model.h"

namespace plexus::widgets {

QWidget* DatasetChoiceDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                                             const QModelIndex& index) const {
  const QStringList choices = index.data(DatasetColumnsModel::ChoicesRole).toStringList();
  if (choices.isEmpty()) return QStyledItemDelegate::createEditor(parent, option, index);
  auto* combo = new QComboBox(parent);
  combo->addItems(choices);
  // A pick is the edit: committed at once, as the forms' combo boxes do.
  connect(combo, &QComboBox::activated, this, [this, combo] {
    auto* self = const_cast<DatasetChoiceDelegate*>(this);  // the signals are the view's to hear
    emit self->commitData(combo);
    emit self->closeEditor(combo);
  });
  return combo;
}

void DatasetChoiceDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
  if (auto* combo = qobject_cast<QComboBox*>(editor))
    combo->setCurrentIndex(combo->findText(index.data(Qt::EditRole).toString()));
  else
    QStyledItemDelegate::setEditorData(editor, index);
}

void DatasetChoiceDelegate::setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const {
  if (auto* combo = qobject_cast<QComboBox*>(editor))
    model->setData(index, combo->currentText());
  else
    QStyledItemDelegate::setModelData(editor, model, index);
}

}  // namespace plexus::widgets
