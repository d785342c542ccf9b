#pragma once
// A sweep's folder: the sweep's project, its plan, and one ordinary run folder per trial.
//
//   <runs folder of the project>/sweeps/<yyyyMMdd-HHmmss-zzz>/   (session::runs_folder)
//       project.plexus    the project the sweep started from, its "sweep" object included
//       sweep.json        {"format":1,"project":"/abs/mnist_mlp.plexus","created":"...",
//                          "trials":N,"planned":[{"index":1,"assignment":{"lr":0.01,...}},...]}
//                         (tpe's later trials are chosen as they start: their trial.json says)
//       trial-001/        a run folder (session/run_log.h: metrics.jsonl, project.plexus,
//                         best/final/last.safetensors) and
//           trial.json    {"index":1,"attempt":1,"by":"host:pid","assignment":{...}}, written
//                         (whole or not at all) by the process that takes the trial, before it starts
//           attempt-2.json ...  the same, for each rerun of an interrupted trial
//           launch.plexus the trial's project as handed to `plexus-cli train`
//       results.csv, results.json   the table (sweep/results.h), rewritten as trials finish
//       sweep.lock        held (flock, shared) by every process running the sweep's trials
//
// A trial's status is its folder's: no trial.json, pending; a run log with an end line,
// completed / stopped / failed (session::RunStatus); else running while some process holds the
// sweep's lock, interrupted when none does (killed: `plexus-cli sweep --resume` reruns it,
// keeping every finished trial). Every process takes a trial by creating its trial.json (or,
// rerunning an interrupted one, its next attempt-N.json) with an atomic create that fails when
// the file exists: ranks of mpirun and local workers need no other coordination, and a trial is
// never run twice at once.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "sweep/assignment.h"

namespace plexus::sweep {

inline constexpr const char* kSweepFile = "sweep.json";
inline constexpr const char* kTrialFile = "trial.json";
inline constexpr int kSweepFormat = 1;
// Left in a trial's folder by the sweep process that stopped it (SIGTERM on Ctrl-C): the run
// ends "stopped", yet the trial is interrupted, to go on when the sweep resumes.
inline constexpr const char* kStoppedBySweepFile = "stopped-by-sweep";
// Left by the sweep process when a trial's process ended without its run log saying how (it
// could not start: a missing dataset, a crash): why, in a line. The trial is failed.
inline constexpr const char* kTrialFailedFile = "trial-failed";

enum class TrialStatus { Pending, Running, Interrupted, Completed, StoppedEarly, Stopped, Failed };
// "pending", "running", "interrupted", "completed", "stopped early", "stopped", "failed"
std::string to_string(TrialStatus status);
// A trial that will not run again: completed, stopped early, stopped or failed.
bool finished(TrialStatus status);

struct TrialState {
  int64_t index = 0;  // 1-based: trial-001
  std::filesystem::path folder;
  std::optional<Assignment> assignment;  // nullopt: a tpe trial not chosen yet
  TrialStatus status = TrialStatus::Pending;
  int attempts = 0;     // trial.json and the attempt-N.json after it
  std::string claimed_by;  // "host:pid" of the sweep process that took its latest attempt
  std::string message;  // why it failed
  std::optional<double> best_validation_accuracy, best_validation_loss;
  std::optional<double> best_train_loss;
  int best_epoch = 0;       // the epoch the metric was best at (0: none yet)
  int epochs_done = 0;      // completed epochs
  int64_t epochs = 0;       // the trial's epochs setting
  double seconds = 0;       // of training (so far, for a running trial: from its epoch lines)
  std::optional<double> score;  // the sweep's metric, higher is better (minus a loss); nullopt: none yet
};

struct SweepState {
  std::filesystem::path folder;
  std::filesystem::path project_file;  // the project the sweep was started from ("" if unknown)
  std::string created;                 // local time, ISO 8601
  graph::Graph project;                // project.plexus: the sweep's settings in project.sweep
  std::string metric;                  // resolved: validation_accuracy | validation_loss | train_loss
  std::vector<TrialState> trials;      // every trial of the sweep, pending ones included, by index
  bool running = false;                // some process holds the sweep's lock
  bool complete() const;               // every trial finished
};

// `<runs folder of project_file>/sweeps`; a fresh sweep folder in it for a sweep started at `when`.
std::filesystem::path sweeps_folder(const std::filesystem::path& project_file);
std::filesystem::path new_sweep_folder(const std::filesystem::path& project_file,
                                       std::chrono::system_clock::time_point when = std::chrono::system_clock::now());
// `folder`/trial-001 for index 1.
std::filesystem::path trial_folder(const std::filesystem::path& folder, int64_t index);

// "auto": validation_accuracy for a project whose loss is a classification one, else
// validation_loss; any other metric as it is.
std::string resolved_metric(const graph::Graph& project);

// Creates `folder` with project.plexus and sweep.json (the planned assignments). The project's
// sweep must be defined and pass graph::check_sweep (ValueError otherwise); IoError for a
// folder that already holds a sweep.json.
void create_sweep(const std::filesystem::path& folder, const graph::Graph& project,
                  const std::filesystem::path& project_file);

// Takes attempt `attempt` of trial `index` (1: trial.json, creating the trial's folder; above 1:
// attempt-N.json, a rerun of an interrupted trial) with its assignment. Returns false, writing
// nothing, when that attempt is taken already (another process was first): the file appears
// whole or not at all (written aside, then linked into place).
bool claim_trial(const std::filesystem::path& folder, int64_t index, int attempt, const Assignment& assignment);

// The trials interrupted when the sweep's last processes died: those begun and not finished in
// `state`, if `state` was read (read_sweep) while no process held the lock. A process that is to
// rerun them reads the state, then takes its SweepLock, then claims attempt `attempts + 1` of
// each: if another process took the lock first, its claim of that attempt wins.
std::vector<int64_t> interrupted_trials(const SweepState& state);

// The sweep's state from its files: cheap (the folder's small files and each trial's run log),
// for the GUI to call once a second while a sweep runs. IoError when `folder` holds no
// sweep.json, DataError for one that is malformed (naming the file and what is wrong).
SweepState read_sweep(const std::filesystem::path& folder);

// The index into state.trials of the finished trial with the best score (ties: the first); nullopt
// when none has a score.
std::optional<size_t> best_trial(const SweepState& state);

// The newest sweep of `project_file` with the same sweep settings as `project.sweep` that is not
// complete and not running: what `plexus-cli sweep FILE` goes on with. nullopt when there is none.
std::optional<std::filesystem::path> unfinished_sweep(const std::filesystem::path& project_file,
                                                      const graph::Graph& project);

// The sweep's lock, held while this process runs trials of the sweep in `folder` (shared: every
// rank and worker holds it at once). The kernel lets go of it when the process dies, so a
// killed sweep reads as not running.
class SweepLock {
 public:
  explicit SweepLock(const std::filesystem::path& folder);  // IoError when the lock file cannot be made
  ~SweepLock();
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace plexus::sweep
