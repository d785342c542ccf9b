#pragma once
// The problem the suites of partial loading (train/partial_load.h), of a run edited while paused
// (session/run_edit.h) and of the nodes' own learning rates (session/optimizer_groups.h) share:
// 200 generated digits (40 of them for testing) in a temporary folder and mlp_fixture.h's pair of
// MLPs on them, made once per suite; and what those suites read off a model and a run.
#include <filesystem>
#include <string>
#include <vector>

#include "data/synthetic_digits.h"
#include "graph/graph.h"
#include "nn/module.h"
#include "optim/optimizer.h"
#include "session/run.h"
#include "session/run_folder.h"
#include "session/run_log.h"
#include "support/check.h"
#include "support/mlp_fixture.h"
#include "support/temp_dir.h"
#include "train/trainer.h"

namespace plexus::testing {

struct PartialLoadFixture {
  TempDir tmp;
  std::filesystem::path data = tmp.file("digits");
  graph::Graph a;  // fc1(32) -> fc2(16) -> fc3(10), Adam at 0.01, one epoch of 9 steps
  graph::Graph b;  // a with fc2 wider (24) and fc3 replaced by a new node "head"

  PartialLoadFixture() {
    data::write_synthetic_digits(data, 200, 40);
    a = partial_load_mlp(data.string(), 16, "fc3");
    b = partial_load_mlp(data.string(), 24, "head");
  }
};

// The suite's fixture, made on first use, and its two graphs.
inline const PartialLoadFixture& partial_load_fixture() {
  static const PartialLoadFixture f;
  return f;
}
inline const graph::Graph& mlp_a() { return partial_load_fixture().a; }
inline const graph::Graph& mlp_b() { return partial_load_fixture().b; }

// The values of the model's state tensor `name` (none when it has no such tensor).
inline std::vector<float> values(const nn::Module& m, const std::string& name) {
  for (const auto& [n, t] : m.state())
    if (n == name) return t.to_vector();
  return {};
}

// The model's parameter `name` itself (undefined when it has no such parameter).
inline Tensor param(const nn::Module& m, const std::string& name) {
  for (const auto& [n, t] : m.named_parameters())
    if (n == name) return t;
  return {};
}

// The run's epochs, with its schedule, as the front ends train them.
inline train::RunResult train_epochs(session::TrainingRun& run) {
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  t.set_scheduler(run.scheduler.get());
  return t.run();
}

// `g` trained as the front ends keep a run: its folder (metrics.jsonl, project.plexus, the final
// checkpoint), for continuing it.
inline void train_into_folder(const std::filesystem::path& folder, const graph::Graph& g) {
  session::TrainingRun run = session::make_training_run(g);
  session::RunLog log(folder, g, session::run_header(run, "", {}, nullptr));
  session::RunCheckpoints checkpoints(folder, g, run);
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  t.set_callback([&](const train::Event& e) { log.record(e); });
  session::finish_run(checkpoints, log, t.run());
}

// Two optimizers hold the same state for a parameter: the step count and every tensor.
inline void expect_same_state(const optim::ParamState* a, const optim::ParamState* b) {
  VERIFY(a && b);
  COMPARE(a->step, b->step);
  COMPARE(a->tensors.size(), b->tensors.size());
  for (const auto& [name, t] : a->tensors) COMPARE(b->find(name)->to_vector(), t.to_vector());
}

}  // namespace plexus::testing
