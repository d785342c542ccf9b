// Imbalanced classes (TrainingSettings::class_balance, session/class_balance.h): balanced weights
// n / (k · count) of the training split, the loss weighted with them, a loss's own weights kept;
// the weighted sampler's draws (equal class shares, deterministic per seed, validation never
// resampled); the minority class's recall with weights against none on a 90/10 table; the
// refusals; and the setting in the settings table and the project file. Every table is written
// here, from a seeded generator.
#include "support/check.h"

#include <fstream>
#include <numeric>

#include "data/sampling.h"
#include "graph/project.h"
#include "graph/training_params.h"
#include "ops/ops.h"
#include "session/class_balance.h"
#include "session/evaluation_report.h"
#include "session/run.h"
#include "session/run_edit.h"
#include "support/graph_fixture.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "train/trainer.h"

using namespace plexus;
using plexus::testing::contains;
using plexus::testing::edge;
using plexus::testing::node;
namespace fs = std::filesystem;

namespace {

// A table of two features and a "label" column: `major` rows of class "major" around (0, 0) and
// `minor` rows of class "minor" around (shift, shift), interleaved, unit normal noise.
fs::path write_table(const fs::path& file, int64_t major, int64_t minor, double shift = 1.0) {
  Generator gen(17);
  std::ofstream out(file);
  out << "x1,x2,label\n";
  const int64_t rows = major + minor, every = rows / minor;
  for (int64_t i = 0; i < rows; ++i) {
    const bool is_minor = i % every == 0 && minor-- > 0;
    const double d = is_minor ? shift : 0.0;
    out << gen.normal() + d << ',' << gen.normal() + d << ',' << (is_minor ? "minor" : "major") << '\n';
  }
  return file;
}

// Input -> Linear(2) -> CrossEntropy against the labels: logistic regression on the table.
graph::Graph table_classifier(const fs::path& csv, const std::string& class_balance) {
  graph::Graph g;
  g.nodes = {node("in", "Input"), node("fc", "Linear", {{"out_features", int64_t(2)}}), node("ce", "CrossEntropy")};
  g.edges = {edge("in", "x", "fc"), edge("fc", "output", "ce"), edge("in", "y", "ce", "target")};
  g.dataset = {"csv", csv.string(), "label", "classification"};
  g.training.optimizer = "adam";
  g.training.lr = 0.05;
  g.training.batch_size = 32;
  g.training.epochs = 12;
  g.training.stats_every = 0;
  g.training.class_balance = class_balance;
  return g;
}

std::vector<int64_t> counted(const data::Dataset& split, int64_t classes) {
  std::vector<int64_t> counts(size_t(classes), 0);
  for (float t : session::split_targets(split)) ++counts[size_t(t)];
  return counts;
}

// The minority class's recall on the test split after training the run through.
double minority_recall(const graph::Graph& g) {
  session::TrainingRun run = session::make_training_run(g);
  train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(),
                         run.trainer_options);
  trainer.set_scheduler(run.scheduler.get());
  trainer.set_test_loader(run.test_loader.get());
  const train::RunResult result = trainer.run();
  if (result.status != train::RunStatus::Completed || !result.test) throw std::runtime_error(result.message);
  return result.test->per_class_accuracy.at(1);  // "minor": labels are numbered in sorted order
}

}  // namespace

TEST(balancedWeightsAreNOverClassesTimesCount) {
  const std::vector<double> w = session::balanced_class_weights({60, 30, 10});
  COMPARE(w, (std::vector<double>{100.0 / 180, 100.0 / 90, 100.0 / 30}));
  // A class without examples weighs 0 and is not one of the k classes: the rest average 1 still.
  COMPARE(session::balanced_class_weights({30, 0, 10}), (std::vector<double>{40.0 / 60, 0.0, 40.0 / 20}));
  VERIFY_THROWS(ValueError, session::balanced_class_weights({0, 0}));
}

// The run's weights come from the training split alone, and its loss is cross-entropy with them.
TEST(weightsRunWeighsItsLossWithTheTrainingSplitsCounts) {
  testing::TempDir dir;
  const graph::Graph g = table_classifier(write_table(dir.file("t.csv"), 450, 50), "weights");
  session::TrainingRun run = session::make_training_run(g);
  const std::vector<int64_t> counts = counted(*run.data.train, 2);
  COMPARE(run.class_counts, counts);
  VERIFY(counts[0] > 4 * counts[1]);  // the split is still imbalanced
  const double n = double(counts[0] + counts[1]);
  const std::vector<double> expected{n / (2.0 * double(counts[0])), n / (2.0 * double(counts[1]))};
  COMPARE(std::get<std::vector<double>>(session::balanced_graph(g, run.settings, counts).find("ce")->params.at("weight")),
          expected);

  const Tensor scores = from_vector({2.f, -1.f, 0.5f, 0.5f, -1.f, 1.f}, {3, 2});
  const Tensor labels = from_vector({0.f, 1.f, 1.f}, {3});
  const Tensor weight = from_vector({float(expected[0]), float(expected[1])}, {2});
  COMPARE(run.trainer_options.loss(scores, labels).item(),
          cross_entropy(scores, labels, 0.f, Reduction::Mean, weight).item());
  VERIFY(std::abs(run.trainer_options.loss(scores, labels).item() - cross_entropy(scores, labels).item()) > 1e-3f);
}

// A paused run's edited graph trains with the same balanced weights (session/run_edit.h).
TEST(anEditedRunKeepsTheBalancedWeights) {
  testing::TempDir dir;
  const graph::Graph g = table_classifier(write_table(dir.file("t.csv"), 450, 50), "weights");
  const session::TrainingRun live = session::make_training_run(g);
  graph::Graph edited = g;
  edited.find("ce")->params["label_smoothing"] = 0.0;  // an edit that keeps every node
  const session::EditedRun e = session::make_edited_run(g, edited, live,
                                                 train::RunPosition{1, 2, {}, 0, 2, {}, {}, {}, {}});
  COMPARE(e.run.class_counts, live.class_counts);
  const Tensor scores = from_vector({2.f, -1.f, 0.5f, 0.5f}, {2, 2});
  const Tensor labels = from_vector({0.f, 1.f}, {2});
  COMPARE(e.run.trainer_options.loss(scores, labels).item(), live.trainer_options.loss(scores, labels).item());
  VERIFY(std::abs(e.run.trainer_options.loss(scores, labels).item() - cross_entropy(scores, labels).item()) > 1e-3f);
}

TEST(aLossWithItsOwnWeightsKeepsThem) {
  graph::Graph g = table_classifier("unused.csv", "weights");
  g.nodes.push_back(node("nll", "NLL"));
  g.find("ce")->params["weight"] = std::vector<double>{1.0, 5.0};
  const graph::Graph weighted = session::with_class_weights(g, {0.5, 2.0});
  COMPARE(std::get<std::vector<double>>(weighted.find("ce")->params.at("weight")), (std::vector<double>{1.0, 5.0}));
  COMPARE(std::get<std::vector<double>>(weighted.find("nll")->params.at("weight")), (std::vector<double>{0.5, 2.0}));
  COMPARE(session::balanced_graph(g, graph::TrainingSettings{}, {1, 3}), g);  // "none": the graph as drawn
}

TEST(weightedDrawsFollowTheWeightsAndTheSeed) {
  const std::vector<int64_t> a = data::weighted_draws({1.0, 0.0, 3.0}, 40000, 7);
  std::vector<int64_t> seen(3, 0);
  for (int64_t i : a) ++seen[size_t(i)];
  COMPARE(seen[1], int64_t(0));
  VERIFY2(std::abs(double(seen[2]) / 40000 - 0.75) < 0.01, std::to_string(seen[2]).c_str());
  COMPARE(data::weighted_draws({1.0, 0.0, 3.0}, 40000, 7), a);
  VERIFY(data::weighted_draws({1.0, 0.0, 3.0}, 40000, 8) != a);
  VERIFY_THROWS(ValueError, data::weighted_draws({0.0, 0.0}, 1, 1));
  VERIFY_THROWS(ValueError, data::weighted_draws({1.0, -1.0}, 1, 1));
}

// A 90/10 split drawn by the sampler: about half of each class over many batches, the epoch's
// size unchanged, the same draws for the same seed; the held-out loaders never resample.
TEST(samplerDrawsEveryClassEquallyOften) {
  testing::TempDir dir;
  graph::Graph g = table_classifier(write_table(dir.file("t.csv"), 900, 100), "sampler");
  session::TrainingRun run = session::make_training_run(g);
  const std::vector<float> targets = session::split_targets(*run.data.train);
  std::vector<int64_t> drawn(2, 0);
  for (int64_t epoch = 0; epoch < 30; ++epoch) {
    int64_t rows = 0;
    for (const std::vector<int64_t>& batch : run.train_loader->batch_indices(epoch)) {
      rows += int64_t(batch.size());
      for (int64_t i : batch) ++drawn[size_t(targets[size_t(i)])];
    }
    COMPARE(rows, run.data.train->size());
  }
  const double share = double(drawn[1]) / double(drawn[0] + drawn[1]);
  VERIFY2(std::abs(share - 0.5) < 0.02, std::to_string(share).c_str());

  session::TrainingRun again = session::make_training_run(g);
  COMPARE(again.train_loader->batch_indices(3), run.train_loader->batch_indices(3));
  VERIFY(run.train_loader->batch_indices(4) != run.train_loader->batch_indices(3));
  g.training.seed = 2;
  VERIFY(session::make_training_run(g).train_loader->batch_indices(3) != run.train_loader->batch_indices(3));

  for (data::DataLoader* held_out : {run.eval_loader.get(), run.test_loader.get()}) {
    VERIFY(held_out->options().sample_weights.empty());
    std::vector<int64_t> order;
    for (const std::vector<int64_t>& batch : held_out->batch_indices(0)) order.insert(order.end(), batch.begin(), batch.end());
    std::vector<int64_t> each(size_t(held_out->dataset_size()));
    std::iota(each.begin(), each.end(), int64_t(0));
    COMPARE(order, each);
  }
}

// Logistic regression on a 90/10 table whose classes overlap: unweighted, it mostly predicts
// the large class (the best accuracy), balanced it finds most of the small one. Measured: none
// 0.23, weights 0.78, sampler 0.75 (of its 106 in the test split); theory says about 0.2 and
// 0.76. The margin asked for is far wider than the noise.
TEST(weightsFindMoreOfTheMinorityClassThanNone) {
  testing::TempDir dir;
  const fs::path csv = write_table(dir.file("t.csv"), 4500, 500);  // about 100 of the small class to test
  const double none = minority_recall(table_classifier(csv, "none"));
  const double weights = minority_recall(table_classifier(csv, "weights"));
  const double sampler = minority_recall(table_classifier(csv, "sampler"));
  const std::string figures = "none " + std::to_string(none) + ", weights " + std::to_string(weights) + ", sampler " +
                              std::to_string(sampler);
  VERIFY2(weights > 0.4 && weights > none + 0.25, figures.c_str());
  VERIFY2(sampler > 0.4 && sampler > none + 0.25, figures.c_str());
}

TEST(classBalanceIsRefusedWhereItCannotApply) {
  testing::TempDir dir;
  graph::Graph g = table_classifier(write_table(dir.file("t.csv"), 90, 10), "weights");
  g.dataset.task = "regression";
  g.dataset.target = "x2";
  std::ofstream(dir.file("r.csv")) << "x1,x2\n1,2\n2,3\n3,4\n4,5\n5,6\n6,7\n7,8\n8,9\n9,10\n10,11\n";
  g.dataset.path = dir.file("r.csv").string();
  g.find("ce")->type = "MSE";
  g.find("fc")->params["out_features"] = int64_t(1);
  try {
    session::make_training_run(g);
    FAIL("a regression target trained with class_balance weights");
  } catch (const ValueError& e) {
    VERIFY2(contains(e.what(), "class_balance 'weights' needs a classification dataset") &&
                contains(e.what(), "'x2' is a regression"),
            e.what());
  }

  VERIFY_THROWS(ValueError, session::with_class_weights(graph::Graph{}, {1.0}));  // no loss takes class weights
  try {
    session::check_class_balance("sampler", {"text", "a.txt", "", ""}, 40);
    FAIL("a text stream accepted class_balance sampler");
  } catch (const ValueError& e) {
    VERIFY2(contains(e.what(), "class_balance 'sampler' needs one class label per example"), e.what());
  }
}

// A row of the one settings table: in the form, checked, and saved only when set.
TEST(classBalanceRoundTripsThroughTheProjectFile) {
  const auto& specs = graph::training_param_specs();
  const auto spec = std::find_if(specs.begin(), specs.end(), [](const auto& s) { return s.name == "class_balance"; });
  VERIFY(spec != specs.end());
  COMPARE(spec->choices, (std::vector<std::string>{"none", "weights", "sampler"}));

  testing::TempDir dir;
  graph::Graph g = table_classifier("data.csv", "none");
  graph::save_project(dir.file("none.plexus"), g);
  VERIFY(!contains(testing::read_all(dir.file("none.plexus")), "class_balance"));  // older files keep their bytes
  COMPARE(graph::load_project(dir.file("none.plexus")).training.class_balance, std::string("none"));
  for (const std::string value : {"weights", "sampler"}) {
    g.training.class_balance = value;
    graph::save_project(dir.file(value + ".plexus"), g);
    VERIFY(contains(testing::read_all(dir.file(value + ".plexus")), "\"class_balance\": \"" + value + "\""));
    COMPARE(graph::load_project(dir.file(value + ".plexus")), g);
  }
  g.training.class_balance = "oversample";
  try {
    graph::check_training_values(g.training);
    FAIL("class_balance 'oversample' passed the settings' check");
  } catch (const ValueError& e) {
    VERIFY2(contains(e.what(), "class_balance"), e.what());
  }
}

TEST(theRunsLogSaysWhatTheBalanceDoes) {
  COMPARE(session::class_balance_text("weights", {900, 100}, {"cat", "dog"}),
          std::string("weights: cat 0.556 (900 examples), dog 5 (100)"));
  COMPARE(session::class_balance_text("sampler", {900, 100}, {"cat", ""}),
          std::string("sampler: 1000 examples drawn per epoch, each class about equally often (cat 900, 1 100)"));
}
