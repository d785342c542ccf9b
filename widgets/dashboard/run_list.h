#pragma once
// RunList: the runs of a TrainingPlots, one row each: a check box to show or hide the run's
// curves, its colour and name (double-click or F2 to rename; the plot legend follows), when it
// started ("this session" for runs trained since the app started, the date for past runs read
// from their folders), its status, its best validation accuracy (or loss, for a regression)
// and a summary of its settings (the row's tool tip adds its folder and test figures). It
// stays in sync with the plots as runs start, progress, finish and go.
//
// Its actions, in the context menu and for the Run menu: Resume This Run (a run that stopped
// short with a `last` checkpoint, while nothing trains; its status then ends in a "Resume" link
// that asks the same), Continue from This Run (a run with a final checkpoint, while nothing trains), Compare Runs (two selected runs with folders, not
// training; the context menu also offers Compare With ▸ any other such run), Delete Run…
// (Delete; a run with a folder that is not training) and Open Run Folder…. They only ask:
// whoever owns the runs answers the signals.
#include <QTreeWidget>

#include <vector>

class QAction;

namespace plexus::widgets {

class TrainingPlots;

class RunList : public QTreeWidget {
  Q_OBJECT

 public:
  enum Column { NameColumn, StartedColumn, StatusColumn, BestColumn, SettingsColumn };

  explicit RunList(TrainingPlots* plots, QWidget* parent = nullptr);

  QTreeWidgetItem* itemForRun(int run) const;  // nullptr for an unknown run
  int currentRun() const;                      // the current run's id, -1 when none
  std::vector<int> selectedRuns() const;       // in the list's order

  QAction* resumeAction() const { return resume_; }
  QAction* continueAction() const { return continue_; }
  QAction* compareAction() const { return compare_; }
  QAction* deleteAction() const { return delete_; }
  QAction* openAction() const { return open_; }

  // While a run trains, none can be resumed or continued.
  void setTraining(bool training);

 signals:
  void resumeRequested(int run);
  void continueRequested(int run);
  void compareRequested(int a, int b);  // a began before b
  void deleteRequested(int run);
  void openRequested();

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  void addRun(int run);
  void removeRun(int run);
  void refresh(int run);
  void refreshAll();
  void updateActions();
  void edited(QTreeWidgetItem* item, int column);
  bool comparable(int run) const;
  void requestComparison(int a, int b);

  // A resumable run's status, with a "Resume" link, in place of the status text.
  void showResumeLink(QTreeWidgetItem* item, int run, const QString& status);

  TrainingPlots* plots_;
  QAction *resume_, *continue_, *compare_, *delete_, *open_;
  bool training_ = false;
};

}  // namespace plexus::widgets
