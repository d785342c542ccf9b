#pragma once
// The Experiments page: the project's sweep definition (SweepEditor) beside the sweep shown
// (ExperimentView), and the sweep's commands: Start Sweep runs `plexus-cli sweep` on the project
// as it is (saved or not) in a process of its own, which runs the trials as processes of their
// own; Stop Sweep asks it to stop (SIGTERM: the trials stop cleanly and the sweep can resume);
// Open Sweep Folder shows any sweep's folder; Resume Sweep goes on with the sweep shown when it
// was interrupted (`plexus-cli sweep --resume`). The UI thread never waits on them: the folder
// is read (sweep::read_sweep) in the background once a second while a sweep runs. Apply Best
// Settings writes the best trial's values into the project as one undo step.
#include <QFutureWatcher>
#include <QProcess>
#include <QString>
#include <QTimer>
#include <QWidget>
#include <memory>
#include <optional>

#include "sweep/sweep_folder.h"

class QAction;

namespace plexus::widgets {
class ExperimentView;
class GraphDocument;
class SweepEditor;
}  // namespace plexus::widgets

namespace plexus::app {

class ExperimentsPage : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kPollMs = 1000;
  static constexpr int kKillAfterMs = 30000;  // after Stop, a sweep process still there is killed

  ExperimentsPage(widgets::GraphDocument* document, QWidget* parent = nullptr);
  ~ExperimentsPage() override;  // a sweep still running is stopped (its trials stop cleanly)

  widgets::SweepEditor* editor() const { return editor_; }
  widgets::ExperimentView* view() const { return view_; }
  QAction* startAction() const { return start_; }
  QAction* stopAction() const { return stop_; }
  QAction* openAction() const { return open_; }
  QAction* resumeAction() const { return resume_; }

  // Runs the open project's sweep in `folder` (new): the project, its dataset path made absolute
  // as `project_dir` finds it, goes to folder/launch.plexus. "" once started, else why not.
  QString start(const QString& folder, const QString& project_dir);
  // Goes on with the interrupted sweep shown. "" once started, else why not.
  QString resume();
  void stop();
  bool isRunning() const { return process_ != nullptr; }
  // Shows the sweep in `folder`; false, with the reason in `why`, when it holds none.
  bool open(const QString& folder, QString* why = nullptr);
  QString folder() const { return folder_; }
  // Reads the folder now (in the background); updated() follows.
  void poll();
  const std::optional<sweep::SweepState>& state() const { return state_; }
  // The best trial's values written into the project (one undo step); returns what changed
  // ("lr=0.003 fc1.out_features=256"), "" when nothing did. ValueError when they do not fit
  // the project any more (a node gone).
  QString applyBest();
  QString outputTail(int lines) const;  // what the sweep process printed last

 signals:
  void updated();         // the folder was read: state() is new
  void runningChanged();  // a sweep process started or ended
  // The sweep process ended: `message` says how, `failed` when it ended on an error.
  void ended(const QString& message, bool failed);
  void message(const QString& text);  // for the status bar

 private:
  QString launch(const QStringList& arguments);
  void finished(int exit_code, QProcess::ExitStatus status);
  void show(const sweep::SweepState& state);
  void updateActions();

  widgets::GraphDocument* doc_;
  widgets::SweepEditor* editor_;
  widgets::ExperimentView* view_;
  QAction *start_, *stop_, *open_, *resume_;
  QProcess* process_ = nullptr;
  QByteArray output_;
  bool stop_requested_ = false;
  QTimer poll_timer_{this};
  QTimer kill_timer_{this};
  QString folder_;
  std::optional<sweep::SweepState> state_;
  struct Read {
    QString folder;                          // the one read
    std::optional<sweep::SweepState> state;  // none before plexus-cli has written sweep.json
  };
  QFutureWatcher<Read> reading_;
  bool poll_again_ = false;  // a poll asked for while one was reading
};

}  // namespace plexus::app
