#pragma once
// Where a training run keeps its checkpoints, and when it writes them: the one policy of the GUI
// and of `plexus-cli train FILE --save-run`, so both leave the same folder:
//
//   <project folder>/<project name>.runs/<yyyyMMdd-HHmmss-zzz>/
//       best.safetensors    model + optimizer whenever the validation score improves
//       final.safetensors   model + optimizer at the end (completed or stopped)
//       last.safetensors    where the run stands, to resume it after a crash (session/resume.h):
//                           at every epoch's end, every checkpoint_minutes at a batch boundary,
//                           and when the run is stopped
//       project.plexus, metrics.jsonl   the project and every event (session/run_log.h)
//
// Each is a train::save_checkpoint file (tensors "model.<node>.<param>", "optim.*") whose
// metadata holds "checkpoint" (best or final), "project" (the project's text, without the
// editor's view, so the checkpoint alone says what it is a checkpoint of), what using the model
// needs without the dataset (write_model_metadata: input shape, normalisation, class names),
// "epoch", "epochs", the losses and accuracies of that epoch (train_*, validation as eval_*),
// and for final "cancelled" and, after a completed run, the test figures (test_loss,
// test_accuracy). The best epoch is chosen on the validation split, never the test split.
// Saves are atomic.
#include <chrono>
#include <filesystem>
#include <limits>
#include <map>
#include <string>

#include "graph/graph.h"
#include "nn/module.h"
#include "optim/optimizer.h"
#include "session/run.h"
#include "train/trainer.h"

namespace plexus::session {

// The folder a project's runs go in: `<folder of project_file>/<its name>.runs/`, or the
// environment variable PLEXUS_RUNS_DIR when set (tests and scripts); "" for a project not saved
// yet (empty project_file) without PLEXUS_RUNS_DIR. A project whose folder this user cannot
// write (and that has no runs folder there yet), such as an installed example, keeps its runs
// in `$XDG_DATA_HOME/plexus/runs/<the folder's absolute path>/<its name>.runs/` (else
// `~/.local/share/...`).
std::filesystem::path runs_folder(const std::filesystem::path& project_file);

// A fresh folder name for a run started at `when` (local time, to the millisecond), inside
// runs_folder(project_file), or inside `unsaved_root` for a project not saved yet. Nothing is
// created.
std::filesystem::path new_run_folder(const std::filesystem::path& project_file, const std::filesystem::path& unsaved_root,
                                     std::chrono::system_clock::time_point when = std::chrono::system_clock::now());

class RunCheckpoints {
 public:
  // `folder` is created when missing; an empty folder saves nothing.
  // `run` (its model, optimizer, normalisation) must outlive this object.
  RunCheckpoints(std::filesystem::path folder, const graph::Graph& project, const TrainingRun& run);

  // After an epoch: saves best.safetensors when the epoch scores better than every one before
  // (validation accuracy, or minus the validation loss for a regression; the training figures
  // without a held-out split; with early stopping on, its monitored figure, better by more than
  // its min_delta) and returns its path; "" when not better.
  std::filesystem::path epoch_ended(const train::EpochEnd& epoch);
  // At the end of a run that did not fail: saves final.safetensors and returns its path.
  std::filesystem::path finish(const train::RunResult& result);
  // The run goes on with the model of `run` (which must outlive this object), the edited
  // `project` (an edit made while paused, session/run_edit.h). The next epoch's checkpoint is
  // saved as best.safetensors whatever its score, so that both checkpoints hold a model of the
  // project.plexus the run folder then has.
  void edited(const graph::Graph& project, const TrainingRun& run);
  // At a boundary between two optimizer steps (train::TrainerOptions::at_boundary): saves
  // last.safetensors when it is due — at every epoch's end, when the run stops, and at the first
  // batch boundary checkpoint_minutes (the run's setting) after the previous save — and returns
  // its path ("" when not due). It records `at` (session/resume.h says how), the best score so
  // far and `log_bytes`, the run log's length, which resuming cuts the log back to.
  std::filesystem::path boundary(const train::RunPosition& at, train::Boundary kind, uint64_t log_bytes);
  // A resumed run's: the best score before it, so that best.safetensors is replaced only by an
  // epoch better than every one of the whole run.
  void resume(double best_score) { best_ = best_score; }
  double best_score() const { return best_; }

  const std::filesystem::path& folder() const { return folder_; }

 private:
  double score(const train::EpochEnd& e) const;
  std::filesystem::path save(const std::string& kind, int epoch, const train::EpochEnd* e,
                             std::map<std::string, std::string> meta, const nn::NamedTensors& carried = {}) const;
  // The folder is still there and writable: a FILE* to a deleted log writes on silently.
  void check_folder() const;

  std::filesystem::path folder_;
  const nn::Module* model_;
  const optim::Optimizer* optimizer_;
  bool classification_;
  train::EarlyStopping stopping_;  // the run's: when on, its monitor chooses the best epoch
  train::Metadata model_meta_;  // the project and write_model_metadata's keys
  double best_ = -std::numeric_limits<double>::infinity();
  double checkpoint_seconds_ = 600;  // the run's checkpoint_minutes; 0: at epoch ends only
  int64_t batches_ = 0;              // per epoch, for resume_point_text
  std::chrono::steady_clock::time_point last_saved_ = std::chrono::steady_clock::now();
};

}  // namespace plexus::session
