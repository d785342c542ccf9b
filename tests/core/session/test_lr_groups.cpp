// A node's own learning-rate and weight-decay multipliers (graph/node_settings.h) in training:
// the optimizer's parameter groups a project gets (session/optimizer_groups.h) and their lrs
// under a schedule; a frozen node (lr_mult 0) keeping its weights bit for bit while the others
// learn; lr_mult 2 training a node exactly as a doubled lr does; and checkpoints and continuing
// a run (a frozen node unfrozen) with groups. Partial loading with groups is in
// tests/core/train/test_partial_load.cpp, a paused run freezing a node in test_run_edit.cpp.
#include "support/check.h"

#include <filesystem>

#include "graph/project.h"
#include "session/continuation.h"
#include "session/optimizer_groups.h"
#include "session/run.h"
#include "session/run_folder.h"
#include "session/run_log.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "support/partial_load_fixture.h"
#include "support/small_classifier.h"
#include "support/test_support.h"

using namespace plexus;
using plexus::testing::expect_same_state;
using plexus::testing::mlp_a;
using plexus::testing::param;
using plexus::testing::train_epochs;
using plexus::testing::values;
using plexus::testing::weights;
namespace fs = std::filesystem;

namespace {

// The parameter names of each group, to compare the grouping at once.
std::vector<std::vector<std::string>> group_names(const session::TrainingRun& run) {
  std::vector<std::vector<std::string>> out;
  for (const optim::ParamGroup& g : run.optimizer->param_groups()) {
    out.emplace_back();
    for (const Tensor& p : g.params)
      for (const auto& [name, t] : run.compiled.model->named_parameters())
        if (t.unsafe_impl() == p.unsafe_impl()) out.back().push_back(name);
  }
  return out;
}

}  // namespace

// A new group wherever the multipliers change along the model's parameters; each group's lr
// and weight decay the project's times them, scheduled alike.
TEST(groupsFollowTheNodesInParameterOrder) {
  graph::Graph g = mlp_a();
  g.training.weight_decay = 0.001;
  g.training.schedule = "step";
  g.training.gamma = 0.5;
  session::TrainingRun plain = session::make_training_run(g);
  COMPARE(plain.optimizer->param_groups().size(), size_t(1));
  COMPARE(plain.trainer_options.base_lr, std::optional<double>(0.01));

  g.find("fc2")->lr_mult = 0;
  g.find("fc3")->lr_mult = 2;
  g.find("fc3")->weight_decay_mult = 0;
  session::TrainingRun run = session::make_training_run(g);
  using Names = std::vector<std::vector<std::string>>;
  COMPARE(group_names(run), (Names{{"fc1.weight", "fc1.bias"}, {"fc2.weight", "fc2.bias"}, {"fc3.weight", "fc3.bias"}}));
  const std::vector<optim::ParamGroup>& groups = run.optimizer->param_groups();
  COMPARE(groups[0].lr, 0.01);
  COMPARE(groups[1].lr, 0.0);
  COMPARE(groups[2].lr, 0.02);
  COMPARE(groups[0].option("weight_decay"), 0.001);
  COMPARE(groups[1].option("weight_decay"), 0.001);
  COMPARE(groups[2].option("weight_decay"), 0.0);
  // The schedule scales every group from its own lr.
  run.scheduler->step();
  COMPARE(groups[0].lr, 0.005);
  COMPARE(groups[1].lr, 0.0);
  COMPARE(groups[2].lr, 0.01);
  // The health monitor knows the frozen node (an update ratio of 0 is no issue there).
  VERIFY(run.trainer_options.nodes.at("fc2").frozen);
  VERIFY(!run.trainer_options.nodes.at("fc1").frozen);

  // The same multipliers apart make groups of their own: the optimizer keeps the model's order.
  graph::Graph apart = mlp_a();
  apart.find("fc1")->lr_mult = 2;
  apart.find("fc3")->lr_mult = 2;
  session::TrainingRun r = session::make_training_run(apart);
  COMPARE(group_names(r), (Names{{"fc1.weight", "fc1.bias"}, {"fc2.weight", "fc2.bias"}, {"fc3.weight", "fc3.bias"}}));
  const std::vector<Tensor> in_order = r.optimizer->parameters(), model = r.compiled.model->parameters();
  COMPARE(in_order.size(), model.size());
  for (size_t i = 0; i < model.size(); ++i) VERIFY(in_order[i].unsafe_impl() == model[i].unsafe_impl());
}

// lr_mult 0: no update ever changes the node's weights, whatever the optimizer keeps.
TEST(aFrozenNodeKeepsItsWeights) {
  for (const char* optimizer : {"sgd", "adam", "adamw", "rmsprop"}) {
    graph::Graph g = mlp_a();
    g.training.optimizer = optimizer;
    g.training.momentum = std::string(optimizer) == "adam" || std::string(optimizer) == "adamw" ? 0 : 0.9;
    g.training.weight_decay = 0.01;
    g.find("fc2")->lr_mult = 0;
    session::TrainingRun run = session::make_training_run(g);
    const std::vector<std::vector<float>> before = weights(*run.compiled.model);
    const std::vector<float> fc2 = values(*run.compiled.model, "fc2.weight"), fc2b = values(*run.compiled.model, "fc2.bias");
    const std::vector<float> fc1 = values(*run.compiled.model, "fc1.weight"), fc3 = values(*run.compiled.model, "fc3.bias");
    COMPARE(train_epochs(run).status, train::RunStatus::Completed);
    VERIFY2(values(*run.compiled.model, "fc2.weight") == fc2, optimizer);
    VERIFY2(values(*run.compiled.model, "fc2.bias") == fc2b, optimizer);
    VERIFY2(values(*run.compiled.model, "fc1.weight") != fc1, optimizer);
    VERIFY2(values(*run.compiled.model, "fc3.bias") != fc3, optimizer);
  }
}

// fc2 at lr_mult 2 trains exactly as a run whose lr is doubled with the other nodes halved:
// every node then has the same lr in both, and every weight ends the same, bit for bit.
TEST(lrMultTwoIsADoubledLr) {
  graph::Graph a = mlp_a();
  a.training.optimizer = "sgd";
  a.training.momentum = 0.9;
  a.find("fc2")->lr_mult = 2;
  graph::Graph b = a;
  b.training.lr = 0.02;
  b.find("fc1")->lr_mult = 0.5;
  b.find("fc2")->lr_mult = 1;
  b.find("fc3")->lr_mult = 0.5;
  graph::Graph plain = a;
  plain.find("fc2")->lr_mult = 1;
  session::TrainingRun ra = session::make_training_run(a), rb = session::make_training_run(b),
                       rp = session::make_training_run(plain);
  for (session::TrainingRun* r : {&ra, &rb, &rp}) COMPARE(train_epochs(*r).status, train::RunStatus::Completed);
  COMPARE(weights(*ra.compiled.model), weights(*rb.compiled.model));
  VERIFY(values(*ra.compiled.model, "fc2.weight") != values(*rp.compiled.model, "fc2.weight"));
}

// A checkpoint holds every group; loading it into a run of the same project brings back the
// state and the groups' lrs, and both go on alike.
TEST(checkpointsKeepTheGroups) {
  graph::Graph g = mlp_a();
  g.find("fc1")->lr_mult = 0.5;
  g.find("fc3")->weight_decay_mult = 0;
  g.training.weight_decay = 0.001;
  session::TrainingRun a = session::make_training_run(g);
  train_epochs(a);
  const fs::path file = testing::partial_load_fixture().tmp.file("groups.safetensors");
  train::save_checkpoint(file, *a.compiled.model, a.optimizer.get());

  session::TrainingRun b = session::make_training_run(g);
  train::load_checkpoint(file, *b.compiled.model, b.optimizer.get());
  const optim::OptimizerState sa = a.optimizer->state_dict(), sb = b.optimizer->state_dict();
  COMPARE(sb.metadata, sa.metadata);
  COMPARE(sa.metadata.at("groups"), std::string("3"));
  COMPARE(sb.tensors.size(), sa.tensors.size());
  for (size_t i = 0; i < sa.tensors.size(); ++i) {
    COMPARE(sb.tensors[i].first, sa.tensors[i].first);
    COMPARE(sb.tensors[i].second.to_vector(), sa.tensors[i].second.to_vector());
  }
  train_epochs(a);
  train_epochs(b);
  COMPARE(weights(*b.compiled.model), weights(*a.compiled.model));

  // Strict loading wants the same groups: a project whose nodes train otherwise says so.
  session::TrainingRun other = session::make_training_run(mlp_a());
  const std::string why = testing::message_of<ValueError>(
      [&] { train::load_checkpoint(file, *other.compiled.model, other.optimizer.get()); });
  VERIFY2(testing::contains(why, "the checkpoint has 3 parameter groups, this optimizer has 1"), why.c_str());
}

// Trained with fc1 frozen, then continued with it unfrozen (another grouping than the
// checkpoint's): every parameter goes on with its own state, the groups' rates are the
// project's now, and fc1 learns again.
TEST(aContinuedRunMayUnfreezeANode) {
  graph::Graph frozen = mlp_a();
  frozen.find("fc1")->lr_mult = 0;
  const fs::path folder = testing::partial_load_fixture().tmp.file("frozen-run");
  testing::train_into_folder(folder, frozen);
  const session::RunRecord record = session::read_run(folder);
  const graph::Graph trained = graph::load_project(folder / session::kRunProjectFile);
  COMPARE(trained.find("fc1")->lr_mult, 0.0);  // the run's project keeps how it trained

  // What the checkpoint holds, read as that run's grouping had it.
  session::TrainingRun saved = session::make_training_run(frozen);
  train::load_checkpoint(folder / "final.safetensors", *saved.compiled.model, saved.optimizer.get());

  graph::Graph thawed = mlp_a();
  thawed.training.lr = 0.005;
  session::TrainingRun run = session::make_continued_run(record, thawed);
  COMPARE(run.optimizer->param_groups().size(), size_t(1));
  COMPARE(run.optimizer->param_groups()[0].lr, 0.005);
  for (const char* name : {"fc1.weight", "fc1.bias", "fc2.weight", "fc3.bias"})
    expect_same_state(saved.optimizer->state(param(*saved.compiled.model, name)),
                      run.optimizer->state(param(*run.compiled.model, name)));
  const std::vector<float> fc1 = values(*run.compiled.model, "fc1.weight");
  COMPARE(fc1, values(*saved.compiled.model, "fc1.weight"));
  COMPARE(train_epochs(run).status, train::RunStatus::Completed);
  VERIFY(values(*run.compiled.model, "fc1.weight") != fc1);
}

