#pragma once
// DatasetColumnsView: a CSV dataset's column table (DatasetColumnsModel) as the editor's
// dataset page shows it: a row per column of the file with its role, counts, profile and
// settings, each editable in place (DatasetChoiceDelegate; the profile drawn by
// DatasetProfileDelegate). It reads the file itself, again only when the file or the binding's
// reading options (delimiter, missing values) change: a small file at once, a large one in the
// background ("Reading…" meanwhile), so typing elsewhere never waits for it.
#include <QDateTime>
#include <QString>
#include <QWidget>

#include <functional>
#include <memory>

#include "graph/graph.h"

class QLabel;
class QTableView;

namespace plexus::data {
class Table;
}

namespace plexus::widgets {

class DatasetColumnsModel;

class DatasetColumnsView : public QWidget {
  Q_OBJECT

 public:
  explicit DatasetColumnsView(QWidget* parent = nullptr);

  // The binding's file (absolute; "" when none is found) and the binding as the document has it.
  void showFile(const QString& file, const graph::DatasetBinding& binding);
  // Stores an edited binding as one undo step (the owner's document).
  void setCommit(std::function<void(const graph::DatasetBinding&)> commit);

  DatasetColumnsModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QString message() const;  // why the file cannot be read, "Reading…", or ""

  static constexpr qint64 kReadAtOnce = 4 << 20;  // bytes; larger files are read in the background

 signals:
  void refused(const QString& why);  // an edit the binding cannot take
  void loaded();                     // the file's columns are shown (or why they cannot be)

 private:
  struct Source {
    QString file;
    QDateTime modified;
    qint64 size = -1;
    std::string delimiter, missing_values;
    bool operator==(const Source&) const = default;
  };
  void read(const Source& source);
  void showTable(std::shared_ptr<const data::Table> table, const QString& error);
  void fitHeight();

  DatasetColumnsModel* model_;
  QTableView* table_;
  QLabel* message_;
  Source source_;
  uint64_t reads_ = 0;  // a background read answers only if no other was asked for since
};

}  // namespace plexus::widgets
