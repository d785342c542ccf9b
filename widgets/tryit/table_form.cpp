#include "tryit/table_form.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLineEdit>

#include "common/qt_text.h"
#include "data/csv_format.h"
#include "data/table.h"

namespace plexus::widgets {

namespace {

// What an empty field becomes, as the placeholder says it.
QString missingText(const data::PreparedColumn& c) {
  using data::MissingPolicy;
  if (c.missing == MissingPolicy::Drop || c.missing == MissingPolicy::Error)
    return QObject::tr("required");
  if (c.type == data::ColumnType::Categorical) return QObject::tr("empty: %1").arg(qstr(c.fill_category));
  if (c.type == data::ColumnType::Numeric && !c.fill.empty())
    return QObject::tr("empty: %1").arg(c.fill.front(), 0, 'g', 6);
  return QObject::tr("empty: filled as in training");
}

QString typedText(const QWidget* field) {
  if (const auto* combo = qobject_cast<const QComboBox*>(field)) return combo->currentText();
  return static_cast<const QLineEdit*>(field)->text();
}

}  // namespace

TableForm::TableForm(QWidget* parent) : QWidget(parent), form_(new QFormLayout(this)) {
  setObjectName(QStringLiteral("tryItTable"));
  form_->setContentsMargins(0, 0, 0, 0);
  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
}

void TableForm::setPreparation(std::shared_ptr<const data::TablePreparation> preparation) {
  if (preparation == preparation_ || (preparation && preparation_ && *preparation == *preparation_)) return;
  preparation_ = std::move(preparation);
  while (form_->rowCount() > 0) form_->removeRow(0);
  fields_.clear();
  if (!preparation_) return;
  for (const data::PreparedColumn& column : preparation_->columns) {
    QWidget* field = makeField(column);
    field->setObjectName(qstr(column.name));
    form_->addRow(qstr(column.name), field);
    fields_.push_back(field);
  }
}

QWidget* TableForm::makeField(const data::PreparedColumn& column) {
  if (column.type == data::ColumnType::Categorical) {
    auto* combo = new QComboBox(this);
    combo->setEditable(true);
    combo->setInsertPolicy(QComboBox::NoInsert);
    for (const std::string& category : column.categories) combo->addItem(qstr(category));
    combo->setCurrentIndex(-1);
    combo->lineEdit()->setPlaceholderText(missingText(column));
    combo->setToolTip(tr("A category of %1: one of training's, or another (the model's \"(other)\")")
                          .arg(qstr(column.name)));
    connect(combo, &QComboBox::currentTextChanged, this, &TableForm::changed);
    return combo;
  }
  auto* edit = new QLineEdit(this);
  edit->setClearButtonEnabled(true);
  edit->setPlaceholderText(column.type == data::ColumnType::Date
                               ? tr("YYYY-MM-DD (%1)").arg(missingText(column))
                               : missingText(column));
  connect(edit, &QLineEdit::textChanged, this, &TableForm::changed);
  return edit;
}

QStringList TableForm::values() const {
  QStringList out;
  for (const QWidget* field : fields_) out << typedText(field);
  return out;
}

QWidget* TableForm::field(const QString& column) const {
  for (QWidget* f : fields_)
    if (f->objectName() == column) return f;
  return nullptr;
}

Tensor TableForm::input() const {
  const data::TablePreparation& p = *preparation_;
  std::vector<std::string> names, row;
  for (size_t i = 0; i < p.columns.size(); ++i) {
    names.push_back(p.columns[i].name);
    row.push_back(typedText(fields_[i]).trimmed().toStdString());
  }
  const data::Table table =
      data::table_of_rows(names, {row}, data::csv_format::MissingTokens::parse(p.missing_values), "the form");
  const std::vector<int64_t> columns = p.columns_in(table);
  Tensor x = zeros({p.width()});  // apply names the field of a value it cannot take
  p.apply(table, 0, columns, x.data());
  return x;
}

}  // namespace plexus::widgets
