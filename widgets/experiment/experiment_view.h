#pragma once
// ExperimentView: one sweep's trials. A line sums them up (how many, by status; the best one);
// a filter box and a status choice narrow the trial table (TrialTableModel through TrialFilter,
// sortable by any column); beside it the parallel-coordinates plot of the same trials; below,
// the curves of the selected trials overlaid (TrainingPlots, one run per trial, read from the
// trials' run folders). Selecting in the table or clicking lines in the plot selects in both.
// "Apply Best Settings" (to the project) only asks (applyBestRequested): the owner has the project.
#include <QList>
#include <QWidget>
#include <map>
#include <vector>

#include "experiment/trial.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSplitter;
class QTableView;

namespace plexus::widgets {

class ParallelCoordinates;
class TrainingPlots;
class TrialFilter;
class TrialTableModel;

class ExperimentView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kMaxOverlaid = 8;  // trials whose curves are overlaid at once

  explicit ExperimentView(QWidget* parent = nullptr);

  // A sweep to show (its parameters, metric and name): the trials shown go, the selection too.
  void setSweep(const QString& name, const std::vector<SweptParameter>& parameters, TrialMetric metric);
  // Its trials as they are now: rows change in place, the selection stays, the curves of
  // selected trials that progressed are read again.
  void setTrials(const std::vector<Trial>& trials);
  void clear();  // no sweep

  void selectTrials(const QList<int>& trials);
  QList<int> selectedTrials() const;  // in table order
  int bestTrial() const;              // -1 when no trial has the metric
  QString summaryText() const;

  TrialTableModel* model() const { return model_; }
  TrialFilter* filter() const { return filter_; }
  QTableView* table() const { return table_; }
  ParallelCoordinates* parallel() const { return parallel_; }
  TrainingPlots* plots() const { return plots_; }
  QLineEdit* filterEdit() const { return filter_edit_; }
  QComboBox* statusBox() const { return status_; }
  QPushButton* applyBestButton() const { return apply_best_; }
  // The curves shown: trial number -> the plots' run id.
  const std::map<int, int>& overlaid() const { return overlaid_; }

 signals:
  void selectionChanged(const QList<int>& trials);
  void applyBestRequested(int trial);

 private:
  void tableSelectionChanged();
  void showCurves();
  void updateSummary();

  TrialTableModel* model_;
  TrialFilter* filter_;
  QTableView* table_;
  ParallelCoordinates* parallel_;
  TrainingPlots* plots_;
  QLabel* summary_;
  QLineEdit* filter_edit_;
  QComboBox* status_;
  QPushButton* apply_best_;
  QString name_;
  TrialMetric metric_ = TrialMetric::Loss;
  std::map<int, int> overlaid_;
  std::map<int, std::pair<QString, int>> overlaid_state_;  // trial -> status and epochs its curves show
  bool selecting_ = false;  // selection set from code: no echo between the table and the plot
};

}  // namespace plexus::widgets
