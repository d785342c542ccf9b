// Partial loading (train/partial_load.h) between two known graphs: exactly which tensors are
// kept, reset and ignored, kept ones bit for bit, Adam's state carried for kept parameters and
// fresh for reset ones, from a live model, a checkpoint and a weights file, also between
// optimizers grouped otherwise (session/optimizer_groups.h); and training that goes on fine
// afterwards. A run's graph edited while paused, which loads this way: tests/core/session/test_run_edit.cpp.
#include "support/check.h"

#include <filesystem>

#include "session/run.h"
#include "train/checkpoint.h"
#include "train/partial_load.h"
#include "train/trainer.h"
#include "support/partial_load_fixture.h"
#include "support/test_support.h"

using namespace plexus;
using plexus::testing::expect_same_state;
using plexus::testing::mlp_a;
using plexus::testing::mlp_b;
using plexus::testing::param;
using plexus::testing::train_epochs;
using plexus::testing::values;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> names(const std::vector<train::ResetTensor>& reset) {
  std::vector<std::string> out;
  for (const auto& r : reset) out.push_back(r.name);
  return out;
}

}  // namespace

TEST(liveModelCarriesMatchingNodesExactly) {
  session::TrainingRun a = session::make_training_run(mlp_a());
  COMPARE(train_epochs(a).status, train::RunStatus::Completed);
  session::TrainingRun b = session::make_training_run(mlp_b());
  const std::vector<float> head_init = values(*b.compiled.model, "head.weight");

  const train::CarryReport r = train::carry_over(
      train::live_state(*a.compiled.model, a.optimizer.get(), "before the edit"), *b.compiled.model, b.optimizer.get());
  COMPARE(r.kept, std::vector<std::string>({"fc1.weight", "fc1.bias"}));
  COMPARE(names(r.reset), std::vector<std::string>({"fc2.weight", "fc2.bias", "head.weight", "head.bias"}));
  COMPARE(r.reset[0].shape, Shape({24, 32}));
  COMPARE(*r.reset[0].source_shape, Shape({16, 32}));
  VERIFY(!r.reset[2].source_shape);
  COMPARE(r.ignored.size(), size_t(2));
  COMPARE(r.ignored[0].name, std::string("fc3.weight"));
  VERIFY(!r.ignored[0].node_here);
  COMPARE(r.optimizer_carried, int64_t(2));
  COMPARE(r.text(),
          std::string("kept 2 tensors (optimizer state of 2); reset fc2.weight ([24, 32] here, [16, 32] before the "
                      "edit), fc2.bias ([24] here, [16] before the edit), head.weight ([10, 24] here, none before the "
                      "edit), head.bias ([10] here, none before the edit); ignored fc3.weight (no such node here), "
                      "fc3.bias (no such node here)"));

  // Kept: bit for bit. Reset: as initialised.
  COMPARE(values(*b.compiled.model, "fc1.weight"), values(*a.compiled.model, "fc1.weight"));
  COMPARE(values(*b.compiled.model, "fc1.bias"), values(*a.compiled.model, "fc1.bias"));
  COMPARE(values(*b.compiled.model, "head.weight"), head_init);

  // Adam's state: the kept parameters', copied (not shared); none for the reset ones.
  const optim::ParamState* from = a.optimizer->state(param(*a.compiled.model, "fc1.weight"));
  const optim::ParamState* to = b.optimizer->state(param(*b.compiled.model, "fc1.weight"));
  VERIFY(from && to);
  COMPARE(to->step, from->step);
  COMPARE(to->step, int64_t(9));  // 180 training examples in batches of 20
  COMPARE(to->find("exp_avg")->to_vector(), from->find("exp_avg")->to_vector());
  COMPARE(to->find("exp_avg_sq")->to_vector(), from->find("exp_avg_sq")->to_vector());
  VERIFY(to->find("exp_avg")->storage() != from->find("exp_avg")->storage());
  VERIFY(!b.optimizer->state(param(*b.compiled.model, "fc2.weight")));
  VERIFY(!b.optimizer->state(param(*b.compiled.model, "head.bias")));

  // And training goes on fine.
  const train::RunResult after = train_epochs(b);
  COMPARE(after.status, train::RunStatus::Completed);
  VERIFY(std::isfinite(after.history.back().train_loss));
  COMPARE(b.optimizer->state(param(*b.compiled.model, "fc1.weight"))->step, int64_t(18));
  COMPARE(b.optimizer->state(param(*b.compiled.model, "head.weight"))->step, int64_t(9));
}

TEST(checkpointAndWeightsFilesCarryTheSame) {
  session::TrainingRun a = session::make_training_run(mlp_a());
  train_epochs(a);
  const fs::path& dir = testing::partial_load_fixture().tmp.path();
  train::save_checkpoint(dir / "a.safetensors", *a.compiled.model, a.optimizer.get());
  train::save_checkpoint(dir / "a-model.safetensors", *a.compiled.model);
  train::save_weights(dir / "a-weights.safetensors", *a.compiled.model);

  for (const char* file : {"a.safetensors", "a-model.safetensors", "a-weights.safetensors"}) {
    const bool with_optimizer = std::string(file) == "a.safetensors";
    session::TrainingRun b = session::make_training_run(mlp_b());
    const train::SourceState source = train::read_state(dir / file);
    COMPARE(source.label,
            std::string(std::string(file) == "a-weights.safetensors" ? "in the weights file" : "in the checkpoint"));
    const train::CarryReport r = train::carry_over(source, *b.compiled.model, b.optimizer.get());
    COMPARE(r.kept, std::vector<std::string>({"fc1.weight", "fc1.bias"}));
    COMPARE(names(r.reset), std::vector<std::string>({"fc2.weight", "fc2.bias", "head.weight", "head.bias"}));
    COMPARE(r.ignored.size(), size_t(2));
    COMPARE(values(*b.compiled.model, "fc1.weight"), values(*a.compiled.model, "fc1.weight"));
    COMPARE(r.optimizer_carried, int64_t(with_optimizer ? 2 : 0));
    const optim::ParamState* st = b.optimizer->state(param(*b.compiled.model, "fc1.bias"));
    COMPARE(bool(st), with_optimizer);
    if (st)
      COMPARE(st->find("exp_avg")->to_vector(),
              a.optimizer->state(param(*a.compiled.model, "fc1.bias"))->find("exp_avg")->to_vector());
    VERIFY(testing::contains(r.text(), "in the checkpoint") || testing::contains(r.text(), "in the weights file"));
  }
}

TEST(anotherOptimizerKindKeepsWeightsOnly) {
  graph::Graph sgd = mlp_a();
  sgd.training.optimizer = "sgd";
  sgd.training.momentum = 0.9;
  session::TrainingRun a = session::make_training_run(sgd);
  train_epochs(a);
  session::TrainingRun b = session::make_training_run(mlp_b());
  const train::CarryReport r = train::carry_over(train::live_state(*a.compiled.model, a.optimizer.get(), "in the run"),
                                                 *b.compiled.model, b.optimizer.get());
  COMPARE(r.kept.size(), size_t(2));
  COMPARE(r.optimizer_carried, int64_t(0));
  COMPARE(r.optimizer_note, std::string("optimizer state not carried: SGD's in the run, this run uses Adam"));
  VERIFY(!b.optimizer->state(param(*b.compiled.model, "fc1.weight")));
}

// Partial loading matches optimizer state by parameter name, whatever the groups on either
// side: a checkpoint of three groups into an optimizer of two carries every parameter's own.
TEST(partialLoadingCarriesStateWithGroups) {
  graph::Graph from = mlp_a();
  from.find("fc2")->lr_mult = 0;  // groups fc1 | fc2 | fc3
  graph::Graph to = mlp_a();
  to.find("fc3")->lr_mult = 2;  // groups fc1, fc2 | fc3
  session::TrainingRun a = session::make_training_run(from);
  train_epochs(a);
  const fs::path file = testing::partial_load_fixture().tmp.file("three-groups.safetensors");
  train::save_checkpoint(file, *a.compiled.model, a.optimizer.get());

  const train::SourceState source = train::read_state(file);
  COMPARE(source.optimizer_note, std::string());
  COMPARE(source.optimizer_state.size(), size_t(6));
  for (const train::SourceState& s : {source, train::live_state(*a.compiled.model, a.optimizer.get(), "before the edit")}) {
    session::TrainingRun b = session::make_training_run(to);
    COMPARE(b.optimizer->param_groups().size(), size_t(2));
    const train::CarryReport r = train::carry_over(s, *b.compiled.model, b.optimizer.get());
    COMPARE(r.kept.size(), size_t(6));
    COMPARE(r.optimizer_carried, int64_t(6));
    for (const char* name : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"}) {
      expect_same_state(a.optimizer->state(param(*a.compiled.model, name)),
                        b.optimizer->state(param(*b.compiled.model, name)));
      COMPARE(values(*b.compiled.model, name), values(*a.compiled.model, name));
    }
    COMPARE(train_epochs(b).status, train::RunStatus::Completed);
  }
}
