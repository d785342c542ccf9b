#pragma once
// A run folder's account of its run, next to its checkpoints (session/run_folder.h), so a run
// outlasts the app that trained it: plexus-cli and the GUI write it the same way (RunLog), the
// dashboard and `plexus-cli runs` read it back (read_run, list_runs).
//
//   project.plexus   the project as it trained, without the editor's view (written atomically
//                    at the start; after an edit made while paused, the edited project, the
//                    one the checkpoints hold a model of: see RunLog::edited)
//   project-before-edit-<n>.plexus   the project as it was before the run's n-th edit
//   launch.plexus    the project as handed to the processes that write the folder, when the
//                    GUI started them (kLaunchProjectFile)
//   metrics.jsonl    a header line, then one line per event exactly as `plexus-cli train
//                    --metrics` writes them (train/event_json.h), each flushed at once, so an
//                    app that dies leaves a readable prefix; the last line says how it ended
//
// The header: {"event":"run","format":1,"started":"2025-06-01T14:03:12.345+02:00",
//   "project":"/path/to/mnist_mlp.plexus" (or "" when not saved),"device":"cpu, 2 threads",
//   "classification":true,"first_epoch":1,"train_subset":0,"settings":{the project's
//   "training" keys, epochs = the number of the last epoch},"continued_from":null or the
//   folder of the run this one continues, and only when the run started from the matching
//   tensors of a file (train/partial_load.h) "init_from":"/path/to/final.safetensors"}
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "session/run.h"
#include "session/run_folder.h"
#include "train/events.h"
#include "train/trainer.h"

namespace plexus::session {

inline constexpr const char* kRunLogFile = "metrics.jsonl";
inline constexpr const char* kRunProjectFile = "project.plexus";
// The project a front end handed to the processes it started to write the folder (the GUI's
// Train with N Processes: plexus-cli needs a file, the open project need not be saved).
inline constexpr const char* kLaunchProjectFile = "launch.plexus";
inline constexpr int kRunLogFormat = 1;
// read_run keeps at most this many batch points for the curves, evenly spread.
inline constexpr size_t kRunBatchPoints = 4000;

struct RunHeader {
  std::string started;  // local time, ISO 8601 with milliseconds and offset; RunLog sets it
  std::string project;  // the project file ("" for a project not saved)
  std::string device;   // session::device_text
  bool classification = true;
  int first_epoch = 1;  // above 1 when the run continues another
  int64_t train_subset = 0;          // 0 = every training example
  graph::TrainingSettings settings;  // as used; settings.epochs is the number of the last epoch
  std::string continued_from;        // the run folder this run continues; "" for none
  std::string init_from;             // the file whose matching tensors initialised it; "" for none
};

struct RunRecord;

// "2025-06-01T14:03:12.345+02:00": local time, as QDateTime and Python read ISO 8601 (RunHeader::started).
std::string local_time_text(std::chrono::system_clock::time_point when);

// The header of `run` (from make_training_run or make_continued_run) of the project in
// `project_file` ("" when not saved), built with `options`, continuing `continued` (or nullptr).
RunHeader run_header(const TrainingRun& run, const std::filesystem::path& project_file, const RunOptions& options,
                     const RunRecord* continued);

class RunLog {
 public:
  // Creates `folder`, writes project.plexus and the header of metrics.jsonl (header.started is
  // now). Refuses (IoError) a folder that already holds a metrics.jsonl: a run is never
  // written over. An empty folder writes nothing.
  RunLog(std::filesystem::path folder, const graph::Graph& project, RunHeader header);
  // Goes on writing the log of an interrupted run (session/resume.h): cuts `folder`/metrics.jsonl
  // back to its first `keep_bytes` bytes, the length its `last` checkpoint recorded (the lines
  // written after that checkpoint, a torn last one included, are dropped: the resumed run writes
  // them again), and appends. IoError when the log is missing or shorter than that.
  struct Appending {
    uint64_t keep_bytes = 0;
  };
  RunLog(std::filesystem::path folder, bool classification, Appending appending);
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  // On the training thread, for every event: batches, epochs and the test are written at once.
  // Finished and Failed are not: the end line is end()'s, written after the final checkpoint
  // (see finish_run) so that a log that says "finished" has its final.safetensors.
  void record(const train::Event& event);
  // An edit made while paused (session/run_edit.h), once the edited model is ready: the project
  // as it trained so far is kept as project-before-edit-<n>.plexus, project.plexus becomes
  // `edited`, and the edit's line follows. On an error (IoError) the folder is as before.
  void edited(const graph::Graph& edited, const train::GraphEdit& edit);
  // The last line: finished (completed or stopped) or failed, from the run's result.
  void end(const train::RunResult& result);

  const std::filesystem::path& folder() const { return folder_; }
  // The log's length so far, every line flushed: what a `last` checkpoint records.
  uint64_t bytes() const { return bytes_; }

 private:
  void write_line(const std::string& line);

  std::filesystem::path folder_;
  bool classification_ = true;
  int edits_ = 0;
  uint64_t bytes_ = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
};

// The end of a run, in the order that keeps its folder honest: final.safetensors (unless the
// run failed), then the end line of metrics.jsonl. When the checkpoint cannot be saved the log
// ends with a failed line saying so, and the error propagates. Returns the checkpoint's path
// ("" when none was saved).
std::filesystem::path finish_run(RunCheckpoints& checkpoints, RunLog& log, const train::RunResult& result);

enum class RunStatus {
  Completed,
  Stopped,
  StoppedEarly,  // early stopping ended it: finished, like Completed (RunRecord::best_epoch)
  Failed,
  Incomplete,  // no end line: the app stopped before the run did
};
// "completed", "stopped", "stopped early", "failed", "incomplete"
std::string to_string(RunStatus status);

// A past run as its folder tells it.
struct RunRecord {
  std::filesystem::path folder;
  RunHeader header;
  std::vector<train::EpochEnd> epochs;  // every epoch line, in order
  // At most kRunBatchPoints batch lines, evenly spread over the run, the last one included.
  std::vector<train::BatchEnd> batches;
  int64_t batch_lines = 0;              // all of them
  std::optional<train::EpochEnd> test;  // the final model on the test split
  std::vector<std::string> notices;     // how the run executed (train::Notice), in order
  // The last per-node statistics sample, with the health issues standing after it.
  std::optional<train::NodeStats> node_stats;
  std::vector<train::GraphEdit> edits;  // edits made while paused, in order
  RunStatus status = RunStatus::Incomplete;
  std::string message;       // why it failed; for an incomplete run, what the log's end lacks
  int epochs_completed = 0;  // the number of its last completed epoch (first_epoch - 1: none)
  int best_epoch = 0;        // StoppedEarly: the epoch early stopping kept
  double seconds = 0;        // of training, from the end line
  std::optional<double> best_eval_accuracy, best_eval_loss;  // over its validated epochs
  bool has_best = false, has_final = false;                  // its checkpoints on disk
  bool has_last = false;  // last.safetensors: where an interrupted run resumes (session/resume.h)
};

// For people: to_string(record.status), and for a run stopped early "stopped early at epoch 7;
// best epoch 4".
std::string status_text(const RunRecord& record);

// A run log read a piece at a time, as it grows: how the GUI follows a run that another process
// writes (plexus-cli under mpirun, a job on a cluster's shared file system), and how read_run
// reads a finished one, with the same checks. Only whole lines count: a last line without its
// newline waits for the rest of it. The events come back as the trainer reported them, with
// what the log leaves out for being in its header filled in (BatchEnd::epochs, EpochEnd::epochs).
class RunLogReader {
 public:
  explicit RunLogReader(std::filesystem::path log);  // the file, for messages ("<log>:7: ...")

  using Sink = std::function<void(train::Event)>;
  // Hands `sink` the events of the lines `bytes` completes, in order; the header line gives
  // none (header()). A malformed line is a DataError naming the file and the line, as
  // read_run's, after the events of the lines before it.
  void feed(std::string_view bytes, const Sink& sink);
  // At the end of a file that is all there: the waiting line's event when it lacks only its
  // newline; a line cut short is left out (cut_short()), but for the header (a DataError).
  void finish(const Sink& sink);

  const std::optional<RunHeader>& header() const { return header_; }
  bool ended() const { return ended_; }          // its finished or failed line has come
  bool cut_short() const { return cut_short_; }  // finish() left out a line cut short
  int64_t lines() const { return lines_; }       // the whole lines read
  // The number of the last epoch line (the header's first_epoch - 1 before one; 0 before the header).
  int last_epoch() const { return last_epoch_; }

 private:
  std::optional<train::Event> line(std::string_view text, bool whole);

  std::filesystem::path log_;
  std::string waiting_;  // the start of a line whose newline has not come
  std::optional<RunHeader> header_;
  bool ended_ = false, cut_short_ = false;
  int64_t lines_ = 0;
  int last_epoch_ = 0;
};

// Reads `folder`/metrics.jsonl. A last line cut short (an app that died mid-write) is left out
// and the run is incomplete; anything else malformed — no header, a line that is not JSON, an
// unknown event or key, a value of the wrong type, epochs out of order, a line after the end —
// is a DataError naming the file and the line. IoError when there is no log to read.
RunRecord read_run(const std::filesystem::path& folder);

// The header of `folder`/metrics.jsonl alone: what a run that is still being written says of
// itself. IoError and DataError as read_run's.
RunHeader read_run_header(const std::filesystem::path& folder);

// The run folders (those with a metrics.jsonl) of a saved project, in runs_folder(project_file),
// newest first. None for a project not saved or without runs.
std::vector<std::filesystem::path> list_runs(const std::filesystem::path& project_file);

// Deletes a run folder: the files a run writes (metrics.jsonl, project.plexus and the projects
// before its edits, launch.plexus, the checkpoints, and temporaries of their atomic saves), then
// the folder itself when nothing else is in it.
// Returns false when the folder was kept because it holds other files (they are untouched).
// IoError when a file cannot be removed, or when `folder` is not a run folder (no
// metrics.jsonl): nothing is removed then.
bool delete_run(const std::filesystem::path& folder);

}  // namespace plexus::session
