#include "session/run_folder.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <unistd.h>

#include "graph/project.h"
#include "session/resume.h"
#include "train/checkpoint.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::session {
namespace fs = std::filesystem;

fs::path runs_folder(const fs::path& project_file) {
  if (const char* forced = std::getenv("PLEXUS_RUNS_DIR"); forced && *forced) return forced;
  if (project_file.empty()) return {};
  const std::string name = project_file.stem().string() + ".runs";
  const fs::path beside = project_file.parent_path() / name;
  const fs::path folder = project_file.parent_path().empty() ? fs::path(".") : project_file.parent_path();
  // A project in a folder this user cannot write (an installed example in /usr/share): its
  // runs go under the user's data folder, at the project folder's absolute path, so that each
  // such project keeps runs of its own and finds them again.
  if (fs::exists(beside) || access(folder.c_str(), W_OK) == 0) return beside;
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const char* home = std::getenv("HOME");
  const fs::path data = xdg && *xdg ? fs::path(xdg) : home && *home ? fs::path(home) / ".local" / "share" : fs::path();
  if (data.empty()) return beside;
  return data / "plexus" / "runs" / fs::absolute(folder).lexically_normal().relative_path() / name;
}

fs::path new_run_folder(const fs::path& project_file, const fs::path& unsaved_root,
                        std::chrono::system_clock::time_point when) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
  const std::time_t seconds = std::time_t(ms / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d%02d%02d-%02d%02d%02d-%03d", local.tm_year + 1900, local.tm_mon + 1,
                local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec, int(ms % 1000));
  const fs::path parent = runs_folder(project_file);
  return (parent.empty() ? unsaved_root : parent) / stamp;
}

RunCheckpoints::RunCheckpoints(fs::path folder, const graph::Graph& project, const TrainingRun& run)
    : folder_(std::move(folder)),
      model_(run.compiled.model.get()),
      optimizer_(run.optimizer.get()),
      classification_(run.compiled.classification),
      stopping_(run.trainer_options.early_stopping),
      checkpoint_seconds_(run.settings.checkpoint_minutes * 60),
      batches_(run.train_loader ? run.train_loader->size() : 0) {
  if (folder_.empty()) return;
  fs::create_directories(folder_);
  graph::Graph g = project;
  g.view.clear();  // the editor's view state says nothing about the weights
  model_meta_["project"] = graph::serialize_project(g);
  write_model_metadata(model_meta_, run.data.info, run.normalization, run.class_names, run.feature_names,
                       run.vocabulary, run.preparation.get());
}

fs::path RunCheckpoints::epoch_ended(const train::EpochEnd& e) {
  const double s = score(e);
  // With early stopping, improving as it counts improvements: best is the epoch it keeps.
  const double margin = stopping_.on() ? stopping_.min_delta : 0;
  if (folder_.empty() || !(s > best_ + margin)) return {};
  best_ = s;
  return save("best", e.epoch, &e, {});
}

fs::path RunCheckpoints::finish(const train::RunResult& r) {
  if (folder_.empty()) return {};
  train::Metadata meta{{"cancelled", r.status == train::RunStatus::Cancelled ? "true" : "false"}};
  if (r.test) {
    meta["test_loss"] = shortest_text(r.test->eval_loss);
    if (classification_) meta["test_accuracy"] = shortest_text(r.test->eval_accuracy);
  }
  return save("final", r.epochs_completed, r.history.empty() ? nullptr : &r.history.back(), std::move(meta));
}

void RunCheckpoints::edited(const graph::Graph& project, const TrainingRun& run) {
  model_ = run.compiled.model.get();
  optimizer_ = run.optimizer.get();
  best_ = -std::numeric_limits<double>::infinity();
  if (folder_.empty()) return;
  graph::Graph g = project;
  g.view.clear();
  model_meta_["project"] = graph::serialize_project(g);
}

fs::path RunCheckpoints::boundary(const train::RunPosition& at, train::Boundary kind, uint64_t log_bytes) {
  if (folder_.empty()) return {};
  const auto now = std::chrono::steady_clock::now();
  const bool due = kind != train::Boundary::Batch ||
                   (checkpoint_seconds_ > 0 && std::chrono::duration<double>(now - last_saved_).count() >= checkpoint_seconds_);
  if (!due) return {};
  check_folder();
  train::Metadata meta = position_metadata(at);
  meta["resume.batches"] = std::to_string(batches_);
  meta["resume.best_score"] = shortest_text(best_);
  meta["resume.log_bytes"] = std::to_string(log_bytes);
  meta["resume.saved"] = local_time_text(std::chrono::system_clock::now());
  const fs::path file = save("last", at.epoch - 1, nullptr, std::move(meta), at.carried);
  last_saved_ = std::chrono::steady_clock::now();
  return file;
}

void RunCheckpoints::check_folder() const {
  std::error_code ec;
  if (!fs::is_directory(folder_, ec))
    throw IoError("the run folder " + folder_.string() + " is gone (deleted or moved while the run trained)");
  if (access(folder_.c_str(), W_OK) != 0)
    throw IoError("the run folder " + folder_.string() + " cannot be written: " + std::strerror(errno));
}

// Higher is better.
double RunCheckpoints::score(const train::EpochEnd& e) const {
  if (stopping_.on()) return stopping_.monitor.score(e);
  if (classification_) return e.has_eval ? e.eval_accuracy : e.train_accuracy;
  return -(e.has_eval ? e.eval_loss : e.train_loss);
}

fs::path RunCheckpoints::save(const std::string& kind, int epoch, const train::EpochEnd* e,
                              std::map<std::string, std::string> meta, const nn::NamedTensors& carried) const {
  meta["checkpoint"] = kind;
  meta.insert(model_meta_.begin(), model_meta_.end());
  meta["epoch"] = std::to_string(epoch);
  if (e) {
    meta["epochs"] = std::to_string(e->epochs);
    meta["train_loss"] = shortest_text(e->train_loss);
    if (classification_) meta["train_accuracy"] = shortest_text(e->train_accuracy);
    if (e->has_eval) meta["eval_loss"] = shortest_text(e->eval_loss);
    if (e->has_eval && classification_) meta["eval_accuracy"] = shortest_text(e->eval_accuracy);
  }
  const fs::path file = folder_ / (kind + ".safetensors");
  train::save_checkpoint(file, *model_, optimizer_, meta, carried);  // atomic: temp file, fsync, rename
  return file;
}

}  // namespace plexus::session
