// Sweeps in the core: the "sweep" object of project files, its checks, the trials grid, random
// and tpe choose, a trial's project (apply_assignment), and a sweep folder's state, read back
// from its files as the CLI and the GUI read it, with its table, CSV and JSON.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "graph/project.h"
#include "graph/sweep_settings.h"
#include "session/run_log.h"
#include "support/check.h"
#include "support/mlp_fixture.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "sweep/assignment.h"
#include "sweep/results.h"
#include "sweep/sweep_folder.h"
#include "sweep/trials.h"
#include "train/event_json.h"
#include "util/error.h"

using namespace plexus;
using plexus::testing::contains;
using plexus::testing::message_of;
namespace fs = std::filesystem;

namespace {

// The MLP fc1 -> act -> fc2 with a Dropout "drop" and a sweep over lr (log), batch_size (listed)
// and fc1.out_features (whole numbers).
graph::Graph swept_mlp(const std::string& method = "random") {
  graph::Graph g = testing::mlp_graph("data/mnist", {{"fc1", 32}, {"fc2", 10}});
  g.nodes.push_back({"drop", "Dropout", "drop", {}, {}});
  g.sweep.method = method;
  g.sweep.trials = 6;
  g.sweep.seed = 7;
  if (method == "grid") {
    g.sweep.parameters = {{"lr", {0.01, 0.1}}, {"batch_size", {int64_t(32), int64_t(64), int64_t(128)}}};
  } else {
    g.sweep.parameters = {{"lr", {}, 1e-4, 1, "log"},
                          {"batch_size", {int64_t(32), int64_t(64), int64_t(128)}},
                          {"fc1.out_features", {}, 16, 256, "linear"}};
  }
  return g;
}

std::string check_message(const graph::Graph& g) {
  return message_of<ValueError>([&] { graph::check_sweep(g); });
}

std::string parse_message(const std::string& text) {
  return message_of<ProjectError>([&] { graph::parse_project(text, "p.plexus"); });
}

// A project file's text with `sweep` as its sweep object.
std::string project_with_sweep(const std::string& sweep) {
  return R"({"format": 1, "nodes": [], "edges": [], "sweep": )" + sweep + "}";
}

const graph::ParamValue& value_in(const sweep::Assignment& a, const std::string& target) {
  for (const sweep::Setting& s : a)
    if (s.target == target) return s.value;
  throw std::runtime_error("no " + target);
}

// A run log of `epochs` epochs whose validation accuracy is `accuracy` at its best epoch (the
// second), ended with `end` (a Finished or Failed line) or not at all.
void write_trial_log(const fs::path& folder, int epochs, double accuracy, bool ended) {
  fs::create_directories(folder);
  std::ofstream out(folder / session::kRunLogFile);
  out << R"({"event":"run","format":1,"started":"2026-11-30T16:00:00.000+00:00","project":"","device":"cpu",)"
      << R"("classification":true,"first_epoch":1,"train_subset":0,"settings":{"epochs":)" << epochs
      << R"(},"continued_from":null})" << '\n';
  for (int e = 1; e <= epochs; ++e) {
    train::EpochEnd end;
    end.epoch = e;
    end.train_loss = 1.0 / e;
    end.has_eval = true;
    end.eval_accuracy = e == 2 ? accuracy : accuracy - 0.05;
    end.eval_loss = e == 2 ? 0.2 : 0.3;
    end.seconds = 1.5;
    out << train::to_json(end, true).dump() << '\n';
  }
  if (ended) out << train::to_json(train::Finished{false, epochs, 3.0}, true).dump() << '\n';
}

}  // namespace

TEST(aSweepRoundTripsThroughTheProjectFileAndOthersKeepTheirBytes) {
  const graph::Graph g = swept_mlp();
  const std::string text = graph::serialize_project(g);
  VERIFY2(contains(text, "\"sweep\": {") && contains(text, R"({"target": "lr", "min": 1e-04, "max": 1.0, "scale": "log"})"),
          text.c_str());
  const graph::Graph back = graph::parse_project(text, "t");
  COMPARE(back.sweep, g.sweep);
  COMPARE(graph::serialize_project(back), text);
  graph::Graph plain = g;
  plain.sweep = {};
  VERIFY(!contains(graph::serialize_project(plain), "sweep"));
}

TEST(malformedSweepObjectsAreRefusedWhereTheyAre) {
  VERIFY(contains(parse_message(project_with_sweep(R"({"method": "grid"})")), "missing \"parameters\""));
  VERIFY(contains(parse_message(project_with_sweep(R"({"parameters": [{"values": [1]}]})")),
                  "sweep.parameters[0]: missing \"target\""));
  VERIFY(contains(parse_message(project_with_sweep(R"({"parameters": [{"target": "lr", "values": [1], "min": 0}]})")),
                  "either values or min and max"));
  VERIFY(contains(parse_message(project_with_sweep(R"({"parameters": [{"target": "lr", "min": 0.1}]})")),
                  "give values, or min and max"));
  VERIFY(contains(parse_message(project_with_sweep(R"({"parameters": [{"target": "lr", "values": [[1]]}]})")),
                  "sweep.parameters[0].values[0]: expected a number"));
  VERIFY(contains(parse_message(project_with_sweep(R"({"budget": 3, "parameters": []})")), "unknown key \"budget\""));
}

TEST(sweepsThatCannotRunAreExplainedNamingTheParameter) {
  VERIFY(check_message(swept_mlp()) == "<no exception>");
  graph::Graph g = swept_mlp();
  g.sweep.parameters[2].target = "fc9.out_features";
  COMPARE(check_message(g), std::string("sweep: parameters[2] 'fc9.out_features': no node 'fc9' (a node parameter is "
                                        "'<node id>.<parameter>')"));
  g = swept_mlp();
  g.sweep.parameters[2].target = "fc1.width";
  VERIFY2(contains(check_message(g), "Linear 'fc1' has no parameter 'width' (it has "), check_message(g).c_str());
  g = swept_mlp();
  g.sweep.parameters[0].target = "lrr";
  COMPARE(check_message(g), std::string("sweep: parameters[0] 'lrr': unknown training setting 'lrr'"));
  g = swept_mlp();
  g.sweep.parameters[0].min = 0;
  COMPARE(check_message(g), std::string("sweep: parameters[0] 'lr': log scale needs min > 0"));
  g = swept_mlp();
  g.sweep.parameters[2].max = 1e9;
  VERIFY2(contains(check_message(g), "'fc1.out_features': 1e+09 is out of range: out_features must be between"),
          check_message(g).c_str());
  g = swept_mlp();
  g.sweep.parameters[1].values.push_back(int64_t(0));
  VERIFY2(contains(check_message(g), "'batch_size': 0 does not suit it: batch_size must be between 1"),
          check_message(g).c_str());
  g = swept_mlp();
  g.sweep.method = "grid";
  COMPARE(check_message(g), std::string("sweep: parameters[0] 'lr': a grid needs listed values, not a range"));
  g = swept_mlp();
  g.sweep.parameters.push_back({"lr", {0.1}});
  COMPARE(check_message(g), std::string("sweep: 'lr' is swept twice"));
  g = swept_mlp();
  g.sweep.parameters.push_back({"dataset.augment.flip", {}, 0, 1});
  COMPARE(check_message(g), std::string("sweep: parameters[3] 'dataset.augment.flip': a range needs a number "
                                        "setting; list the values to try"));
  g = swept_mlp();
  g.sweep.trials = 0;
  VERIFY2(contains(check_message(g), "sweep: trials must be between 1"), check_message(g).c_str());
}

TEST(aGridIsEveryCombinationTheLastParameterFastest) {
  const graph::Graph g = swept_mlp("grid");
  COMPARE(sweep::trial_count(g.sweep), int64_t(6));
  const std::vector<sweep::Assignment> trials = sweep::grid_trials(g);
  COMPARE(trials.size(), size_t(6));
  COMPARE(sweep::assignment_text(trials[0]), std::string("lr=0.01 batch_size=32"));
  COMPARE(sweep::assignment_text(trials[1]), std::string("lr=0.01 batch_size=64"));
  COMPARE(sweep::assignment_text(trials[5]), std::string("lr=0.1 batch_size=128"));
  COMPARE(*sweep::planned_trial(g, 4), trials[4]);
}

TEST(randomTrialsAreSeededLogUniformAndWithinTheirRanges) {
  graph::Graph g = swept_mlp();
  COMPARE(sweep::random_trial(g, 3), sweep::random_trial(g, 3));  // the same seed and index, the same trial
  VERIFY(sweep::random_trial(g, 3) != sweep::random_trial(g, 4));
  int below_1e2 = 0;
  std::set<int64_t> sizes;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    const sweep::Assignment a = sweep::random_trial(g, i);
    const double lr = std::get<double>(value_in(a, "lr"));
    VERIFY(lr >= 1e-4 && lr <= 1);
    below_1e2 += lr < 1e-2;
    const int64_t width = std::get<int64_t>(value_in(a, "fc1.out_features"));
    VERIFY(width >= 16 && width <= 256);
    sizes.insert(std::get<int64_t>(value_in(a, "batch_size")));
  }
  // Log-uniform over four decades: half the draws below 1e-2 (a uniform draw would put 1%).
  VERIFY2(std::abs(below_1e2 / double(n) - 0.5) < 0.03, std::to_string(below_1e2).c_str());
  COMPARE(sizes, (std::set<int64_t>{32, 64, 128}));
  g.sweep.seed = 8;
  VERIFY(sweep::random_trial(g, 3) != sweep::random_trial(swept_mlp(), 3));  // another seed, other trials
}

TEST(tpeProposesNearTheBestTrials) {
  graph::Graph g = swept_mlp("tpe");
  g.sweep.trials = 40;
  const int64_t startup = sweep::tpe_startup_trials(g.sweep);
  COMPARE(startup, int64_t(10));
  VERIFY(sweep::planned_trial(g, startup - 1).has_value());
  VERIFY(!sweep::planned_trial(g, startup).has_value());
  // Finished trials score best near lr = 1e-2 and batch size 64, whatever fc1's width.
  std::vector<sweep::Scored> finished;
  for (int64_t i = 0; i < 20; ++i) {
    const sweep::Assignment a = sweep::random_trial(g, i);
    const double lr = std::get<double>(value_in(a, "lr"));
    const double score = -std::abs(std::log10(lr) + 2) - (std::get<int64_t>(value_in(a, "batch_size")) == 64 ? 0 : 1);
    finished.push_back({a, score});
  }
  int near = 0, at_64 = 0;
  for (int64_t i = 20; i < 40; ++i) {
    const sweep::Assignment a = sweep::propose_tpe(g, i, finished);
    near += std::abs(std::log10(std::get<double>(value_in(a, "lr"))) + 2) < 1;
    at_64 += std::get<int64_t>(value_in(a, "batch_size")) == 64;
  }
  // At random, 2 in 4 (two decades of four) and 1 in 3; tpe favours them.
  VERIFY2(near >= 16, std::to_string(near).c_str());
  VERIFY2(at_64 >= 12, std::to_string(at_64).c_str());
  COMPARE(sweep::propose_tpe(g, 25, finished), sweep::propose_tpe(g, 25, finished));
}

TEST(anAssignmentSetsTrainingDatasetAndNodeTargets) {
  const graph::Graph g = swept_mlp();
  const graph::Graph t = sweep::apply_assignment(g, {{"lr", int64_t(1)},
                                                     {"batch_size", int64_t(64)},
                                                     {"dataset.augment.shift", int64_t(2)},
                                                     {"fc1.out_features", int64_t(128)},
                                                     {"drop.p", 0.25},
                                                     {"fc2.lr_mult", 0.5}});
  COMPARE(t.training.lr, 1.0);  // a whole number for a real setting
  COMPARE(t.training.batch_size, int64_t(64));
  COMPARE(t.dataset.augment_shift, int64_t(2));
  COMPARE(std::get<int64_t>(t.find("fc1")->params.at("out_features")), int64_t(128));
  COMPARE(std::get<double>(t.find("drop")->params.at("p")), 0.25);
  COMPARE(t.find("fc2")->lr_mult, 0.5);
  COMPARE(t.sweep, g.sweep);
  COMPARE(g.training.lr, graph::TrainingSettings{}.lr);  // the project itself is left alone
  VERIFY2(contains(message_of<ValueError>([&] { sweep::apply_assignment(g, {{"fc1.out_features", int64_t(0)}}); }),
                   "Linear 'fc1': out_features must be between 1"),
          "out of range");
  VERIFY(contains(message_of<ValueError>([&] { sweep::apply_assignment(g, {{"zz", 1.0}}); }),
                  "unknown training setting 'zz'"));
}

TEST(aSweepFolderTellsEachTrialsStatusAndTheBest) {
  const testing::TempDir dir;
  const fs::path folder = dir.file("sweep");
  graph::Graph g = swept_mlp();
  g.sweep.trials = 4;
  sweep::create_sweep(folder, g, dir.file("mlp.plexus"));
  VERIFY(contains(message_of<IoError>([&] { sweep::create_sweep(folder, g, {}); }), "a sweep is there already"));
  sweep::SweepState s = sweep::read_sweep(folder);
  COMPARE(s.trials.size(), size_t(4));
  COMPARE(s.metric, std::string("validation_accuracy"));
  COMPARE(s.project.sweep, g.sweep);
  COMPARE(*s.trials[2].assignment, sweep::random_trial(g, 2));
  for (const sweep::TrialState& t : s.trials) COMPARE(t.status, sweep::TrialStatus::Pending);

  // Trial 1 finished, trial 2 begun and killed, trial 3 failed; trial 4 pending.
  for (int64_t i = 1; i <= 3; ++i) VERIFY(sweep::claim_trial(folder, i, 1, *s.trials[size_t(i - 1)].assignment));
  VERIFY(!sweep::claim_trial(folder, 1, 1, *s.trials[0].assignment));  // taken already
  write_trial_log(sweep::trial_folder(folder, 1), 3, 0.9, true);
  write_trial_log(sweep::trial_folder(folder, 2), 1, 0.99, false);
  write_trial_log(sweep::trial_folder(folder, 3), 0, 0, false);
  std::ofstream(sweep::trial_folder(folder, 3) / session::kRunLogFile, std::ios::app)
      << train::to_json(train::Failed{"out of memory"}, true).dump() << '\n';

  s = sweep::read_sweep(folder);
  VERIFY(!s.running);
  COMPARE(s.trials[0].status, sweep::TrialStatus::Completed);
  COMPARE(s.trials[0].best_epoch, 2);
  COMPARE(*s.trials[0].best_validation_accuracy, 0.9);
  COMPARE(*s.trials[0].score, 0.9);
  COMPARE(s.trials[0].epochs_done, 3);
  COMPARE(s.trials[1].status, sweep::TrialStatus::Interrupted);
  COMPARE(s.trials[2].status, sweep::TrialStatus::Failed);
  COMPARE(s.trials[2].message, std::string("out of memory"));
  COMPARE(s.trials[3].status, sweep::TrialStatus::Pending);
  COMPARE(sweep::interrupted_trials(s), std::vector<int64_t>{2});
  // Trial 2 scores higher, but only finished trials count.
  COMPARE(*sweep::best_trial(s), size_t(0));
  VERIFY(!s.complete());
  {
    const sweep::SweepLock lock(folder);
    COMPARE(sweep::read_sweep(folder).trials[1].status, sweep::TrialStatus::Running);
    // Its rerun is attempt 2: once.
    VERIFY(sweep::claim_trial(folder, 2, 2, *s.trials[1].assignment));
    VERIFY(!sweep::claim_trial(folder, 2, 2, *s.trials[1].assignment));
    // Trial 4 just started: its process has made the log and not yet written the whole header.
    VERIFY(sweep::claim_trial(folder, 4, 1, *s.trials[3].assignment));
    const fs::path log4 = sweep::trial_folder(folder, 4) / session::kRunLogFile;
    std::ofstream(log4).flush();
    COMPARE(sweep::read_sweep(folder).trials[3].status, sweep::TrialStatus::Running);
    std::ofstream(log4) << "{\"run\": {\"form";
    const sweep::TrialState begun = sweep::read_sweep(folder).trials[3];
    COMPARE(begun.status, sweep::TrialStatus::Running);
    VERIFY(!begun.score);
    fs::remove_all(sweep::trial_folder(folder, 4));
  }
  COMPARE(sweep::read_sweep(folder).trials[1].attempts, 2);

  // The table, CSV and JSON.
  const std::string table = sweep::results_table(s);
  VERIFY2(contains(table, "\n1*     completed") && contains(table, "* best validation_accuracy: trial 1, lr="),
          table.c_str());
  const std::string csv = sweep::results_csv(s);
  VERIFY2(csv.starts_with("trial,status,lr,batch_size,fc1.out_features,score,best_epoch,validation_accuracy,"
                          "validation_loss,train_loss,epochs,seconds,folder\n"),
          csv.c_str());
  VERIFY2(contains(csv, ",0.9000,2,0.9000,0.2000,0.3333,3/3,3.0,trial-001\n"), csv.c_str());
  VERIFY2(contains(csv, "\n4,pending,"), csv.c_str());
  const nlohmann::json j = nlohmann::json::parse(sweep::results_json(s));
  COMPARE(j["best"].get<int>(), 1);
  COMPARE(j["trials"].size(), size_t(4));
  COMPARE(j["trials"][0]["assignment"]["batch_size"].get<int64_t>(),
          std::get<int64_t>(value_in(*s.trials[0].assignment, "batch_size")));
  COMPARE(j["trials"][2]["status"].get<std::string>(), std::string("failed"));
  VERIFY(j["trials"][3]["score"].is_null());
  sweep::write_results(s);
  COMPARE(testing::read_all(folder / "results.csv"), csv);
}

TEST(anUnfinishedSweepOfTheSameProjectIsFoundAgain) {
  const testing::TempDir dir;
  const fs::path file = dir.file("mlp.plexus");
  graph::Graph g = swept_mlp();
  g.sweep.trials = 2;
  graph::save_project(file, g);
  VERIFY(!sweep::unfinished_sweep(file, g));
  const fs::path folder = sweep::new_sweep_folder(file);
  COMPARE(folder.parent_path(), dir.file("mlp.runs") / "sweeps");
  sweep::create_sweep(folder, g, file);
  COMPARE(*sweep::unfinished_sweep(file, g), folder);
  graph::Graph other = g;
  other.training.epochs = 9;
  VERIFY(!sweep::unfinished_sweep(file, other));  // another project: a sweep of its own
  for (int64_t i = 1; i <= 2; ++i) {
    VERIFY(sweep::claim_trial(folder, i, 1, sweep::random_trial(g, i - 1)));
    write_trial_log(sweep::trial_folder(folder, i), 2, 0.5, true);
  }
  VERIFY(sweep::read_sweep(folder).complete());
  VERIFY(!sweep::unfinished_sweep(file, g));  // complete: a new sweep starts
}
