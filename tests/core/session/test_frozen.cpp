// Fine-tuning with frozen nodes (graph::Node::frozen, nn::Module::freeze): a frozen node's
// parameters need no gradient and are in no optimizer group, it runs as in evaluation (its
// BatchNorm keeps its running statistics), so its whole state is bit-identical after training
// while the others learn; checkpoints of such runs carry their optimizer state by name into
// other runs (train/partial_load.h); replacing the last layer keeps every other tensor; a paused
// run may freeze a node, a continued one may not freeze one its run trained; and how many
// parameters train is said.
#include "support/check.h"

#include <filesystem>

#include "session/continuation.h"
#include "session/optimizer_groups.h"
#include "session/run.h"
#include "session/run_edit.h"
#include "session/run_folder.h"
#include "train/checkpoint.h"
#include "train/partial_load.h"
#include "support/partial_load_fixture.h"
#include "support/test_support.h"

using namespace plexus;
using plexus::testing::mlp_a;
using plexus::testing::param;
using plexus::testing::train_epochs;
using plexus::testing::values;
namespace fs = std::filesystem;

namespace {

// mlp_a with a BatchNorm1d "bn" between fc1 and its ReLU.
graph::Graph with_batchnorm() {
  graph::Graph g = mlp_a();
  g.nodes.push_back({"bn", "BatchNorm1d", "bn", {}, {}});
  for (graph::Edge& e : g.edges)
    if (e.from.node == "fc1") e.from.node = "bn";
  g.edges.push_back({{"fc1", "output"}, {"bn", "input"}});
  return g;
}

// Every state tensor of `node` (parameters and buffers), by name.
std::map<std::string, std::vector<float>> node_state(const nn::Module& model, const std::string& node) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [name, t] : model.state())
    if (name.starts_with(node + ".")) out[name] = t.to_vector();
  return out;
}

bool optimized(const optim::Optimizer& opt, const Tensor& p) {
  for (const Tensor& q : opt.parameters())
    if (q.unsafe_impl() == p.unsafe_impl()) return true;
  return false;
}

}  // namespace

// fc1 and the BatchNorm after it frozen: they need no gradient, the optimizer holds neither them
// nor state for them, backward leaves their .grad empty, and after an epoch every tensor of theirs
// (BatchNorm's running mean, variance and batch count too) is bit for bit as before, while the
// nodes after them learned.
TEST(aFrozenNodeKeepsItsWholeState) {
  for (const char* optimizer : {"sgd", "adam"}) {
    graph::Graph g = with_batchnorm();
    g.training.optimizer = optimizer;
    g.training.momentum = 0.9;
    g.training.weight_decay = 0.01;
    g.find("fc1")->frozen = true;
    g.find("bn")->frozen = true;
    session::TrainingRun run = session::make_training_run(g);
    nn::Module& model = *run.compiled.model;
    const auto fc1 = node_state(model, "fc1"), bn = node_state(model, "bn");
    COMPARE(bn.size(), size_t(5));  // weight, bias, running_mean, running_var, num_batches_tracked
    const std::vector<float> fc2 = values(model, "fc2.weight");
    for (const char* name : {"fc1.weight", "fc1.bias", "bn.weight", "bn.bias"}) {
      VERIFY2(!param(model, name).requires_grad(), name);
      VERIFY2(!optimized(*run.optimizer, param(model, name)), name);
    }
    VERIFY(optimized(*run.optimizer, param(model, "fc2.weight")));
    COMPARE(session::trained_parameters_text(model), std::string("698 of 25,882 parameters train"));

    COMPARE(train_epochs(run).status, train::RunStatus::Completed);
    VERIFY(model.is_training());
    for (const auto& [name, module] : model.children())
      VERIFY2(module->is_training() != module->is_frozen(), name.c_str());
    COMPARE(node_state(model, "fc1"), fc1);
    COMPARE(node_state(model, "bn"), bn);
    VERIFY2(values(model, "fc2.weight") != fc2, optimizer);
    for (const char* name : {"fc1.weight", "fc1.bias", "bn.weight", "bn.bias"}) {
      VERIFY2(!param(model, name).grad().defined(), name);  // backward computed nothing for them
      VERIFY2(!run.optimizer->state(param(model, name)), name);
    }
    VERIFY(run.optimizer->state(param(model, "fc2.weight")));
  }
}

// The same BatchNorm unfrozen: training moves its running statistics (what the test above rules out).
TEST(anUnfrozenBatchNormMovesItsStatistics) {
  graph::Graph g = with_batchnorm();
  g.find("fc1")->frozen = true;
  session::TrainingRun run = session::make_training_run(g);
  const std::vector<float> mean = values(*run.compiled.model, "bn.running_mean");
  COMPARE(session::trained_parameters_text(*run.compiled.model), std::string("762 of 25,882 parameters train"));
  train_epochs(run);
  VERIFY(values(*run.compiled.model, "bn.running_mean") != mean);
}

TEST(nothingToTrainIsAnError) {
  graph::Graph g = mlp_a();
  for (const char* id : {"fc1", "fc2", "fc3"}) g.find(id)->frozen = true;
  const std::string why = testing::message_of<ValueError>([&] { session::make_training_run(g); });
  VERIFY2(testing::contains(why, "every node that learns is frozen"), why.c_str());
  COMPARE(session::trained_parameters_text(*session::make_training_run(mlp_a()).compiled.model),
          std::string("all 25,818 parameters train"));
}

// A checkpoint of a run with fc1 frozen names its frozen tensors, so its optimizer state (fc2's
// and fc3's, in the optimizer's order) is matched to them by name: a run without frozen nodes
// takes it for fc2 and fc3, a run with fc2 frozen too for fc3 alone.
TEST(aFrozenRunsCheckpointCarriesItsOptimizerStateByName) {
  graph::Graph g = mlp_a();
  g.find("fc1")->frozen = true;
  session::TrainingRun a = session::make_training_run(g);
  train_epochs(a);
  const fs::path file = testing::partial_load_fixture().tmp.file("frozen.safetensors");
  train::save_checkpoint(file, *a.compiled.model, a.optimizer.get());

  session::TrainingRun all = session::make_training_run(mlp_a());
  const train::CarryReport r = train::carry_over(train::read_state(file), *all.compiled.model, all.optimizer.get());
  COMPARE(r.kept.size(), size_t(6));
  COMPARE(r.optimizer_note, std::string());
  COMPARE(r.optimizer_carried, int64_t(4));
  testing::expect_same_state(a.optimizer->state(param(*a.compiled.model, "fc2.weight")),
                             all.optimizer->state(param(*all.compiled.model, "fc2.weight")));
  VERIFY(!all.optimizer->state(param(*all.compiled.model, "fc1.weight")));

  graph::Graph more = g;
  more.find("fc2")->frozen = true;
  session::TrainingRun b = session::make_training_run(more);
  const train::CarryReport rb = train::carry_over(train::read_state(file), *b.compiled.model, b.optimizer.get());
  COMPARE(rb.optimizer_carried, int64_t(2));
  COMPARE(values(*b.compiled.model, "fc2.weight"), values(*a.compiled.model, "fc2.weight"));
}

// Fine-tuning for a new number of classes: the checkpoint's last Linear had 12 outputs (a source
// trained on 12 classes: its fc3 tensors widened here, as the dataset has 10), this project's
// fc3 (same id) has 10. A run started from it keeps every other tensor bit for bit, with its
// optimizer state where the node trains, and starts the new head afresh.
TEST(replacingTheLastLayerKeepsTheRest) {
  session::TrainingRun a = session::make_training_run(mlp_a());
  train_epochs(a);
  const fs::path file = testing::partial_load_fixture().tmp.file("twelve.safetensors");
  train::save_checkpoint(file, *a.compiled.model, a.optimizer.get());
  train::SourceState twelve = train::read_state(file);
  for (auto& [name, t] : twelve.tensors)
    if (name.starts_with("fc3.")) t = zeros(name == "fc3.weight" ? Shape{12, 16} : Shape{12});
  twelve.optimizer_state.erase("fc3.weight");
  twelve.optimizer_state.erase("fc3.bias");

  graph::Graph g = mlp_a();
  g.find("fc1")->frozen = true;
  session::TrainingRun b = session::make_training_run(g);
  const std::vector<float> head = values(*b.compiled.model, "fc3.weight");
  const train::CarryReport r = train::carry_over(twelve, *b.compiled.model, b.optimizer.get());
  COMPARE(r.kept, (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
  COMPARE(r.reset.size(), size_t(2));
  COMPARE(r.reset[0].name, std::string("fc3.weight"));
  COMPARE(r.reset[0].source_shape, std::optional<Shape>(Shape{12, 16}));
  for (const char* name : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"})
    COMPARE(values(*b.compiled.model, name), values(*a.compiled.model, name));
  COMPARE(values(*b.compiled.model, "fc3.weight"), head);
  COMPARE(r.optimizer_carried, int64_t(2));  // fc2's: fc1 is frozen, fc3 new
  COMPARE(train_epochs(b).status, train::RunStatus::Completed);
  COMPARE(values(*b.compiled.model, "fc1.weight"), values(*a.compiled.model, "fc1.weight"));
}

// While a run is paused, freezing a node is an edit: the run goes on with the node out of the
// optimizer, every other parameter with its weights and state, and the node as it was.
TEST(aPausedRunMayFreezeANode) {
  session::TrainingRun live = session::make_training_run(mlp_a());
  train_epochs(live);
  graph::Graph edited = mlp_a();
  edited.find("fc2")->frozen = true;
  COMPARE(session::edit_refusal(mlp_a(), edited), std::string());
  session::EditedRun e = session::make_edited_run(mlp_a(), edited, live,
                                                 train::RunPosition{1, 4, {}, 0, 4, {}, {}, {}, {}});
  COMPARE(e.event.changes, std::vector<std::string>{"Linear 'fc2': frozen false → true"});
  COMPARE(e.carried.optimizer_carried, int64_t(4));
  VERIFY(!optimized(*e.run.optimizer, param(*e.run.compiled.model, "fc2.weight")));
  session::hand_over_loaders(live, e.run);
  const auto fc2 = node_state(*e.run.compiled.model, "fc2");
  COMPARE(fc2.at("fc2.weight"), values(*live.compiled.model, "fc2.weight"));
  const std::vector<float> fc3 = values(*e.run.compiled.model, "fc3.weight");
  COMPARE(train_epochs(e.run).status, train::RunStatus::Completed);
  COMPARE(node_state(*e.run.compiled.model, "fc2"), fc2);
  VERIFY(values(*e.run.compiled.model, "fc3.weight") != fc3);
}

// Continuing a run with a node frozen that the run trained cannot place that node's optimizer
// state: it says so and what to do instead.
TEST(aContinuedRunCannotFreezeANodeItTrained) {
  const fs::path folder = testing::partial_load_fixture().tmp.file("trained-run");
  testing::train_into_folder(folder, mlp_a());
  graph::Graph g = mlp_a();
  g.find("fc2")->frozen = true;
  const std::string why =
      testing::message_of<ValueError>([&] { session::make_continued_run(session::read_run(folder), g); });
  VERIFY2(testing::contains(why, "with Linear 'fc2' frozen: the run trained it"), why.c_str());
}
