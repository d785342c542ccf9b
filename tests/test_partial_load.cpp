// Partial loading (train/partial_load.h) between two known graphs: exactly which tensors are
// kept, reset and ignored, kept ones bit for bit, Adam's state carried for kept parameters and
// fresh for reset ones, from a live model, a checkpoint and a weights file; a run's graph
// edited while paused (session/run_edit.h); and training that goes on fine afterwards.
#include <QtTest>

#include <filesystem>

#include "data/synthetic_digits.h"
#include "graph/diff.h"
#include "session/run.h"
#include "session/run_edit.h"
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

train::RunResult train_epochs(session::TrainingRun& run) {
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  t.set_scheduler(run.scheduler.get());
  return t.run();
}

std::vector<std::string> names(const std::vector<train::ResetTensor>& reset) {
  std::vector<std::string> out;
  for (const auto& r : reset) out.push_back(r.name);
  return out;
}

}  // namespace

class TestPartialLoad : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  fs::path data_;
  graph::Graph a_, b_;  // b_: fc2 wider, fc3 replaced by a new node "head"

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    data_ = fs::path(tmp_.path().toStdString()) / "digits";
    data::write_synthetic_digits(data_, 200, 40);
    a_ = testing::partial_load_mlp(data_.string(), 16, "fc3");
    b_ = testing::partial_load_mlp(data_.string(), 24, "head");
  }

  void liveModelCarriesMatchingNodesExactly() {
    session::TrainingRun a = session::make_training_run(a_);
    QCOMPARE(train_epochs(a).status, train::RunStatus::Completed);
    session::TrainingRun b = session::make_training_run(b_);
    const std::vector<float> head_init = values(*b.compiled.model, "head.weight");

    const train::CarryReport r = train::carry_over(
        train::live_state(*a.compiled.model, a.optimizer.get(), "before the edit"), *b.compiled.model, b.optimizer.get());
    QCOMPARE(r.kept, std::vector<std::string>({"fc1.weight", "fc1.bias"}));
    QCOMPARE(names(r.reset), std::vector<std::string>({"fc2.weight", "fc2.bias", "head.weight", "head.bias"}));
    QCOMPARE(r.reset[0].shape, Shape({24, 32}));
    QCOMPARE(*r.reset[0].source_shape, Shape({16, 32}));
    QVERIFY(!r.reset[2].source_shape);
    QCOMPARE(r.ignored.size(), size_t(2));
    QCOMPARE(r.ignored[0].name, std::string("fc3.weight"));
    QVERIFY(!r.ignored[0].node_here);
    QCOMPARE(r.optimizer_carried, int64_t(2));
    QCOMPARE(QString::fromStdString(r.text()),
             QString("kept 2 tensors (optimizer state of 2); reset fc2.weight ([24, 32] here, [16, 32] before the edit), "
                     "fc2.bias ([24] here, [16] before the edit), head.weight ([10, 24] here, none before the edit), "
                     "head.bias ([10] here, none before the edit); ignored fc3.weight (no such node here), fc3.bias "
                     "(no such node here)"));

    // Kept: bit for bit. Reset: as initialised.
    QCOMPARE(values(*b.compiled.model, "fc1.weight"), values(*a.compiled.model, "fc1.weight"));
    QCOMPARE(values(*b.compiled.model, "fc1.bias"), values(*a.compiled.model, "fc1.bias"));
    QCOMPARE(values(*b.compiled.model, "head.weight"), head_init);

    // Adam's state: the kept parameters', copied (not shared); none for the reset ones.
    const optim::ParamState* from = a.optimizer->state(param(*a.compiled.model, "fc1.weight"));
    const optim::ParamState* to = b.optimizer->state(param(*b.compiled.model, "fc1.weight"));
    QVERIFY(from && to);
    QCOMPARE(to->step, from->step);
    QCOMPARE(to->step, int64_t(9));  // 180 training examples in batches of 20
    QCOMPARE(to->find("exp_avg")->to_vector(), from->find("exp_avg")->to_vector());
    QCOMPARE(to->find("exp_avg_sq")->to_vector(), from->find("exp_avg_sq")->to_vector());
    QVERIFY(to->find("exp_avg")->storage() != from->find("exp_avg")->storage());
    QVERIFY(!b.optimizer->state(param(*b.compiled.model, "fc2.weight")));
    QVERIFY(!b.optimizer->state(param(*b.compiled.model, "head.bias")));

    // And training goes on fine.
    const train::RunResult after = train_epochs(b);
    QCOMPARE(after.status, train::RunStatus::Completed);
    QVERIFY(std::isfinite(after.history.back().train_loss));
    QCOMPARE(b.optimizer->state(param(*b.compiled.model, "fc1.weight"))->step, int64_t(18));
    QCOMPARE(b.optimizer->state(param(*b.compiled.model, "head.weight"))->step, int64_t(9));
  }

  void checkpointAndWeightsFilesCarryTheSame() {
    session::TrainingRun a = session::make_training_run(a_);
    train_epochs(a);
    const fs::path dir = fs::path(tmp_.path().toStdString());
    train::save_checkpoint(dir / "a.safetensors", *a.compiled.model, a.optimizer.get());
    train::save_checkpoint(dir / "a-model.safetensors", *a.compiled.model);
    train::save_weights(dir / "a-weights.safetensors", *a.compiled.model);

    for (const char* file : {"a.safetensors", "a-model.safetensors", "a-weights.safetensors"}) {
      const bool with_optimizer = std::string(file) == "a.safetensors";
      session::TrainingRun b = session::make_training_run(b_);
      const train::SourceState source = train::read_state(dir / file);
      QCOMPARE(QString::fromStdString(source.label),
               QString(std::string(file) == "a-weights.safetensors" ? "in the weights file" : "in the checkpoint"));
      const train::CarryReport r = train::carry_over(source, *b.compiled.model, b.optimizer.get());
      QCOMPARE(r.kept, std::vector<std::string>({"fc1.weight", "fc1.bias"}));
      QCOMPARE(names(r.reset), std::vector<std::string>({"fc2.weight", "fc2.bias", "head.weight", "head.bias"}));
      QCOMPARE(r.ignored.size(), size_t(2));
      QCOMPARE(values(*b.compiled.model, "fc1.weight"), values(*a.compiled.model, "fc1.weight"));
      QCOMPARE(r.optimizer_carried, int64_t(with_optimizer ? 2 : 0));
      const optim::ParamState* st = b.optimizer->state(param(*b.compiled.model, "fc1.bias"));
      QCOMPARE(bool(st), with_optimizer);
      if (st)
        QCOMPARE(st->find("exp_avg")->to_vector(),
                 a.optimizer->state(param(*a.compiled.model, "fc1.bias"))->find("exp_avg")->to_vector());
      QVERIFY(testing::contains(r.text(), "in the checkpoint") || testing::contains(r.text(), "in the weights file"));
    }
  }

  void anotherOptimizerKindKeepsWeightsOnly() {
    graph::Graph sgd = a_;
    sgd.training.optimizer = "sgd";
    sgd.training.momentum = 0.9;
    session::TrainingRun a = session::make_training_run(sgd);
    train_epochs(a);
    session::TrainingRun b = session::make_training_run(b_);
    const train::CarryReport r = train::carry_over(train::live_state(*a.compiled.model, a.optimizer.get(), "in the run"),
                                                   *b.compiled.model, b.optimizer.get());
    QCOMPARE(r.kept.size(), size_t(2));
    QCOMPARE(r.optimizer_carried, int64_t(0));
    QCOMPARE(QString::fromStdString(r.optimizer_note),
             QString("optimizer state not carried: SGD's in the run, this run uses Adam"));
    QVERIFY(!b.optimizer->state(param(*b.compiled.model, "fc1.weight")));
  }

  void anEditedRunGoesOnWithTheLiveLoaders() {
    session::TrainingRun live = session::make_training_run(a_);
    train_epochs(live);
    const std::vector<float> fc1 = values(*live.compiled.model, "fc1.weight");
    data::DataLoader* loader = live.train_loader.get();
    session::EditedRun e = session::make_edited_run(a_, b_, live, train::RunPosition{1, 4, {}, 0, 4});
    QVERIFY(!e.run.train_loader);
    session::hand_over_loaders(live, e.run);
    QCOMPARE(e.run.train_loader.get(), loader);  // taken over, not reopened
    QCOMPARE(values(*e.run.compiled.model, "fc1.weight"), fc1);
    QCOMPARE(e.event.epoch, 1);
    QCOMPARE(e.event.batch, int64_t(4));
    QCOMPARE(e.event.batches, int64_t(9));
    QCOMPARE(e.event.kept, int64_t(2));
    QCOMPARE(e.event.reset, int64_t(4));
    QCOMPARE(e.event.changes, graph::describe(graph::diff(a_, b_), a_, b_));
    QVERIFY(!e.event.changes.empty());
  }

  void refusedAndBrokenEditsLeaveTheLiveRun() {
    session::TrainingRun live = session::make_training_run(a_);
    graph::Graph lr = a_;
    lr.training.lr = 0.5;
    QCOMPARE(QString::fromStdString(session::edit_refusal(a_, lr)),
             QString("the dataset and training settings cannot change during a run: training.lr 0.01 → 0.5; undo "
                     "that, or stop the run and train anew"));
    QVERIFY(session::edit_refusal(a_, b_).empty());
    graph::Graph broken = a_;
    broken.edges.pop_back();  // the loss has no target
    const std::string why = testing::message_of<ValueError>(
        [&] { session::make_edited_run(a_, broken, live, train::RunPosition{}); });
    QVERIFY2(!testing::contains(why, "<"), why.c_str());
    QVERIFY(live.train_loader && live.eval_loader);  // still the live run's
    QCOMPARE(train_epochs(live).status, train::RunStatus::Completed);
  }
};

QTEST_GUILESS_MAIN(TestPartialLoad)
#include "test_partial_load.moc"
