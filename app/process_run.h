#pragma once
// ProcessRun: training in processes of their own, `mpirun -np N plexus-cli train FILE --run-dir
// DIR --threads T` (Run ▸ Train with N Processes), started and stopped without the UI thread
// ever waiting on them. plexus-cli writes the run folder; the RunFollower shows it. What the
// processes print is kept (its last lines say why a run that failed did).
//
// Stop asks mpirun to end the job as Ctrl+C would (SIGINT: it sends the ranks SIGTERM, on which
// they finish their step together and rank 0 writes the final checkpoint, docs/distributed.md);
// a job still there kStopGraceMs later is terminated (SIGTERM), and killed kKillAfterMs after
// that.
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

namespace plexus::app {

struct ProcessPlan {
  int processes = 2;
  int threads = 1;    // each process's (plexus-cli --threads)
  QString extra;      // more arguments for mpirun, as typed ("--hostfile hosts"); quotes group
  QString project;    // the project file plexus-cli trains
  QString runDir;     // the run folder it writes
  QString workingDir; // where it runs ("" = the app's); a relative dataset path falls back to it
};

class ProcessRun : public QObject {
  Q_OBJECT

 public:
  static constexpr int kStopGraceMs = 30000, kKillAfterMs = 5000;
  static constexpr qsizetype kKeptOutput = 64 * 1024;  // bytes of output kept, the last ones

  explicit ProcessRun(QObject* parent = nullptr);
  ~ProcessRun() override;  // a job still running is killed

  // max(1, cores / processes): the processes share this machine's cores.
  static int defaultThreads(int processes);
  // The whole command, the program first: mpirun (as found on PATH) with -np, --oversubscribe
  // when there are more processes than cores, --allow-run-as-root as root, the extra arguments,
  // then plexus-cli (cliPath()) and its own.
  static QStringList command(const ProcessPlan& plan);
  // $PLEXUS_CLI when set, else plexus-cli next to this program.
  static QString cliPath();

  // Returns "" once the job has been started, else why it cannot be (mpirun or plexus-cli
  // missing, a job already running, extra arguments with an open quote).
  QString start(const ProcessPlan& plan);
  void stop();
  bool isRunning() const { return process_ != nullptr; }
  bool stopRequested() const { return stop_requested_; }
  // The last `lines` lines the processes printed (stdout and stderr together).
  QString outputTail(int lines) const;

 signals:
  // The job is over: `crashed` when mpirun did not exit by itself (killed, or it failed to
  // start), else its exit status.
  void ended(int exit_code, bool crashed);

 private:
  void collect();
  void finish(int exit_code, bool crashed);

  QProcess* process_ = nullptr;
  QTimer escalate_{this};  // after stop(): terminate, then kill
  bool stop_requested_ = false;
  bool terminated_ = false;
  QByteArray output_;
};

}  // namespace plexus::app
