#include "dataset/dataset_columns_model.h"

#include <algorithm>
#include <exception>

#include "common/qt_text.h"
#include "common/theme.h"
#include "graph/dataset_params.h"

namespace plexus::widgets {

namespace {

const QStringList& roleChoices() {
  static const QStringList roles{QStringLiteral("target"), QStringLiteral("feature"), QStringLiteral("ignored")};
  return roles;
}

const graph::ColumnSettingRow& settingRow(int column) {
  return graph::column_settings().at(size_t(column - DatasetColumnsModel::FirstSetting));
}

// A setting's tooltip: its label, what it does and its key in the project file.
QString settingToolTip(const graph::ParamSpec& spec) {
  return QObject::tr("<qt><b>%1</b><br>%2<br>File key: <code>%3</code></qt>")
      .arg(qstr(spec.label).toHtmlEscaped(), qstr(spec.doc).toHtmlEscaped(), qstr(spec.name));
}

// A profile in words, for its cell's tooltip: the range and mean of numbers, the counts of the
// most frequent values.
QString profileText(const data::ColumnProfile& p) {
  if (p.present == 0) return QObject::tr("Every cell is missing.");
  if (p.type == data::ColumnType::Numeric)
    return QObject::tr("From %1 to %2, mean %3").arg(p.min, 0, 'g', 5).arg(p.max, 0, 'g', 5).arg(p.mean, 0, 'g', 5);
  if (p.type == data::ColumnType::Date)
    return QObject::tr("Dates over %1 days").arg(p.max - p.min, 0, 'f', 0);
  QStringList lines;
  for (const auto& [value, count] : p.top) lines << QObject::tr("%1: %2").arg(qstr(value)).arg(count);
  if (p.distinct > int64_t(p.top.size())) lines << QObject::tr("… %1 values in all").arg(p.distinct);
  return lines.join(QLatin1Char('\n'));
}

}  // namespace

DatasetColumnsModel::DatasetColumnsModel(QObject* parent) : QAbstractTableModel(parent) {}

int DatasetColumnsModel::settingColumn(const std::string& key) {
  const auto& rows = graph::column_settings();
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].spec.name == key) return FirstSetting + int(i);
  return -1;
}

void DatasetColumnsModel::setTable(std::shared_ptr<const data::Table> table) {
  beginResetModel();
  table_ = std::move(table);
  detected_.clear();
  profiles_.clear();
  profiled_types_.clear();
  if (table_) {
    for (int64_t c = 0; c < table_->columns(); ++c) detected_.push_back(data::detect_column_type(*table_, c));
    profiles_.resize(detected_.size());
    profiled_types_.assign(detected_.size(), std::string(1, '\0'));  // none computed yet
    reprofile();
  }
  endResetModel();
}

void DatasetColumnsModel::setBinding(const graph::DatasetBinding& binding) {
  binding_ = binding;
  reprofile();
  if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
}

// A column's profile follows its type: a column of numbers taken as categories counts them.
void DatasetColumnsModel::reprofile() {
  for (size_t i = 0; i < profiles_.size(); ++i) {
    const std::string type = settingOf(int(i)).type;
    if (type == profiled_types_[i]) continue;
    profiles_[i] = data::profile_column(*table_, int64_t(i), data::parse_column_type(type));  // "auto": detected
    profiled_types_[i] = type;
  }
}

graph::ColumnSetting DatasetColumnsModel::settingOf(int row) const {
  const std::string& name = table_->names().at(size_t(row));
  for (const graph::ColumnSetting& c : binding_.columns)
    if (c.name == name) return c;
  return {.name = name};
}

int DatasetColumnsModel::rowOf(const std::string& column) const {
  if (!table_) return -1;
  const auto at = std::ranges::find(table_->names(), column);
  return at == table_->names().end() ? -1 : int(at - table_->names().begin());
}

// As the data layer reads the binding: no feature list means every column but the target and
// the free-text ones.
QString DatasetColumnsModel::roleOf(int row) const {
  const std::string& name = table_->names().at(size_t(row));
  if (name == binding_.target) return roleChoices()[0];
  const bool feature = binding_.features.empty()
                           ? profiles_.at(size_t(row)).type != data::ColumnType::Text
                           : std::ranges::find(binding_.features, name) != binding_.features.end();
  return roleChoices()[feature ? 1 : 2];
}

int DatasetColumnsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(profiles_.size());
}

int DatasetColumnsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : FirstSetting + int(graph::column_settings().size());
}

QVariant DatasetColumnsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const int row = index.row();
  const data::ColumnProfile& p = profiles_[size_t(row)];
  const int64_t cells = p.present + p.missing;
  switch (index.column()) {
    case Name:
      if (role == Qt::DisplayRole) return qstr(p.name);
      if (role == Qt::ToolTipRole)
        return tr("%1: %2, detected from its cells").arg(qstr(p.name), data::type_name(detectedType(row)));
      return {};
    case Role:
      if (role == Qt::DisplayRole || role == Qt::EditRole) return roleOf(row);
      if (role == ChoicesRole) return roleChoices();
      if (role == Qt::ToolTipRole)
        return tr("What the model does with the column: predicts it (target), reads it (feature) or leaves it "
                  "out (ignored). Free text is ignored unless its type is changed.");
      return {};
    case Missing:
      if (role == Qt::DisplayRole)
        return p.missing == 0 ? QStringLiteral("0")
                              : tr("%1 (%2%)").arg(p.missing).arg(100.0 * double(p.missing) / double(cells), 0, 'f', 1);
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      if (role == Qt::ToolTipRole) return tr("%1 of %2 cells are missing").arg(p.missing).arg(cells);
      return {};
    case Distinct:
      if (role == Qt::DisplayRole) return qlonglong(p.distinct);
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      if (role == Qt::ToolTipRole) return tr("%1 distinct values among the present cells").arg(p.distinct);
      return {};
    case Profile: {
      const bool categories = p.type == data::ColumnType::Categorical || p.type == data::ColumnType::Text;
      if (role == ProfileCategoriesRole) return categories;
      if (role == ProfileCountsRole) {
        QVariantList counts;
        if (categories)
          for (const auto& top : p.top) counts << qlonglong(top.second);
        else
          for (const int64_t n : p.histogram) counts << qlonglong(n);
        return counts;
      }
      if (role == Qt::ToolTipRole) return profileText(p);
      return {};
    }
    default: break;
  }
  const graph::ColumnSettingRow& setting = settingRow(index.column());
  const graph::ParamValue value = graph::setting_value(settingOf(row), setting.field);
  if (const bool* on = std::get_if<bool>(&value)) {
    if (role == Qt::CheckStateRole) return *on ? Qt::Checked : Qt::Unchecked;
  } else {
    const QString text = qstr(std::get<std::string>(value));  // a column's settings are words or flags
    if (role == Qt::EditRole) return text;
    if (role == Qt::DisplayRole)
      return setting.spec.name == "type" && text == QLatin1String("auto")
                 ? tr("auto (%1)").arg(data::type_name(detectedType(row)))
                 : text;
    if (role == ChoicesRole) {
      QStringList choices;
      for (const std::string& choice : setting.spec.choices) choices << qstr(choice);
      return choices;
    }
  }
  if (role == Qt::ForegroundRole && value == setting.spec.default_value)
    return ThemeManager::instance().theme().mutedText;  // left alone, as the forms grey a default
  if (role == Qt::ToolTipRole) return settingToolTip(setting.spec);
  return {};
}

QVariant DatasetColumnsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
  if (section >= FirstSetting) {
    const graph::ParamSpec& spec = settingRow(section).spec;
    if (role == Qt::DisplayRole) return qstr(spec.label);
    if (role == Qt::ToolTipRole) return settingToolTip(spec);
    return {};
  }
  static const char* const labels[] = {QT_TR_NOOP("Column"), QT_TR_NOOP("Role"), QT_TR_NOOP("Missing"),
                                       QT_TR_NOOP("Distinct"), QT_TR_NOOP("Profile")};
  static const char* const tips[] = {
      QT_TR_NOOP("The file's columns, in its order"),
      QT_TR_NOOP("Predicted (target), read by the model (feature) or left out (ignored)"),
      QT_TR_NOOP("Cells that are empty or one of the missing values"),
      QT_TR_NOOP("Distinct values among the present cells"),
      QT_TR_NOOP("A histogram of numbers and dates; the most frequent values of categories and text")};
  if (role == Qt::DisplayRole) return tr(labels[section]);
  if (role == Qt::ToolTipRole) return tr(tips[section]);
  return {};
}

Qt::ItemFlags DatasetColumnsModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.column() == Role) return f | Qt::ItemIsEditable;
  if (index.column() < FirstSetting) return f;
  if (settingRow(index.column()).spec.type == graph::ParamType::Bool) return f | Qt::ItemIsUserCheckable;
  return f | Qt::ItemIsEditable;
}

bool DatasetColumnsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.row() >= rowCount()) return false;
  if (index.column() == Role && role == Qt::EditRole) return setRole(index.row(), value.toString());
  if (index.column() < FirstSetting) return false;
  const bool flag = settingRow(index.column()).spec.type == graph::ParamType::Bool;
  if (flag != (role == Qt::CheckStateRole) || (!flag && role != Qt::EditRole)) return false;
  return setSetting(index.row(), index.column(), value);
}

bool DatasetColumnsModel::setRole(int row, const QString& role) {
  if (!roleChoices().contains(role) || role == roleOf(row)) return false;
  const std::string name = table_->names().at(size_t(row));
  graph::DatasetBinding next = binding_;
  // The features as the binding makes them now, in the file's order, with this column's change.
  std::vector<std::string> chosen;
  for (int i = 0; i < rowCount(); ++i)
    if (i == row ? role == roleChoices()[1] : roleOf(i) == roleChoices()[1]) chosen.push_back(table_->names()[size_t(i)]);
  if (role == roleChoices()[0]) {
    next.target = name;
    // What the target holds says what a model of it does: numbers are a regression, categories classes.
    const data::ColumnType type = profiles_[size_t(row)].type;
    if (type == data::ColumnType::Numeric) next.task = "regression";
    else if (type != data::ColumnType::Date) next.task = "classification";
    // A file's other columns stay what they were; with no list, the old target becomes a feature.
    if (!binding_.features.empty()) next.features = chosen;
    store(std::move(next));
    return true;
  }
  if (name == binding_.target) next.target.clear();
  if (chosen.empty()) {
    emit refused(tr("A model needs at least one feature column."));
    return false;
  }
  // Every column a model would read anyway is stored as no list: columns added later are read too.
  std::vector<std::string> implicit;
  for (int i = 0; i < rowCount(); ++i) {
    const std::string& other = table_->names()[size_t(i)];
    if (other != next.target && profiles_[size_t(i)].type != data::ColumnType::Text) implicit.push_back(other);
  }
  next.features = chosen == implicit ? std::vector<std::string>{} : chosen;
  store(std::move(next));
  return true;
}

bool DatasetColumnsModel::setSetting(int row, int column, const QVariant& value) {
  const graph::ColumnSettingRow& setting = settingRow(column);
  graph::ColumnSetting changed = settingOf(row);
  const graph::ParamValue v = setting.spec.type == graph::ParamType::Bool
                                  ? graph::ParamValue(value.toInt() == Qt::Checked)
                                  : graph::ParamValue(value.toString().trimmed().toStdString());
  try {
    graph::set_setting(graph::column_settings(), ("column '" + changed.name + "'").c_str(), changed,
                       setting.spec.name, v);
  } catch (const std::exception& e) {
    emit refused(qstr(e.what()));
    return false;
  }
  graph::DatasetBinding next = binding_;
  std::vector<graph::ColumnSetting>& columns = next.columns;
  std::erase_if(columns, [&](const graph::ColumnSetting& c) { return c.name == changed.name; });
  if (changed != graph::ColumnSetting{.name = changed.name}) {
    // In the file's order: before the first listed column that comes after this one.
    const auto& names = table_->names();
    const auto after = std::ranges::find_if(columns, [&](const graph::ColumnSetting& c) {
      const auto at = std::ranges::find(names, c.name);
      return at != names.end() && at - names.begin() > row;
    });
    columns.insert(after, changed);
  }
  if (next == binding_) return false;
  store(std::move(next));
  return true;
}

void DatasetColumnsModel::store(graph::DatasetBinding next) {
  if (commit) commit(next);
}

}  // namespace plexus::widgets
