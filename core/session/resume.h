#pragma once
// Resuming an interrupted run in its own folder: a run killed (a crash, kill -9, a power cut),
// stopped, or failed on a full disk goes on from its `last` checkpoint as if it had never
// stopped. `plexus-cli train --resume RUN_DIR` and the GUI's "Resume" both start here.
//
// last.safetensors (session/run_folder.h writes it, atomically) is a train::save_checkpoint file
// of the model, the optimizer state and the carried recurrent state, whose metadata holds, beside
// best and final's keys ("checkpoint": "last"):
//   resume.epoch, resume.batch   the position: batches of that epoch trained (a run killed
//                                after its last epoch resumes in that epoch: the final checkpoint
//                                comes right after it)
//   resume.batches               batches per epoch
//   resume.so_far                the epoch's figures so far (train::EpochSoFar), as JSON
//   resume.elapsed, resume.batches_done   the ETA's
//   resume.generator             the default generator's state (dropout), as JSON
//   resume.stopping              early stopping's state (best, best_epoch, bad_epochs), as JSON,
//                                when early stopping has seen an epoch
//   resume.plateau               a plateau schedule's state (best, bad_epochs, cooldown_left,
//                                last_epoch, lrs), as JSON
//   resume.best_score            the best epoch's score so far (RunCheckpoints)
//   resume.log_bytes             metrics.jsonl's length when `last` was written
//   resume.saved                 when, local time (ISO 8601, as RunHeader::started)
// The data order needs nothing more: shuffling and augmentation are seeded by the run's seed,
// the epoch and the batch (data/dataloader.h), the learning-rate schedule by the epoch.
//
// A run resumed from `last` ends bit for bit as one that never stopped (weights, optimizer,
// every event's figures but the timings), and its metrics.jsonl holds every event once: the
// lines written after `last` are cut off, and written again by the resumed run.
#include <filesystem>
#include <optional>
#include <string>

#include "graph/graph.h"
#include "session/run.h"
#include "session/run_folder.h"
#include "session/run_log.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace plexus::session {

inline constexpr const char* kLastCheckpointFile = "last.safetensors";

// Where an interrupted run stands, as its folder says.
struct ResumePoint {
  std::filesystem::path folder;
  int epoch = 1;                             // the epoch in progress
  int64_t batch = 0;                         // batches of it trained
  int64_t batches = 0;                       // batches per epoch
  int epochs = 0;                            // the number of the last epoch
  std::string saved;                         // when `last` was written: local time, ISO 8601
  RunStatus status = RunStatus::Incomplete;  // the log as it stands: incomplete (killed), stopped, failed
  std::string message;                       // a failed run's reason
};

// Where the run in `folder` resumes from; std::nullopt when it cannot be resumed: it completed,
// or it has no last.safetensors (a run of an older Plexus, or one killed before its first save).
// IoError / DataError when the folder's log or `last` cannot be read (a torn last log line is
// fine).
std::optional<ResumePoint> find_resume_point(const std::filesystem::path& folder);

// The same, but a run that cannot be resumed is a ValueError saying why ("the run in DIR has
// completed: nothing to resume; continue it with --continue", "the run in DIR has no
// last.safetensors to resume from").
ResumePoint read_resume_point(const std::filesystem::path& folder);

// For people: "interrupted at epoch 7, batch 212 of 469" (stopped, failed: "stopped at ...",
// "failed at ...").
std::string resume_point_text(const ResumePoint& point);

// The resume.* keys of `last` for `at` (above), and `at` back from them (DataError naming
// `where` and the key when one is missing or malformed). RunCheckpoints::boundary writes them.
train::Metadata position_metadata(const train::RunPosition& at);
train::RunPosition position_from_metadata(const train::Metadata& meta, const std::string& where);

struct ResumedRun {
  // Built as make_training_run builds it from the folder's project.plexus and the header's
  // settings, then with `last` loaded: the model, the optimizer state, the schedule at the
  // epoch, and trainer_options.first_epoch and resume_at (with the generator and carried
  // state) set, so a train::Trainer built from it goes on where `last` was saved.
  TrainingRun run;
  graph::Graph project;  // the folder's project.plexus
  RunHeader header;      // its log's
  ResumePoint point;
  double best_score = 0;   // for RunCheckpoints::resume
  uint64_t log_bytes = 0;  // for RunLog's Appending
};

// The run in `folder`, ready to go on: read_resume_point's checks (ValueError), then the
// dataset (found as the original project found it: relative paths next to header.project) and
// the checkpoint (IoError naming a tensor that does not fit). `options` gives the data-parallel
// shard, and project_dir for a project never saved; train_subset and, for a saved project,
// project_dir come from the header. A data-parallel rank but 0 (options.shard > 0) skips the
// checks of the log, which rank 0 makes and then cuts back while the others start: every rank
// loads the same `last`.
ResumedRun make_resumed_run(const std::filesystem::path& folder, RunOptions options = {});

// Opens the folder of `resumed` for writing again: `log` is emplaced appending to metrics.jsonl
// (cut back to where `last` left it), `checkpoints` with the best score so far, and
// resumed.run.trainer_options.at_boundary saves `last` through them. Both must outlive the run.
void reopen_run_folder(ResumedRun& resumed, std::optional<RunLog>& log, std::optional<RunCheckpoints>& checkpoints);

// A new run's `last` checkpoints: run.trainer_options.at_boundary saves them through
// `checkpoints`, recording `log`'s length. Both must outlive the run.
void keep_last_checkpoint(TrainingRun& run, RunCheckpoints& checkpoints, const RunLog& log);

}  // namespace plexus::session
