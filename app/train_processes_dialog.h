#pragma once
// Run ▸ Train with N Processes…: how many processes, the threads each uses, more arguments for
// mpirun (a hostfile, remembered), and the whole command that will run, as it will run.
#include <QDialog>

#include "process_run.h"

class QDialogButtonBox;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;

namespace plexus::app {

class TrainProcessesDialog : public QDialog {
  Q_OBJECT

 public:
  // `plan`: the project and run folder the command names; its processes, threads and extra
  // arguments are the dialog's (2, ProcessRun::defaultThreads, the last ones used).
  explicit TrainProcessesDialog(const ProcessPlan& plan, QWidget* parent = nullptr);

  ProcessPlan plan() const;  // as set now
  QSpinBox* processesBox() const { return processes_; }
  QSpinBox* threadsBox() const { return threads_; }
  QLineEdit* extraEdit() const { return extra_; }
  QString commandText() const;
  QDialogButtonBox* buttons() const { return buttons_; }

  void accept() override;  // remembers the extra arguments

 private:
  void showCommand();

  ProcessPlan plan_;
  QSpinBox* processes_;
  QSpinBox* threads_;
  QLineEdit* extra_;
  QPlainTextEdit* command_;
  QDialogButtonBox* buttons_;
};

}  // namespace plexus::app
