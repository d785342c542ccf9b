// A node's own learning-rate and weight-decay multipliers (graph/node_settings.h) in training:
// the optimizer's parameter groups a project gets (session/optimizer_groups.h) and their lrs
// under a schedule; a frozen node (lr_mult 0) keeping its weights bit for bit while the others
// learn; lr_mult 2 training a node exactly as a doubled lr does; and checkpoints, partial
// loading and continuing a run (a frozen node unfrozen) with groups.
#include <QtTest>

#include <filesystem>

#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "session/continuation.h"
#include "session/optimizer_groups.h"
#include "session/run.h"
#include "session/run_folder.h"
#include "session/run_edit.h"
#include "session/run_log.h"
#include "train/checkpoint.h"
#include "train/partial_load.h"
#include "train/trainer.h"
#include "test_support.h"
#include "mlp_fixture.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

std::vector<float> values(const nn::Module& m, const std::string& name) {
  for (const auto& [n, t] : m.state())
    if (n == name) return t.to_vector();
  return {};
}

Tensor param(const nn::Module& m, const std::string& name) {
  for (const auto& [n, t] : m.named_parameters())
    if (n == name) return t;
  return {};
}

std::vector<std::vector<float>> weights(const nn::Module& m) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, t] : m.state()) out.push_back(t.to_vector());
  return out;
}

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

train::RunResult train_epochs(session::TrainingRun& run) {
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  t.set_scheduler(run.scheduler.get());
  return t.run();
}

void expect_same_state(const optim::ParamState* a, const optim::ParamState* b) {
  QVERIFY(a && b);
  QCOMPARE(a->step, b->step);
  QCOMPARE(a->tensors.size(), b->tensors.size());
  for (const auto& [name, t] : a->tensors) QCOMPARE(b->find(name)->to_vector(), t.to_vector());
}

}  // namespace

class TestLrGroups : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  fs::path data_;
  graph::Graph mlp_;  // fc1(32) -> fc2(16) -> fc3(10), Adam at 0.01, one epoch of 9 steps

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    data_ = fs::path(tmp_.path().toStdString()) / "digits";
    data::write_synthetic_digits(data_, 200, 40);
    mlp_ = testing::partial_load_mlp(data_.string(), 16, "fc3");
  }

  // A new group wherever the multipliers change along the model's parameters; each group's lr
  // and weight decay the project's times them, scheduled alike.
  void groupsFollowTheNodesInParameterOrder() {
    graph::Graph g = mlp_;
    g.training.weight_decay = 0.001;
    g.training.schedule = "step";
    g.training.gamma = 0.5;
    session::TrainingRun plain = session::make_training_run(g);
    QCOMPARE(plain.optimizer->param_groups().size(), size_t(1));
    QCOMPARE(plain.trainer_options.base_lr, std::optional<double>(0.01));

    g.find("fc2")->lr_mult = 0;
    g.find("fc3")->lr_mult = 2;
    g.find("fc3")->weight_decay_mult = 0;
    session::TrainingRun run = session::make_training_run(g);
    using Names = std::vector<std::vector<std::string>>;
    QCOMPARE(group_names(run), (Names{{"fc1.weight", "fc1.bias"}, {"fc2.weight", "fc2.bias"}, {"fc3.weight", "fc3.bias"}}));
    const std::vector<optim::ParamGroup>& groups = run.optimizer->param_groups();
    QCOMPARE(groups[0].lr, 0.01);
    QCOMPARE(groups[1].lr, 0.0);
    QCOMPARE(groups[2].lr, 0.02);
    QCOMPARE(groups[0].option("weight_decay"), 0.001);
    QCOMPARE(groups[1].option("weight_decay"), 0.001);
    QCOMPARE(groups[2].option("weight_decay"), 0.0);
    // The schedule scales every group from its own lr.
    run.scheduler->step();
    QCOMPARE(groups[0].lr, 0.005);
    QCOMPARE(groups[1].lr, 0.0);
    QCOMPARE(groups[2].lr, 0.01);
    // The health monitor knows the frozen node (an update ratio of 0 is no issue there).
    QVERIFY(run.trainer_options.nodes.at("fc2").frozen);
    QVERIFY(!run.trainer_options.nodes.at("fc1").frozen);

    // The same multipliers apart make groups of their own: the optimizer keeps the model's order.
    graph::Graph apart = mlp_;
    apart.find("fc1")->lr_mult = 2;
    apart.find("fc3")->lr_mult = 2;
    session::TrainingRun r = session::make_training_run(apart);
    QCOMPARE(group_names(r), (Names{{"fc1.weight", "fc1.bias"}, {"fc2.weight", "fc2.bias"}, {"fc3.weight", "fc3.bias"}}));
    const std::vector<Tensor> in_order = r.optimizer->parameters(), model = r.compiled.model->parameters();
    QCOMPARE(in_order.size(), model.size());
    for (size_t i = 0; i < model.size(); ++i) QVERIFY(in_order[i].unsafe_impl() == model[i].unsafe_impl());
  }

  // lr_mult 0: no update ever changes the node's weights, whatever the optimizer keeps.
  void aFrozenNodeKeepsItsWeights() {
    for (const char* optimizer : {"sgd", "adam", "adamw", "rmsprop"}) {
      graph::Graph g = mlp_;
      g.training.optimizer = optimizer;
      g.training.momentum = std::string(optimizer) == "adam" || std::string(optimizer) == "adamw" ? 0 : 0.9;
      g.training.weight_decay = 0.01;
      g.find("fc2")->lr_mult = 0;
      session::TrainingRun run = session::make_training_run(g);
      const std::vector<std::vector<float>> before = weights(*run.compiled.model);
      const std::vector<float> fc2 = values(*run.compiled.model, "fc2.weight"), fc2b = values(*run.compiled.model, "fc2.bias");
      const std::vector<float> fc1 = values(*run.compiled.model, "fc1.weight"), fc3 = values(*run.compiled.model, "fc3.bias");
      QCOMPARE(train_epochs(run).status, train::RunStatus::Completed);
      QVERIFY2(values(*run.compiled.model, "fc2.weight") == fc2, optimizer);
      QVERIFY2(values(*run.compiled.model, "fc2.bias") == fc2b, optimizer);
      QVERIFY2(values(*run.compiled.model, "fc1.weight") != fc1, optimizer);
      QVERIFY2(values(*run.compiled.model, "fc3.bias") != fc3, optimizer);
    }
  }

  // fc2 at lr_mult 2 trains exactly as a run whose lr is doubled with the other nodes halved:
  // every node then has the same lr in both, and every weight ends the same, bit for bit.
  void lrMultTwoIsADoubledLr() {
    graph::Graph a = mlp_;
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
    for (session::TrainingRun* r : {&ra, &rb, &rp}) QCOMPARE(train_epochs(*r).status, train::RunStatus::Completed);
    QCOMPARE(weights(*ra.compiled.model), weights(*rb.compiled.model));
    QVERIFY(values(*ra.compiled.model, "fc2.weight") != values(*rp.compiled.model, "fc2.weight"));
  }

  // A checkpoint holds every group; loading it into a run of the same project brings back the
  // state and the groups' lrs, and both go on alike.
  void checkpointsKeepTheGroups() {
    graph::Graph g = mlp_;
    g.find("fc1")->lr_mult = 0.5;
    g.find("fc3")->weight_decay_mult = 0;
    g.training.weight_decay = 0.001;
    session::TrainingRun a = session::make_training_run(g);
    train_epochs(a);
    const fs::path file = fs::path(tmp_.path().toStdString()) / "groups.safetensors";
    train::save_checkpoint(file, *a.compiled.model, a.optimizer.get());

    session::TrainingRun b = session::make_training_run(g);
    train::load_checkpoint(file, *b.compiled.model, b.optimizer.get());
    const optim::OptimizerState sa = a.optimizer->state_dict(), sb = b.optimizer->state_dict();
    QCOMPARE(sb.metadata, sa.metadata);
    QCOMPARE(sa.metadata.at("groups"), std::string("3"));
    QCOMPARE(sb.tensors.size(), sa.tensors.size());
    for (size_t i = 0; i < sa.tensors.size(); ++i) {
      QCOMPARE(sb.tensors[i].first, sa.tensors[i].first);
      QCOMPARE(sb.tensors[i].second.to_vector(), sa.tensors[i].second.to_vector());
    }
    train_epochs(a);
    train_epochs(b);
    QCOMPARE(weights(*b.compiled.model), weights(*a.compiled.model));

    // Strict loading wants the same groups: a project whose nodes train otherwise says so.
    session::TrainingRun other = session::make_training_run(mlp_);
    const std::string why = testing::message_of<ValueError>(
        [&] { train::load_checkpoint(file, *other.compiled.model, other.optimizer.get()); });
    QVERIFY2(testing::contains(why, "the checkpoint has 3 parameter groups, this optimizer has 1"), why.c_str());
  }

  // Partial loading matches optimizer state by parameter name, whatever the groups on either
  // side: a checkpoint of three groups into an optimizer of two carries every parameter's own.
  void partialLoadingCarriesStateWithGroups() {
    graph::Graph from = mlp_;
    from.find("fc2")->lr_mult = 0;  // groups fc1 | fc2 | fc3
    graph::Graph to = mlp_;
    to.find("fc3")->lr_mult = 2;  // groups fc1, fc2 | fc3
    session::TrainingRun a = session::make_training_run(from);
    train_epochs(a);
    const fs::path file = fs::path(tmp_.path().toStdString()) / "three-groups.safetensors";
    train::save_checkpoint(file, *a.compiled.model, a.optimizer.get());

    const train::SourceState source = train::read_state(file);
    QCOMPARE(source.optimizer_note, std::string());
    QCOMPARE(source.optimizer_state.size(), size_t(6));
    for (const train::SourceState& s : {source, train::live_state(*a.compiled.model, a.optimizer.get(), "before the edit")}) {
      session::TrainingRun b = session::make_training_run(to);
      QCOMPARE(b.optimizer->param_groups().size(), size_t(2));
      const train::CarryReport r = train::carry_over(s, *b.compiled.model, b.optimizer.get());
      QCOMPARE(r.kept.size(), size_t(6));
      QCOMPARE(r.optimizer_carried, int64_t(6));
      for (const char* name : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"}) {
        expect_same_state(a.optimizer->state(param(*a.compiled.model, name)), b.optimizer->state(param(*b.compiled.model, name)));
        QCOMPARE(values(*b.compiled.model, name), values(*a.compiled.model, name));
      }
      QCOMPARE(train_epochs(b).status, train::RunStatus::Completed);
    }
  }

  // While a run is paused, freezing a node is an edit like a layer's parameter: the run goes on
  // with the new groups and every parameter's weights and state.
  void aPausedRunMayFreezeANode() {
    session::TrainingRun live = session::make_training_run(mlp_);
    train_epochs(live);
    graph::Graph edited = mlp_;
    edited.find("fc2")->lr_mult = 0;
    QCOMPARE(session::edit_refusal(mlp_, edited), std::string());
    session::EditedRun e = session::make_edited_run(mlp_, edited, live, train::RunPosition{1, 4, {}, 0, 4});
    QCOMPARE(e.run.optimizer->param_groups().size(), size_t(3));
    QCOMPARE(e.run.optimizer->param_groups()[1].lr, 0.0);
    QCOMPARE(e.carried.optimizer_carried, int64_t(6));
    QCOMPARE(e.event.changes, std::vector<std::string>{"Linear 'fc2': lr_mult 1 → 0"});
    session::hand_over_loaders(live, e.run);
    const std::vector<float> fc2 = values(*e.run.compiled.model, "fc2.weight");
    QCOMPARE(train_epochs(e.run).status, train::RunStatus::Completed);
    QCOMPARE(values(*e.run.compiled.model, "fc2.weight"), fc2);
  }

  // Trained with fc1 frozen, then continued with it unfrozen (another grouping than the
  // checkpoint's): every parameter goes on with its own state, the groups' rates are the
  // project's now, and fc1 learns again.
  void aContinuedRunMayUnfreezeANode() {
    graph::Graph frozen = mlp_;
    frozen.find("fc1")->lr_mult = 0;
    const fs::path folder = fs::path(tmp_.path().toStdString()) / "frozen-run";
    {
      session::TrainingRun run = session::make_training_run(frozen);
      session::RunLog log(folder, frozen, session::run_header(run, "", {}, nullptr));
      session::RunCheckpoints checkpoints(folder, frozen, run);
      train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(),
                       run.trainer_options);
      t.set_callback([&](const train::Event& e) { log.record(e); });
      session::finish_run(checkpoints, log, t.run());
    }
    const session::RunRecord record = session::read_run(folder);
    const graph::Graph trained = graph::load_project(folder / session::kRunProjectFile);
    QCOMPARE(trained.find("fc1")->lr_mult, 0.0);  // the run's project keeps how it trained

    // What the checkpoint holds, read as that run's grouping had it.
    session::TrainingRun saved = session::make_training_run(frozen);
    train::load_checkpoint(folder / "final.safetensors", *saved.compiled.model, saved.optimizer.get());

    graph::Graph thawed = mlp_;
    thawed.training.lr = 0.005;
    session::TrainingRun run = session::make_continued_run(record, thawed);
    QCOMPARE(run.optimizer->param_groups().size(), size_t(1));
    QCOMPARE(run.optimizer->param_groups()[0].lr, 0.005);
    for (const char* name : {"fc1.weight", "fc1.bias", "fc2.weight", "fc3.bias"})
      expect_same_state(saved.optimizer->state(param(*saved.compiled.model, name)),
                        run.optimizer->state(param(*run.compiled.model, name)));
    const std::vector<float> fc1 = values(*run.compiled.model, "fc1.weight");
    QCOMPARE(fc1, values(*saved.compiled.model, "fc1.weight"));
    QCOMPARE(train_epochs(run).status, train::RunStatus::Completed);
    QVERIFY(values(*run.compiled.model, "fc1.weight") != fc1);
  }
};

QTEST_GUILESS_MAIN(TestLrGroups)
#include "test_lr_groups.moc"
