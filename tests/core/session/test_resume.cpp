// Resuming a run from its folder's `last` checkpoint (session/resume.h) in a fresh Trainer, as
// another process would: the run ends bit for bit as one never stopped (dropout, augmentation,
// the recurrent state carried across batches), its log holds every event once, and a full disk
// while any of the run's files is written stops the run, keeps the previous `last` and leaves a
// run that resumes.
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include "data/synthetic_digits.h"
#include "graph/dataset_params.h"
#include "graph/project.h"
#include "io/atomic_file.h"
#include "io/safetensors.h"
#include "session/resume.h"
#include "session/run_log.h"
#include "support/check.h"
#include "support/mlp_fixture.h"
#include "support/same_run.h"
#include "support/suite_dir.h"
#include "support/test_support.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::session;
using plexus::testing::message_of;
using plexus::testing::suite_subdir;
namespace fs = std::filesystem;

namespace {

// A character LSTM with dropout that carries its state across batches.
graph::Graph lstm_project(const fs::path& dir) {
  std::string text;
  for (int i = 0; i < 400; ++i) text += i % 9 == 8 ? '\n' : char('a' + (i * 7 + i / 9) % 8);
  std::ofstream(dir / "t.txt", std::ios::binary) << text;
  graph::Graph g = graph::parse_project(R"({"format": 1, "nodes": [
    {"id": "in", "type": "Input", "params": {}},
    {"id": "emb", "type": "Embedding", "params": {"num_embeddings": 9, "embedding_dim": 4}},
    {"id": "lstm", "type": "LSTM", "params": {"hidden_size": 8}},
    {"id": "drop", "type": "Dropout", "params": {"p": 0.3}},
    {"id": "out", "type": "Linear", "params": {"out_features": 9}},
    {"id": "loss", "type": "CrossEntropy", "params": {}}],
  "edges": [
    {"from": ["in", "x"], "to": ["emb", "input"]}, {"from": ["emb", "output"], "to": ["lstm", "input"]},
    {"from": ["lstm", "output"], "to": ["drop", "input"]}, {"from": ["drop", "output"], "to": ["out", "input"]},
    {"from": ["out", "output"], "to": ["loss", "input"]}, {"from": ["in", "y"], "to": ["loss", "target"]}],
  "dataset": {"kind": "text", "path": "t.txt", "seq_len": 6},
  "training": {"optimizer": "adam", "lr": 0.01, "batch_size": 8, "epochs": 3, "validation_fraction": 0.2,
               "carry_state": true, "schedule": "step", "step_size": 1, "gamma": 0.5}})",
                                        "lstm.plexus");
  return g;
}

// Generated digits through an MLP, the training pictures shifted at random (augmentation).
graph::Graph digits_project(const fs::path& dir) {
  if (!fs::exists(dir / "digits")) data::write_synthetic_digits(dir / "digits", 300, 60);
  graph::Graph g = testing::mlp_graph((dir / "digits").string(), {{"fc1", 16}, {"fc2", 10}});
  graph::set_dataset_value(g.dataset, "augment.shift", int64_t(2));
  g.training.optimizer = "adam";
  g.training.lr = 0.01;
  g.training.batch_size = 30;
  g.training.epochs = 2;
  g.training.seed = 5;
  return g;
}

// What a test does to a run between its events: stop it, break a write.
using Meddle = std::function<void(const train::Event&, train::Trainer&)>;

// Trains `run` into `log` and `checkpoints` as plexus-cli does, meddled with; the result.
train::RunResult train_into(TrainingRun& run, RunLog& log, RunCheckpoints& checkpoints, const Meddle& meddle) {
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  t.set_scheduler(run.scheduler.get());
  t.set_test_loader(run.test_loader.get());
  t.set_callback([&](const train::Event& e) {
    if (meddle) meddle(e, t);
    log.record(e);
    if (const auto* end = std::get_if<train::EpochEnd>(&e)) checkpoints.epoch_ended(*end);
  });
  train::RunResult r = t.run();
  try {
    finish_run(checkpoints, log, r);
  } catch (const IoError& e) {
    r.status = train::RunStatus::Failed;
    r.message = e.what();
  }
  return r;
}

// A new run of `g` in `folder`, `last` saved every `minutes`.
train::RunResult train_new(const fs::path& folder, graph::Graph g, const fs::path& dir, double minutes,
                           const Meddle& meddle = {}) {
  g.training.checkpoint_minutes = minutes;
  TrainingRun run = make_training_run(g, {.project_dir = dir});
  RunLog log(folder, g, run_header(run, "", {.project_dir = dir}, nullptr));
  RunCheckpoints checkpoints(folder, g, run);
  keep_last_checkpoint(run, checkpoints, log);
  return train_into(run, log, checkpoints, meddle);
}

train::RunResult resume(const fs::path& folder, const fs::path& dir, const Meddle& meddle = {}) {
  manual_seed(12345);  // whatever this process drew before: resuming restores the run's generator
  ResumedRun resumed = make_resumed_run(folder, {.project_dir = dir});
  std::optional<RunLog> log;
  std::optional<RunCheckpoints> checkpoints;
  reopen_run_folder(resumed, log, checkpoints);
  return train_into(resumed.run, *log, *checkpoints, meddle);
}

// The two agree (tests/support/same_run.h), or the check fails saying where not.
void same_tensors(const fs::path& a, const fs::path& b) {
  const std::string d = testing::tensor_difference(a, b);
  VERIFY2(d.empty(), d);
}

void same_log(const fs::path& a, const fs::path& b) {
  const std::string d = testing::log_difference(a, b);
  VERIFY2(d.empty(), d);
}

// Stops the run after batch `batch` of epoch `epoch` (a Stop boundary saves `last` there).
Meddle stop_at(int epoch, int64_t batch) {
  return [=](const train::Event& e, train::Trainer& t) {
    if (const auto* b = std::get_if<train::BatchEnd>(&e); b && b->epoch == epoch && b->batch == batch) t.cancel();
  };
}

// A run stopped mid-epoch, then resumed in a fresh Trainer, against one never stopped.
void stopped_and_resumed_equals_uninterrupted(const std::string& name, const graph::Graph& g, const fs::path& dir,
                                              int epoch, int64_t batch) {
  const fs::path whole = dir / (name + "-whole"), parts = dir / (name + "-parts");
  COMPARE(int(train_new(whole, g, dir, 10).status), int(train::RunStatus::Completed));
  COMPARE(int(train_new(parts, g, dir, 10, stop_at(epoch, batch)).status), int(train::RunStatus::Cancelled));
  const ResumePoint p = read_resume_point(parts);
  COMPARE(p.epoch, epoch);
  COMPARE(p.batch, batch);
  COMPARE(to_string(p.status), std::string("stopped"));
  VERIFY_CONTAINS(resume_point_text(p),
                  "stopped at epoch " + std::to_string(epoch) + ", batch " + std::to_string(batch));
  COMPARE(int(resume(parts, dir).status), int(train::RunStatus::Completed));
  same_tensors(whole / "final.safetensors", parts / "final.safetensors");
  same_tensors(whole / "best.safetensors", parts / "best.safetensors");
  same_log(whole, parts);
}

}  // namespace

TEST(aCarriedStateAndDropoutRunResumesBitForBit) {
  const fs::path dir = suite_subdir("lstm");
  stopped_and_resumed_equals_uninterrupted("lstm", lstm_project(dir), dir, 2, 3);
}

TEST(anAugmentedRunResumesBitForBit) {
  const fs::path dir = suite_subdir("digits");
  stopped_and_resumed_equals_uninterrupted("digits", digits_project(dir), dir, 1, 4);
}

// Early stopping and a plateau schedule carry state from epoch to epoch (the best, the bad
// epochs, the lowered rate): a run stopped mid-way resumes with it and stops early, at the same
// epoch with the same best, as the run never stopped.
TEST(earlyStoppingAndAPlateauResumeBitForBit) {
  const fs::path dir = suite_subdir("stopping");
  graph::Graph g = digits_project(dir);
  g.training.epochs = 30;
  g.training.schedule = "plateau";
  g.training.plateau_patience = 0;
  g.training.plateau_factor = 0.5;
  g.training.monitor = "val_accuracy";
  g.training.early_stopping_patience = 3;
  g.training.early_stopping_min_delta = 0.02;
  stopped_and_resumed_equals_uninterrupted("stopping", g, dir, 3, 4);
  const RunRecord whole = read_run(dir / "stopping-whole");
  COMPARE(to_string(whole.status), std::string("stopped early"));
  VERIFY2(whole.epochs_completed < 30, "never stopped early: the test shows nothing");
  COMPARE(whole.epochs_completed, whole.best_epoch + 3);
  COMPARE(status_text(whole), "stopped early at epoch " + std::to_string(whole.epochs_completed) + "; best epoch " +
                                  std::to_string(whole.best_epoch));
  // best.safetensors is the epoch early stopping kept; the plateau lowered the rate on the way.
  COMPARE(io::read_safetensors_header(dir / "stopping-whole" / "best.safetensors").metadata.at("epoch"),
          std::to_string(whole.best_epoch));
  VERIFY(whole.epochs.back().lr < g.training.lr);
  VERIFY(!find_resume_point(dir / "stopping-whole"));  // finished: nothing to resume
}

TEST(aTornLogLineAfterLastIsCutAndEveryEventComesOnce) {
  const fs::path dir = suite_subdir("torn");
  const graph::Graph g = digits_project(dir);
  COMPARE(int(train_new(dir / "whole", g, dir, 10).status), int(train::RunStatus::Completed));
  // `last` every batch; the run "crashes" mid-line: a stop, then a torn line appended.
  train_new(dir / "parts", g, dir, 1e-9, stop_at(2, 2));
  std::ofstream(dir / "parts" / kRunLogFile, std::ios::app) << R"({"event":"batch","epoch":2,"ba)";
  COMPARE(int(resume(dir / "parts", dir).status), int(train::RunStatus::Completed));
  same_tensors(dir / "whole" / "final.safetensors", dir / "parts" / "final.safetensors");
  same_log(dir / "whole", dir / "parts");
}

TEST(aCompletedRunOrOneWithoutLastIsNotResumed) {
  const fs::path dir = suite_subdir("refused");
  const graph::Graph g = digits_project(dir);
  train_new(dir / "done", g, dir, 10);
  VERIFY(!find_resume_point(dir / "done"));
  VERIFY_CONTAINS(message_of<ValueError>([&] { read_resume_point(dir / "done"); }), "has completed: nothing to resume");
  train_new(dir / "old", g, dir, 10, stop_at(1, 2));
  fs::remove(dir / "old" / kLastCheckpointFile);
  VERIFY_CONTAINS(message_of<ValueError>([&] { read_resume_point(dir / "old"); }), "has no last.safetensors");
}

// A full disk while each kind of file is written: the run stops saying which file and why, the
// `last` before it is intact, and the run resumes to the uninterrupted run's end.
TEST(aFullDiskStopsTheRunAndItResumesOnceThereIsSpace) {
  const fs::path dir = suite_subdir("full");
  const graph::Graph g = digits_project(dir);
  COMPARE(int(train_new(dir / "whole", g, dir, 10).status), int(train::RunStatus::Completed));
  struct Case {
    std::string name, file;
    io::WriteStep step;
    std::function<bool(const train::Event&)> when;  // the event before whose write the disk is full
  };
  const auto batch = [](int epoch, int64_t b) {
    return [=](const train::Event& e) {
      const auto* x = std::get_if<train::BatchEnd>(&e);
      return x && x->epoch == epoch && x->batch == b;
    };
  };
  const std::vector<Case> cases = {
      {"last", "last.safetensors", io::WriteStep::Write, batch(1, 5)},
      {"metrics", "metrics.jsonl", io::WriteStep::Append, batch(2, 3)},
      {"best", "best.safetensors", io::WriteStep::Fsync,
       [](const train::Event& e) { return std::holds_alternative<train::EpochEnd>(e); }},
      {"final", "final.safetensors", io::WriteStep::Write,
       [](const train::Event& e) { return std::holds_alternative<train::TestEnd>(e); }},
  };
  for (const Case& c : cases) {
    const fs::path folder = dir / c.name;
    std::string last_before;
    const train::RunResult r = train_new(folder, g, dir, 1e-9, [&](const train::Event& e, train::Trainer&) {
      if (!c.when(e)) return;
      last_before = testing::read_all(folder / kLastCheckpointFile);
      // The final checkpoint comes after the test's event: the disk fills up until then.
      io::fail_next_write_step(c.step, ENOSPC);
    });
    COMPARE(int(r.status), int(train::RunStatus::Failed));
    VERIFY_CONTAINS(r.message, c.file);
    VERIFY_CONTAINS(r.message, "No space left on device");
    COMPARE(testing::read_all(folder / kLastCheckpointFile), last_before);
    VERIFY2(find_resume_point(folder), c.name + ": the run cannot be resumed");
    COMPARE(int(resume(folder, dir).status), int(train::RunStatus::Completed));
    same_tensors(dir / "whole" / "final.safetensors", folder / "final.safetensors");
    same_log(dir / "whole", folder);
  }
}

// A run folder deleted under a running run: the next `last` says so, naming the folder.
TEST(aRunFolderDeletedUnderTheRunIsReported) {
  const fs::path dir = suite_subdir("gone");
  const fs::path folder = dir / "run";
  const train::RunResult r =
      train_new(folder, digits_project(dir), dir, 1e-9, [&](const train::Event& e, train::Trainer&) {
        if (const auto* b = std::get_if<train::BatchEnd>(&e); b && b->epoch == 1 && b->batch == 2)
          fs::remove_all(folder);
      });
  COMPARE(int(r.status), int(train::RunStatus::Failed));
  VERIFY_CONTAINS(r.message, "the run folder " + folder.string() + " is gone");
}
