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
//           trial.json    {"index":1,"assignment":{...}}, written (atomically) before it starts
//           launch.plexus the trial's project as handed to `plexus-cli train`
//       results.csv, results.json   the table (sweep/results.h), rewritten as trials finish
//       sweep.lock        held (flock, shared) by every process running the sweep's trials
//
// A trial's status is its folder's: no trial.json, pending; a run log with an end line,
// completed / stopped / failed (session::RunStatus); else running while some process holds the
// sweep's lock, interrupted when none does (killed: `plexus-cli sweep --resume` reruns it,
// keeping every finished trial). Nothing but trial.json's and the run's own files is shared
// between processes, so ranks of mpirun and local workers need no other coordination.
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

enum class TrialStatus { Pending, Running, Interrupted, Completed, Stopped, Failed };
// "pending", "running", "interrupted", "completed", "stopped", "failed"
std::string to_string(TrialStatus status);
// A trial that will not run again: completed, stopped or failed.
bool finished(TrialStatus status);

struct TrialState {
  int64_t index = 0;  // 1-based: trial-001
  std::filesystem::path folder;
  std::optional<Assignment> assignment;  // nullopt: a tpe trial not chosen yet
  TrialStatus status = TrialStatus::Pending;
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

// Writes trial.json for trial `index` (creating its folder): the trial is taken. Returns false,
// writing nothing, when it already has one (another process took it first): the create is
// atomic (O_EXCL), so two processes never run one trial.
bool claim_trial(const std::filesystem::path& folder, int64_t index, const Assignment& assignment);
// Takes back an interrupted trial for a rerun: its run files are removed (session::delete_run)
// and its trial.json rewritten. The caller holds the sweep's lock and knows nothing else runs it.
void reset_trial(const std::filesystem::path& folder, int64_t index, const Assignment& assignment);

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
