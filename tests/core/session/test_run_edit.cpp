// A run's graph edited while it is paused (session/run_edit.h): which edits are refused, the
// run that goes on with the edited model (partial loading from the live one, train/partial_load.h)
// and the live run's loaders, a broken edit leaving the live run as it was, and freezing a node
// (a new grouping of the optimizer, session/optimizer_groups.h) as an edit like any other.
#include "support/check.h"

#include <string>
#include <vector>

#include "graph/diff.h"
#include "session/run.h"
#include "session/run_edit.h"
#include "train/partial_load.h"
#include "train/trainer.h"
#include "support/partial_load_fixture.h"
#include "support/test_support.h"

using namespace plexus;
using plexus::testing::mlp_a;
using plexus::testing::mlp_b;
using plexus::testing::train_epochs;
using plexus::testing::values;

TEST(anEditedRunGoesOnWithTheLiveLoaders) {
  session::TrainingRun live = session::make_training_run(mlp_a());
  train_epochs(live);
  const std::vector<float> fc1 = values(*live.compiled.model, "fc1.weight");
  data::DataLoader* loader = live.train_loader.get();
  session::EditedRun e = session::make_edited_run(mlp_a(), mlp_b(), live,
                                                 train::RunPosition{1, 4, {}, 0, 4, {}, {}, {}, {}});
  VERIFY(!e.run.train_loader);
  session::hand_over_loaders(live, e.run);
  COMPARE(e.run.train_loader.get(), loader);  // taken over, not reopened
  COMPARE(values(*e.run.compiled.model, "fc1.weight"), fc1);
  COMPARE(e.event.epoch, 1);
  COMPARE(e.event.batch, int64_t(4));
  COMPARE(e.event.batches, int64_t(9));
  COMPARE(e.event.kept, int64_t(2));
  COMPARE(e.event.reset, int64_t(4));
  COMPARE(e.event.changes, graph::describe(graph::diff(mlp_a(), mlp_b()), mlp_a(), mlp_b()));
  VERIFY(!e.event.changes.empty());
}

TEST(refusedAndBrokenEditsLeaveTheLiveRun) {
  session::TrainingRun live = session::make_training_run(mlp_a());
  graph::Graph lr = mlp_a();
  lr.training.lr = 0.5;
  COMPARE(session::edit_refusal(mlp_a(), lr),
          std::string("the dataset and training settings cannot change during a run: training.lr 0.01 → 0.5; undo "
                      "that, or stop the run and train anew"));
  VERIFY(session::edit_refusal(mlp_a(), mlp_b()).empty());
  graph::Graph broken = mlp_a();
  broken.edges.pop_back();  // the loss has no target
  const std::string why = testing::message_of<ValueError>(
      [&] { session::make_edited_run(mlp_a(), broken, live, train::RunPosition{}); });
  VERIFY2(!testing::contains(why, "<"), why.c_str());
  VERIFY(live.train_loader && live.eval_loader);  // still the live run's
  COMPARE(train_epochs(live).status, train::RunStatus::Completed);
}

// While a run is paused, freezing a node is an edit like a layer's parameter: the run goes on
// with the new groups and every parameter's weights and state.
TEST(aPausedRunMayFreezeANode) {
  session::TrainingRun live = session::make_training_run(mlp_a());
  train_epochs(live);
  graph::Graph edited = mlp_a();
  edited.find("fc2")->lr_mult = 0;
  COMPARE(session::edit_refusal(mlp_a(), edited), std::string());
  session::EditedRun e = session::make_edited_run(mlp_a(), edited, live,
                                                 train::RunPosition{1, 4, {}, 0, 4, {}, {}, {}, {}});
  COMPARE(e.run.optimizer->param_groups().size(), size_t(3));
  COMPARE(e.run.optimizer->param_groups()[1].lr, 0.0);
  COMPARE(e.carried.optimizer_carried, int64_t(6));
  COMPARE(e.event.changes, std::vector<std::string>{"Linear 'fc2': lr_mult 1 → 0"});
  session::hand_over_loaders(live, e.run);
  const std::vector<float> fc2 = values(*e.run.compiled.model, "fc2.weight");
  COMPARE(train_epochs(e.run).status, train::RunStatus::Completed);
  COMPARE(values(*e.run.compiled.model, "fc2.weight"), fc2);
}
