#pragma once
// RunList: the runs of a TrainingPlots, one row each: a check box to show or hide the run's
// curves, its colour and name (double-click or F2 to rename; the plot legend follows), its
// status, its best validation accuracy and a summary of its settings (also the row's tool
// tip). It stays in sync with the plots as runs start, progress and finish.
#include <QTreeWidget>

namespace plexus::widgets {

class TrainingPlots;

class RunList : public QTreeWidget {
  Q_OBJECT

 public:
  enum Column { NameColumn, StatusColumn, AccuracyColumn, SettingsColumn };

  explicit RunList(TrainingPlots* plots, QWidget* parent = nullptr);

  QTreeWidgetItem* itemForRun(int run) const;  // nullptr for an unknown run

 private:
  void addRun(int run);
  void refresh(int run);
  void refreshAll();
  void edited(QTreeWidgetItem* item, int column);

  TrainingPlots* plots_;
};

}  // namespace plexus::widgets
