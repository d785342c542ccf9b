#pragma once
// TableForm: Try It's input for a model of a CSV file: one field per feature column the model
// was trained with (its data::TablePreparation), in the model's order. A categorical column gets
// an editable combo box of the training split's categories (an unseen value can be typed: the
// model has an "(other)" input for it), a number or a date a line edit; an empty field is a
// missing cell, filled as training filled it (the placeholder says with what). The typed row is
// prepared exactly as training prepared its rows (data::table_of_rows, TablePreparation::apply).
#include <QStringList>
#include <QWidget>

#include <memory>
#include <vector>

#include "data/table_prep.h"
#include "tensor/tensor.h"

class QFormLayout;

namespace plexus::widgets {

class TableForm : public QWidget {
  Q_OBJECT

 public:
  explicit TableForm(QWidget* parent = nullptr);

  // The model's preparation (null: no model yet, no fields). The fields are built again only for
  // another preparation, so typing survives new weights of the same run.
  void setPreparation(std::shared_ptr<const data::TablePreparation> preparation);
  const data::TablePreparation* preparation() const { return preparation_.get(); }

  // The typed row as the model's input [width]; DataError naming the field for a value the
  // column cannot take (text in a numeric field, an empty field of a column that refuses missing
  // cells).
  Tensor input() const;
  QStringList values() const;  // as typed, one per column
  QWidget* field(const QString& column) const;  // the column's editor; null for an unknown name

 signals:
  void changed();  // a field was edited

 private:
  QWidget* makeField(const data::PreparedColumn& column);

  std::shared_ptr<const data::TablePreparation> preparation_;
  QFormLayout* form_;
  std::vector<QWidget*> fields_;  // a QComboBox or a QLineEdit per prepared column
};

}  // namespace plexus::widgets
