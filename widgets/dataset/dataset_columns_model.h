#pragma once
// DatasetColumnsModel: a CSV file's columns as a table, a row per column of the file: its name,
// its role (target, feature or ignored: DatasetBinding::target and ::features), its missing and
// distinct cells, its profile (data::ColumnProfile: a histogram of numbers and dates, the most
// frequent categories; DatasetProfileDelegate draws it), and one column per setting of
// graph::column_settings() — type, missing policy, fill, indicator, encoding — labelled and
// explained as that table says, so there is no second list of them.
//
// It edits nothing itself: an edit makes the next binding and hands it to `commit` (the owner
// stores it as one undo step) and the owner shows the binding again (setBinding). A column whose
// settings are back at their defaults leaves DatasetBinding::columns; a feature list that names
// every column a model would read anyway is stored as none; a new target sets the task from its
// type (numbers: regression; categories and text: classification).
#include <QAbstractTableModel>
#include <QStringList>

#include <functional>
#include <memory>
#include <vector>

#include "data/table.h"
#include "data/table_columns.h"
#include "graph/graph.h"

namespace plexus::widgets {

class DatasetColumnsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Name, Role, Missing, Distinct, Profile, FirstSetting };
  enum DataRole {
    ChoicesRole = Qt::UserRole + 1,  // QStringList: what an editor offers; empty: free text
    ProfileCountsRole,               // QVariantList of counts: the histogram's bins or the top values'
    ProfileCategoriesRole,           // bool: the counts are categories' (separate bars), not bins
  };

  explicit DatasetColumnsModel(QObject* parent = nullptr);

  // The file's cells (null: none readable); profiles are computed for each column's type.
  void setTable(std::shared_ptr<const data::Table> table);
  const data::Table* table() const { return table_.get(); }
  void setBinding(const graph::DatasetBinding& binding);
  const graph::DatasetBinding& binding() const { return binding_; }

  const data::ColumnProfile& profile(int row) const { return profiles_.at(size_t(row)); }
  data::ColumnType detectedType(int row) const { return detected_.at(size_t(row)); }
  // The model column of a column setting by its key ("missing"), -1 for an unknown key.
  static int settingColumn(const std::string& key);
  int rowOf(const std::string& column) const;  // -1 for a column the file lacks
  // "target", "feature" or "ignored", as the binding makes it.
  QString roleOf(int row) const;

  // Stores an edited binding (one undo step of the owner's document).
  std::function<void(const graph::DatasetBinding&)> commit;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

 signals:
  void refused(const QString& why);  // an edit the binding cannot take, and why

 private:
  graph::ColumnSetting settingOf(int row) const;  // the binding's, or the defaults
  void reprofile();                               // for the binding's type choices
  bool setRole(int row, const QString& role);
  bool setSetting(int row, int column, const QVariant& value);
  void store(graph::DatasetBinding next);

  std::shared_ptr<const data::Table> table_;
  graph::DatasetBinding binding_;
  std::vector<data::ColumnType> detected_;
  std::vector<data::ColumnProfile> profiles_;
  std::vector<std::string> profiled_types_;  // the type choice each profile was computed for
};

}  // namespace plexus::widgets
