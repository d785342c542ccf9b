#pragma once
// The trials of a sweep as a table: the trial's number, each swept parameter's value, the best
// epoch's validation loss and accuracy, the best epoch, the epochs trained, the time and the
// status. TrialTableModel holds the rows; setTrials() updates them in place (a trial is matched
// by its number), so selection and sorting survive a sweep's progress. TrialFilter sorts by
// value (numbers as numbers, a trial without a figure last either way) and keeps the rows of
// one status and those whose text holds a filter string.
#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <vector>

#include "experiment/trial.h"

namespace plexus::widgets {

class TrialTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // The role that holds a cell's value for sorting: a double, or an invalid QVariant for none.
  static constexpr int SortRole = Qt::UserRole + 1;
  // The role that holds the row's Trial::index (in every column).
  static constexpr int TrialRole = Qt::UserRole + 2;

  explicit TrialTableModel(QObject* parent = nullptr);

  // The swept parameters: one column each. Resets the model (its rows go).
  void setParameters(const std::vector<SweptParameter>& parameters);
  // Trials matched by index: changed rows change in place, new ones are appended, trials no
  // longer listed go.
  void setTrials(const std::vector<Trial>& trials);

  const std::vector<SweptParameter>& parameters() const { return parameters_; }
  const std::vector<Trial>& trials() const { return trials_; }
  int rowOf(int trial) const;  // the row of the trial numbered `trial`; -1 when none

  // Fixed columns around the parameters': # first, then the parameters, then these.
  enum Figure { LossColumn, AccuracyColumn, BestEpochColumn, EpochsColumn, TimeColumn, StatusColumn, FigureCount };
  int column(Figure figure) const { return 1 + int(parameters_.size()) + int(figure); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  QVariant sortValue(const Trial& trial, int column) const;
  QString text(const Trial& trial, int column) const;

  std::vector<SweptParameter> parameters_;
  std::vector<Trial> trials_;
};

class TrialFilter : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit TrialFilter(QObject* parent = nullptr);

  // Only the trials of this status ("" = every status).
  void setStatus(const QString& status);
  // Only the trials whose cells' text holds `text`, ignoring case ("" = every trial).
  void setText(const QString& text);

 protected:
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
  bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

 private:
  QString status_, text_;
};

// The time a trial took, as the table shows it: "42 s", "3 min 05 s", "1 h 02 min".
QString durationText(double seconds);

}  // namespace plexus::widgets
