// Runs that last: training events as JSON lines (train/event_json.h), a run folder's log and
// project written by RunLog and read back by read_run, malformed logs, list_runs, delete_run,
// and continuing a run from its final checkpoint (session/continuation.h).
#include "support/check.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "graph/project.h"
#include "io/atomic_file.h"
#include "session/continuation.h"
#include "session/run_log.h"
#include "support/env.h"
#include "support/suite_dir.h"
#include "support/test_support.h"
#include "train/checkpoint.h"
#include "train/event_json.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::session;
using plexus::testing::contains;
using plexus::testing::message_of;
using plexus::testing::read_all;
using plexus::testing::suite_subdir;
using plexus::testing::write_raw;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(PLEXUS_SOURCE_DIR) / "examples";

train::EpochEnd classified_epoch(int epoch) {
  train::EpochEnd e;
  e.epoch = epoch;
  e.train_loss = 1.0 / epoch;
  e.train_accuracy = 0.5 + 0.1 * epoch;
  e.has_eval = true;
  e.eval_loss = 1.5 / epoch;
  e.eval_accuracy = 0.4 + 0.1 * epoch;
  e.eval_top5 = 0.9;
  e.per_class_accuracy = {0.25, std::nan("")};  // the second class had no examples
  e.classes = 2;
  e.confusion = {1, 3, 0, 0};
  e.lr = 0.1;
  e.seconds = 2.5;
  e.data_wait_seconds = 0.25;
  e.train_seconds = 2.25;
  return e;
}

train::BatchEnd batch(int epoch, int64_t index, int64_t batches, double loss) {
  train::BatchEnd b;
  b.epoch = epoch;
  b.batch = index;
  b.batches = batches;
  b.loss = loss;
  b.running_loss = loss;
  b.running_accuracy = 0.5;
  b.samples_per_second = 1000;
  b.lr = 0.1;
  return b;
}

std::string line(const train::Event& e, bool classification = true) { return train::to_json(e, classification).dump(); }

train::Event round_trip(const train::Event& e, bool classification = true) {
  return train::event_from_json(train::parse_json_line(line(e, classification), "t:1"), "t:1");
}

// A valid header line, as RunLog writes it.
std::string header_line(const std::string& extra = "") {
  return R"({"event":"run","format":1,"started":"2025-06-01T14:03:12.345+02:00","project":"/p/mlp.plexus",)"
         R"("device":"cpu, 2 threads","classification":true,"first_epoch":1,"train_subset":0,)"
         R"("settings":{"lr":0.05,"epochs":3,"optimizer":"adam"},"continued_from":null)" +
         extra + "}";
}

// Writes `text` to `file`, making its folder.
void put(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  write_raw(file, text);
}

fs::path write_log(const std::string& name, const std::string& text) {
  const fs::path dir = suite_subdir(name);
  put(dir / kRunLogFile, text);
  return dir;
}

// The DataError read_run throws for a log with this text.
std::string read_error(const std::string& name, const std::string& text) {
  const fs::path dir = write_log(name, text);
  return message_of<DataError>([&] { read_run(dir); });
}

// The housing example (a committed CSV) trained for `epochs`, kept in `folder` as both front
// ends keep a run; `from` continues a run.
struct HousingRun {
  graph::Graph graph;
  train::RunResult result;
  RunOptions options{.project_dir = kExamples, .train_subset = 100};
};

HousingRun train_housing(const fs::path& folder, int64_t epochs, const RunRecord* from = nullptr) {
  HousingRun h;
  h.graph = graph::load_project(kExamples / "housing_regression.plexus");
  h.graph.training.epochs = epochs;
  h.graph.training.schedule = "step";
  h.graph.training.step_size = 1;
  h.graph.training.gamma = 0.5;
  TrainingRun run = from ? make_continued_run(*from, h.graph, h.options) : make_training_run(h.graph, h.options);
  RunLog log(folder, h.graph, run_header(run, kExamples / "housing_regression.plexus", h.options, from));
  RunCheckpoints checkpoints(folder, h.graph, run);
  train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(),
                         run.trainer_options);
  trainer.set_scheduler(run.scheduler.get());
  trainer.set_callback([&](const train::Event& e) {
    log.record(e);
    if (const auto* epoch = std::get_if<train::EpochEnd>(&e)) checkpoints.epoch_ended(*epoch);
  });
  h.result = trainer.run();
  finish_run(checkpoints, log, h.result);
  return h;
}

}  // namespace

// ---- events as JSON lines ------------------------------------------------------------------

TEST(everyEventReadsBackAsItWasWritten) {
  const train::BatchEnd b = batch(2, 7, 30, 0.75);
  const auto rb = std::get<train::BatchEnd>(round_trip(b));
  COMPARE(rb.epoch, 2);
  COMPARE(rb.batch, int64_t(7));
  COMPARE(rb.batches, int64_t(30));
  COMPARE(rb.loss, 0.75);
  COMPARE(rb.running_accuracy, 0.5);
  COMPARE(rb.samples_per_second, 1000.0);
  // Speed figures that are not known are left out, and read back as 0.
  VERIFY(!contains(line(b), "gflops"));
  COMPARE(rb.gflops, 0.0);
  COMPARE(rb.peak_gflops, 0.0);
  train::BatchEnd fast = b;
  fast.gflops = 0.4;
  fast.peak_gflops = 228;
  const auto rfast = std::get<train::BatchEnd>(round_trip(fast));
  COMPARE(rfast.gflops, 0.4);
  COMPARE(rfast.peak_gflops, 228.0);
  train::BatchEnd timed = b;
  timed.eta_seconds = 95.5;
  COMPARE(std::get<train::BatchEnd>(round_trip(timed)).eta_seconds, 95.5);
  // A log written before the estimate was kept reads it as 0.
  COMPARE(std::get<train::BatchEnd>(train::event_from_json(
              train::parse_json_line(R"({"event":"batch","epoch":1,"batch":1,"batches":2,"loss":1,"running_loss":1,)"
                                     R"("samples_per_second":5,"lr":0.1})",
                                     "t:3"),
              "t:3"))
              .eta_seconds,
          0.0);

  train::EpochEnd e = classified_epoch(3);
  e.samples_per_second = 41200;
  e.gflops = 16.9;
  e.peak_gflops = 228;
  const auto re = std::get<train::EpochEnd>(round_trip(e));
  COMPARE(re.epoch, 3);
  COMPARE(re.train_loss, e.train_loss);
  COMPARE(re.train_accuracy, e.train_accuracy);
  VERIFY(re.has_eval);
  COMPARE(re.eval_loss, e.eval_loss);
  COMPARE(re.eval_accuracy, e.eval_accuracy);
  COMPARE(re.eval_top5, 0.9);
  COMPARE(re.classes, int64_t(2));
  COMPARE(re.per_class_accuracy[0], 0.25);
  VERIFY(std::isnan(re.per_class_accuracy[1]));  // written as null
  COMPARE(re.confusion, e.confusion);
  COMPARE(re.lr, 0.1);
  COMPARE(re.seconds, 2.5);
  COMPARE(re.data_wait_seconds, 0.25);
  COMPARE(re.train_seconds, 2.25);
  COMPARE(re.samples_per_second, 41200.0);
  COMPARE(re.gflops, 16.9);
  COMPARE(re.peak_gflops, 228.0);
  // A log written before data_wait_seconds, train_seconds and the speed existed reads them as 0.
  const auto old = std::get<train::EpochEnd>(train::event_from_json(
      train::parse_json_line(R"({"event":"epoch","epoch":2,"train_loss":1,"lr":0.1,"seconds":1})", "t:2"), "t:2"));
  COMPARE(old.data_wait_seconds, 0.0);
  COMPARE(old.train_seconds, 0.0);
  COMPARE(old.samples_per_second, 0.0);
  COMPARE(old.gflops, 0.0);

  const auto rt = std::get<train::TestEnd>(round_trip(train::TestEnd{e}));
  VERIFY(rt.figures.has_eval);
  COMPARE(rt.figures.eval_accuracy, e.eval_accuracy);
  VERIFY(contains(line(train::TestEnd{e}), R"("event":"test")"));

  const auto rf = std::get<train::Finished>(round_trip(train::Finished{true, 4, 12.5}));
  VERIFY(rf.cancelled);
  COMPARE(rf.epochs_completed, 4);
  COMPARE(rf.seconds, 12.5);
  COMPARE(std::get<train::Failed>(round_trip(train::Failed{"the loss became NaN"})).message,
          std::string("the loss became NaN"));
  COMPARE(std::get<train::Notice>(round_trip(train::Notice{"the training step runs as a CUDA graph"})).text,
          std::string("the training step runs as a CUDA graph"));
}

TEST(editsReadBack) {
  const train::GraphEdit e{2, 14, 27, {"Linear 'fc2': out_features 16 → 24"}, 3, 3, "kept 3 tensors; reset ..."};
  const auto rt = std::get<train::GraphEdit>(round_trip(e));
  COMPARE(rt.epoch, 2);
  COMPARE(rt.batch, int64_t(14));
  COMPARE(rt.batches, int64_t(27));
  COMPARE(rt.changes, e.changes);
  COMPARE(rt.kept, int64_t(3));
  COMPARE(rt.reset, int64_t(3));
  COMPARE(rt.carried, e.carried);
  COMPARE(rt.step(), 27 + 14 + 0.5);
}

TEST(nodeStatisticsReadBack) {
  train::NodeStats s{2, 40, 640, {}, {}};
  train::NodeStat relu;
  relu.node = "relu1";
  relu.mean = 0.25;
  relu.std = 0.5;
  relu.zero_fraction = 0.75;
  relu.dead_fraction = 0.625;
  relu.max = 3;
  relu.histogram.assign(train::kHistogramBins, 0.f);
  relu.histogram[0] = 1;
  train::NodeStat fc = relu;
  fc.node = "fc1";
  fc.has_params = true;
  fc.weight_norm = 4;
  fc.grad_norm = 1e-9;
  fc.update_ratio = 1e-3;
  fc.finite = false;
  s.nodes = {fc, relu};
  s.health = {{"relu1", train::HealthKind::DeadUnits, "62% of units output zero"},
              {"fc1", train::HealthKind::NonFinite, "its output holds NaN"}};
  const auto rt = std::get<train::NodeStats>(round_trip(s));
  COMPARE(rt.step, int64_t(640));
  COMPARE(rt.nodes.size(), size_t(2));
  COMPARE(rt.nodes[0].node, std::string("fc1"));
  VERIFY(rt.nodes[0].has_params && !rt.nodes[0].finite);
  COMPARE(rt.nodes[0].grad_norm, 1e-9);
  VERIFY(!rt.nodes[1].has_params);  // no norms written for a node without parameters
  VERIFY(!contains(line(train::NodeStats{1, 1, 1, {relu}, {}}), "grad_norm"));
  COMPARE(rt.nodes[1].histogram, relu.histogram);
  COMPARE(rt.nodes[1].dead_fraction, 0.625);
  COMPARE(rt.health.size(), size_t(2));
  VERIFY(rt.health[1].kind == train::HealthKind::NonFinite);
  COMPARE(rt.health[0].reason, std::string("62% of units output zero"));
}

TEST(aTextProjectsSamplesReadBack) {
  train::EpochEnd e = classified_epoch(2);
  e.samples = {"anna", "b\u00e9la \"quoted\"", ""};
  VERIFY(contains(line(e), R"("samples":["anna")"));
  COMPARE(std::get<train::EpochEnd>(round_trip(e)).samples, e.samples);
  VERIFY(!contains(line(classified_epoch(2)), "\"samples\""));  // other projects write none
}

TEST(aRegressionWritesLossesOnly) {
  const std::string text = line(classified_epoch(1), /*classification=*/false);
  VERIFY2(!contains(text, "accuracy") && !contains(text, "confusion") && contains(text, "eval_loss"), text.c_str());
  const auto e = std::get<train::EpochEnd>(round_trip(classified_epoch(1), false));
  VERIFY(e.has_eval);
  COMPARE(e.train_accuracy, 0.0);
  COMPARE(e.classes, int64_t(0));
}

TEST(malformedEventLinesNameTheLineAndTheKey) {
  using train::event_from_json;
  using train::parse_json_line;
  const auto error = [](const std::string& text) {
    return message_of<DataError>([&] { event_from_json(parse_json_line(text, "m.jsonl:4"), "m.jsonl:4"); });
  };
  COMPARE(error(R"({"event":"batch","epoch":1)"), std::string("m.jsonl:4: not a line of JSON"));
  COMPARE(error("[1, 2]"), std::string("m.jsonl:4: expected a JSON object, got [1,2]"));
  COMPARE(error(R"({"event":"lunch"})"),
          std::string("m.jsonl:4: unknown event 'lunch' (expected batch, epoch, test, notice, node_stats, edit, finished or failed)"));
  COMPARE(error(R"({"event":"node_stats","epoch":1,"batch":1,"step":1,"nodes":[],"health":[{"node":"a","kind":"sad","reason":""}]})"),
          std::string("m.jsonl:4: health[0]: key 'kind' must be a kind of health issue (dead_units, vanishing_gradient, ...), got \"sad\""));
  COMPARE(error(R"({"epoch":1})"), std::string("m.jsonl:4: key 'event' must be a string, but it is missing"));
  COMPARE(error(R"({"event":"epoch","epoch":"two","train_loss":1,"lr":0.1,"seconds":1})"),
          std::string("m.jsonl:4: key 'epoch' must be a whole number, got \"two\""));
  COMPARE(error(R"({"event":"epoch","epoch":2,"train_loss":1,"lr":0.1})"),
          std::string("m.jsonl:4: key 'seconds' must be a number, but it is missing"));
  COMPARE(error(R"({"event":"epoch","epoch":2,"train_loss":1,"lr":0.1,"seconds":1,"colour":"red"})"),
          std::string("m.jsonl:4: unexpected key 'colour'"));
  COMPARE(error(R"({"event":"finished","cancelled":"no","epochs":2,"seconds":1})"),
          std::string("m.jsonl:4: key 'cancelled' must be true or false, got \"no\""));
  COMPARE(error(R"({"event":"epoch","epoch":-1,"train_loss":1,"lr":0.1,"seconds":1})"),
          std::string("m.jsonl:4: key 'epoch' must be a count, got -1"));
  const std::string confusion = error(
      R"({"event":"test","eval_loss":1,"eval_accuracy":0.5,"eval_top5":1,"per_class_accuracy":[0.5,0.5],"confusion":[1,2,3]})");
  VERIFY2(contains(confusion, "key 'confusion' must be an array of 4 counts"), confusion.c_str());
  COMPARE(error(R"({"event":"test"})"),
          std::string("m.jsonl:4: key 'eval_loss' must be a number (the test split's loss), but it is missing"));
  COMPARE(error(R"({"event":"epoch","epoch":2,"train_loss":1,"lr":0.1,"seconds":1,"samples":"anna"})"),
          std::string("m.jsonl:4: key 'samples' must be an array, got \"anna\""));
  COMPARE(error(R"({"event":"epoch","epoch":2,"train_loss":1,"lr":0.1,"seconds":1,"samples":["anna",3]})"),
          std::string("m.jsonl:4: key 'samples' must be an array of strings, got [\"anna\",3]"));
}

// ---- writing and reading a run folder ---------------------------------------------------

TEST(aTrainedRunReadsBackWithEveryEpoch) {
  const fs::path folder = suite_subdir("trained") / "run";
  const HousingRun h = train_housing(folder, 3);
  VERIFY2(h.result.status == train::RunStatus::Completed, h.result.message.c_str());
  for (const char* f : {"metrics.jsonl", "project.plexus", "best.safetensors", "final.safetensors"})
    VERIFY2(fs::is_regular_file(folder / f), f);
  // project.plexus is the project as it trained, without the editor's view.
  graph::Graph expected = h.graph;
  expected.view.clear();
  COMPARE(read_all(folder / kRunProjectFile), graph::serialize_project(expected));

  const RunRecord r = read_run(folder);
  COMPARE(r.status, RunStatus::Completed);
  VERIFY(r.message.empty());
  COMPARE(r.header.project, (kExamples / "housing_regression.plexus").lexically_normal().string());
  VERIFY2(r.header.device.starts_with("cpu, "), r.header.device.c_str());
  VERIFY(!r.header.classification);
  COMPARE(r.header.first_epoch, 1);
  COMPARE(r.header.train_subset, int64_t(100));
  VERIFY(r.header.settings == h.graph.training);  // every setting, through the table
  VERIFY(r.header.continued_from.empty());
  VERIFY(r.header.started.size() == 29 && r.header.started[10] == 'T');
  COMPARE(r.epochs.size(), size_t(3));
  COMPARE(r.epochs_completed, 3);
  double best = 1e300;
  for (size_t i = 0; i < 3; ++i) {
    COMPARE(r.epochs[i].epoch, int(i) + 1);
    COMPARE(r.epochs[i].eval_loss, h.result.history[i].eval_loss);
    COMPARE(r.epochs[i].lr, h.result.history[i].lr);
    best = std::min(best, h.result.history[i].eval_loss);
  }
  COMPARE(*r.best_eval_loss, best);
  VERIFY(!r.best_eval_accuracy);  // a regression
  COMPARE(r.batch_lines, int64_t(3 * 4));  // 100 examples in batches of 32
  COMPARE(r.batches.size(), size_t(12));
  COMPARE(r.seconds, h.result.seconds);
  VERIFY(r.has_best && r.has_final);
  // The last per-node statistics: stats_every 20 of 12 steps samples the first one only.
  VERIFY(r.node_stats);
  COMPARE(r.node_stats->step, int64_t(1));
  std::vector<std::string> nodes;
  for (const train::NodeStat& n : r.node_stats->nodes) nodes.push_back(n.node);
  COMPARE(nodes, (std::vector<std::string>{"fc1", "act1", "fc2", "act2", "out"}));
}

TEST(aLogIsNeverWrittenOverAndAnEmptyFolderWritesNothing) {
  const fs::path folder = suite_subdir("twice");
  const graph::Graph g = graph::load_project(kExamples / "housing_regression.plexus");
  { RunLog first(folder, g, {}); }
  const std::string before = read_all(folder / kRunLogFile);
  const std::string msg = message_of<IoError>([&] { RunLog second(folder, g, {}); });
  VERIFY2(contains(msg, "already holds a run"), msg.c_str());
  COMPARE(read_all(folder / kRunLogFile), before);

  RunLog none({}, g, {});
  none.record(batch(1, 1, 1, 1.0));
  none.end({});
  VERIFY(none.folder().empty());
}

TEST(aFinalCheckpointThatCannotBeSavedEndsTheLogWithWhy) {
  const fs::path folder = suite_subdir("unsaved");
  graph::Graph g = graph::load_project(kExamples / "housing_regression.plexus");
  TrainingRun run = make_training_run(g, {.project_dir = kExamples, .train_subset = 10});
  RunLog log(folder, g, run_header(run, {}, {}, nullptr));
  RunCheckpoints checkpoints(folder, g, run);
  train::RunResult result;
  result.epochs_completed = 1;
  io::fail_next_write_step(io::WriteStep::Write, ENOSPC);
  VERIFY(contains(message_of<IoError>([&] { finish_run(checkpoints, log, result); }), "final.safetensors"));
  const RunRecord r = read_run(folder);
  COMPARE(r.status, RunStatus::Failed);
  VERIFY2(r.message.starts_with("the final checkpoint could not be saved: "), r.message.c_str());
  VERIFY(!r.has_final);
  VERIFY(r.header.project.empty());  // a project not saved
}

TEST(theRunsStatusComesFromItsLastLine) {
  const std::string epoch = line(classified_epoch(1));
  const fs::path stopped = write_log("stopped", header_line() + "\n" + epoch + "\n" + line(train::Finished{true, 1, 3}) + "\n");
  COMPARE(read_run(stopped).status, RunStatus::Stopped);
  const fs::path failed = write_log("failed", header_line() + "\n" + line(train::Notice{"CUDA graphs not used: x"}) +
                                                  "\n" + line(train::Failed{"out of memory"}) + "\n");
  const RunRecord f = read_run(failed);
  COMPARE(f.notices, std::vector<std::string>{"CUDA graphs not used: x"});
  COMPARE(f.status, RunStatus::Failed);
  COMPARE(f.message, std::string("out of memory"));
  COMPARE(f.epochs_completed, 0);
  // No end line: the app died during the run; what it wrote is there.
  const fs::path died = write_log("died", header_line() + "\n" + line(batch(1, 1, 2, 2.0)) + "\n" + epoch + "\n");
  const RunRecord d = read_run(died);
  COMPARE(d.status, RunStatus::Incomplete);
  COMPARE(d.message, std::string("it has no end line"));
  COMPARE(d.epochs.size(), size_t(1));
  COMPARE(*d.best_eval_accuracy, 0.5);
  COMPARE(to_string(d.status), std::string("incomplete"));
  COMPARE(d.header.settings.lr, 0.05);
  COMPARE(d.header.settings.optimizer, std::string("adam"));
  COMPARE(d.header.settings.batch_size, int64_t(100));  // not in the header: the default
  VERIFY(!d.has_best && !d.has_final);
}

TEST(aLastLineCutShortIsLeftOut) {
  const std::string epoch1 = line(classified_epoch(1)), epoch2 = line(classified_epoch(2));
  const fs::path dir = write_log("cut", header_line() + "\n" + epoch1 + "\n" + epoch2.substr(0, epoch2.size() / 2));
  const RunRecord r = read_run(dir);
  COMPARE(r.status, RunStatus::Incomplete);
  COMPARE(r.message, std::string("its last line is cut short"));
  COMPARE(r.epochs.size(), size_t(1));
  COMPARE(r.epochs_completed, 1);
  // A whole last line without its newline is still read.
  const fs::path whole = write_log("whole", header_line() + "\n" + epoch1 + "\n" + line(train::Finished{false, 1, 2}));
  COMPARE(read_run(whole).status, RunStatus::Completed);
}

// What the GUI follows a run with: the log handed over in pieces that split lines anywhere
// gives the events of its whole lines, in order, each once, and says when the run has ended.
TEST(aLogReadPieceByPieceGivesItsWholeLines) {
  const std::vector<train::Event> events{batch(1, 1, 2, 0.9), batch(1, 2, 2, 0.8), classified_epoch(1),
                                         train::Notice{"a notice"}, batch(2, 1, 2, 0.7), batch(2, 2, 2, 0.6),
                                         classified_epoch(2), train::Finished{false, 2, 3.5}};
  std::string text = header_line() + "\n";
  for (const train::Event& e : events) text += line(e) + "\n";
  // Split all over, and not at all.
  std::vector<size_t> splits{text.size()};
  for (size_t split = 0; split < text.size(); split += text.size() / 97 + 1) splits.push_back(split);
  for (const size_t split : splits) {
    RunLogReader reader("run/metrics.jsonl");
    std::vector<train::Event> got;
    const auto take = [&](train::Event e) { got.push_back(std::move(e)); };
    reader.feed(std::string_view(text).substr(0, split), take);
    COMPARE(reader.header().has_value(), split > header_line().size());  // only once its newline came
    COMPARE(reader.ended(), split == text.size());
    reader.feed(std::string_view(text).substr(split), take);
    COMPARE(got.size(), events.size());
    for (size_t i = 0; i < events.size(); ++i) COMPARE(got[i].index(), events[i].index());
    COMPARE(std::get<train::BatchEnd>(got[5]).loss, 0.6);
    COMPARE(std::get<train::EpochEnd>(got[6]).epoch, 2);
    // The header's number of epochs, which the lines leave out.
    COMPARE(std::get<train::BatchEnd>(got[0]).epochs, 3);
    COMPARE(std::get<train::EpochEnd>(got[2]).epochs, 3);
    VERIFY(reader.ended());
    COMPARE(reader.lines(), int64_t(events.size() + 1));
    COMPARE(reader.last_epoch(), 2);
  }
  // A line without its newline waits for it, however much of it has come.
  RunLogReader reader("run/metrics.jsonl");
  std::vector<train::Event> got;
  const auto take = [&](train::Event e) { got.push_back(std::move(e)); };
  const std::string finished = line(train::Finished{true, 0, 1});
  reader.feed(header_line() + "\n" + finished, take);
  VERIFY(got.empty());
  VERIFY(!reader.ended());
  reader.feed("\n", take);
  COMPARE(got.size(), size_t(1));
  VERIFY(std::get<train::Finished>(got[0]).cancelled);
  VERIFY(reader.ended());
  // A bad line: the events before it come, then the error names its line.
  RunLogReader bad("run/metrics.jsonl");
  got.clear();
  COMPARE(message_of<DataError>([&] {
            bad.feed(header_line() + "\n" + line(batch(1, 1, 2, 0.9)) + "\nlunch at noon\n", take);
          }),
          std::string("run/metrics.jsonl:3: not a line of JSON"));
  COMPARE(got.size(), size_t(1));
  // The header alone, of a log still being written (its last line not there yet) or of one
  // whose header is all there is so far.
  const fs::path going = write_log("going", header_line() + "\n" + line(batch(1, 1, 2, 0.9)) + "\n{\"event\":\"ba");
  COMPARE(read_run_header(going).settings.epochs, int64_t(3));
  COMPARE(read_run_header(write_log("header-only", header_line())).device, std::string("cpu, 2 threads"));
  VERIFY(contains(message_of<DataError>([&] { read_run_header(write_log("no-header", "")); }), "expected the run header"));
}

TEST(malformedLogsAreRefusedWithFileAndLine) {
  const std::string epoch = line(classified_epoch(1));
  const auto at = [](const std::string& name, int line_number) {
    return (testing::suite_dir().file(name) / kRunLogFile).string() + ":" + std::to_string(line_number) + ": ";
  };
  COMPARE(read_error("garbage", header_line() + "\n" + epoch + "\nlunch at noon\n" + epoch + "\n"),
          at("garbage", 3) + "not a line of JSON");
  COMPARE(read_error("headless", epoch + "\n"),
          at("headless", 1) + "expected the run header ({\"event\":\"run\", ...}) first, got event 'epoch'");
  COMPARE(read_error("empty", ""),
          (testing::suite_dir().file("empty") / kRunLogFile).string() + ": empty, expected the run header on line 1");
  COMPARE(read_error("header-cut", header_line().substr(0, 40)), at("header-cut", 1) + "the run header is cut short");
  COMPARE(read_error("wrong-type", header_line() + "\n" + R"({"event":"batch","epoch":1,"batch":"1"})" + "\n"),
          at("wrong-type", 2) + "key 'batch' must be a whole number, got \"1\"");
  std::string header = header_line();
  header.replace(header.find(R"("first_epoch":1)"), 15, R"("first_epoch":true)");
  COMPARE(read_error("header-type", header + "\n"), at("header-type", 1) + "key 'first_epoch' must be a whole number, got true");
  header = header_line();
  header.replace(header.find(R"("lr":0.05)"), 9, R"("lr":"fast")");
  COMPARE(read_error("settings-type", header + "\n"), at("settings-type", 1) + "settings: key 'lr' must be a number, got \"fast\"");
  COMPARE(read_error("header-extra", header_line(R"(,"colour":"red")") + "\n"), at("header-extra", 1) + "unexpected key 'colour'");
  header = header_line();
  header.replace(header.find(R"("format":1)"), 10, R"("format":2)");
  COMPARE(read_error("format", header + "\n"),
          at("format", 1) + "key 'format' must be 1 (the run log format this build reads), got 2");
  COMPARE(read_error("after-end", header_line() + "\n" + line(train::Finished{false, 0, 1}) + "\n" + epoch + "\n"),
          at("after-end", 3) + "a line after the end of the run");
  COMPARE(read_error("order", header_line() + "\n" + line(classified_epoch(2)) + "\n" + epoch + "\n"),
          at("order", 3) + "epoch 1 after epoch 2");
  const fs::path not_a_run = suite_subdir("not-a-run");
  VERIFY(contains(message_of<IoError>([&] { read_run(not_a_run); }), "not a run folder"));
}

TEST(longRunsKeepAnEvenSampleOfTheirBatches) {
  std::string text = header_line() + "\n";
  const int64_t total = 10007;
  for (int64_t i = 1; i <= total; ++i) text += line(batch(int((i - 1) / 1000) + 1, (i - 1) % 1000 + 1, 1000, double(i))) + "\n";
  const RunRecord r = read_run(write_log("long", text));
  COMPARE(r.batch_lines, total);
  VERIFY(r.batches.size() <= kRunBatchPoints && r.batches.size() >= kRunBatchPoints / 4);
  COMPARE(r.batches.front().loss, 1.0);
  COMPARE(r.batches.back().loss, double(total));  // the last batch is always there
  const double stride = r.batches[1].loss - r.batches[0].loss;
  for (size_t i = 1; i + 1 < r.batches.size(); ++i) COMPARE(r.batches[i].loss - r.batches[i - 1].loss, stride);
  std::printf("%lld batch lines kept as %zu points, every %g-th\n", (long long)total, r.batches.size(), stride);
}

TEST(listRunsFindsTheProjectsRunsNewestFirst) {
  const fs::path dir = suite_subdir("list");
  const fs::path project = dir / "mlp.plexus";
  VERIFY(list_runs(project).empty());
  for (const char* name : {"20250101-100000-000", "20250301-100000-000", "20250201-100000-000"})
    put(dir / "mlp.runs" / name / kRunLogFile, header_line() + "\n");
  fs::create_directories(dir / "mlp.runs" / "20250401-100000-000");  // checkpoints only, no log
  const std::vector<fs::path> runs = list_runs(project);
  COMPARE(runs.size(), size_t(3));
  COMPARE(runs[0].filename().string(), std::string("20250301-100000-000"));
  COMPARE(runs[2].filename().string(), std::string("20250101-100000-000"));
  VERIFY(list_runs({}).empty());
  const testing::ScopedEnv runs_dir("PLEXUS_RUNS_DIR", (dir / "mlp.runs").string());
  COMPARE(list_runs(dir / "elsewhere" / "other.plexus").size(), size_t(3));
}

TEST(deletingARunRemovesOnlyWhatARunWrites) {
  const fs::path dir = suite_subdir("delete");
  for (const char* f : {"metrics.jsonl", "project.plexus", "launch.plexus", "best.safetensors", "final.safetensors",
                        ".final.safetensors.tmp-1-2-3"})
    put(dir / "run" / f, "x");
  VERIFY(delete_run(dir / "run"));
  VERIFY(!fs::exists(dir / "run"));

  put(dir / "shared" / kRunLogFile, "x");
  put(dir / "shared" / "notes.txt", "keep me");
  VERIFY(!delete_run(dir / "shared"));
  VERIFY(!fs::exists(dir / "shared" / kRunLogFile));
  COMPARE(read_all(dir / "shared" / "notes.txt"), std::string("keep me"));

  put(dir / "plain" / "final.safetensors", "x");
  VERIFY(contains(message_of<IoError>([&] { delete_run(dir / "plain"); }), "not a run folder"));
  VERIFY(fs::exists(dir / "plain" / "final.safetensors"));
}

// ---- continuing ---------------------------------------------------------------------------

TEST(aContinuedRunGoesOnFromTheFinalCheckpoint) {
  const fs::path dir = suite_subdir("continue");
  train_housing(dir / "first", 2);
  const RunRecord first = read_run(dir / "first");

  // Before training, the continued model is the final checkpoint's: the same validation loss.
  graph::Graph g = graph::load_project(kExamples / "housing_regression.plexus");
  g.training.epochs = 3;
  g.training.schedule = "step";
  g.training.step_size = 1;
  g.training.gamma = 0.5;
  g.training.lr = 0.004;  // not the run's 0.01: the project's settings decide
  TrainingRun run = make_continued_run(first, g, {.project_dir = kExamples, .train_subset = 100});
  COMPARE(g.training.epochs, int64_t(5));
  COMPARE(run.trainer_options.first_epoch, 3);
  COMPARE(run.trainer_options.epochs, 5);
  COMPARE(train::evaluate(*run.compiled.model, *run.eval_loader, run.trainer_options).eval_loss,
          first.epochs.back().eval_loss);
  // The step schedule goes on at epoch 2: the project's lr halved twice (the checkpoint holds
  // the run's 0.01 halved twice).
  COMPARE(run.optimizer->param_groups()[0].lr, 0.004 * 0.25);
  // Without a schedule, the project's lr as it is.
  graph::Graph constant = graph::load_project(kExamples / "housing_regression.plexus");
  constant.training.lr = 0.02;
  COMPARE(make_continued_run(first, constant, {.project_dir = kExamples})
              .optimizer->param_groups()[0]
              .lr,
          0.02);

  const HousingRun second = train_housing(dir / "second", 3, &first);
  VERIFY2(second.result.status == train::RunStatus::Completed, second.result.message.c_str());
  const RunRecord r = read_run(dir / "second");
  COMPARE(r.header.first_epoch, 3);
  COMPARE(r.header.settings.epochs, int64_t(5));
  COMPARE(r.header.continued_from, fs::absolute(dir / "first").lexically_normal().string());
  COMPARE(r.epochs.size(), size_t(3));
  COMPARE(r.epochs.front().epoch, 3);
  COMPARE(r.epochs.back().epoch, 5);
  COMPARE(r.epochs_completed, 5);
  COMPARE(r.epochs.front().lr, second.graph.training.lr * 0.25);
  COMPARE(r.batches.front().epoch, 3);
}

TEST(aRunOfAnotherGraphOrWithoutAFinalCheckpointIsRefused) {
  const fs::path dir = suite_subdir("refused");
  train_housing(dir / "run", 1);
  const RunRecord from = read_run(dir / "run");
  graph::Graph g = graph::load_project(kExamples / "housing_regression.plexus");
  g.find("fc1")->params["out_features"] = int64_t(16);
  const std::string msg = message_of<ValueError>([&] { make_continued_run(from, g, {.project_dir = kExamples}); });
  VERIFY2(contains(msg, "with this project: node 'fc1' (Linear): out_features is 16 here, 64 in the run"), msg.c_str());

  // Names and positions are not structure; a missing edge or node is.
  graph::Graph same = graph::load_project(kExamples / "housing_regression.plexus");
  const graph::Graph trained = graph::load_project(dir / "run" / kRunProjectFile);
  same.find("fc1")->name = "first layer";
  same.find("fc1")->position = {5, 5};
  COMPARE(structure_difference(same, trained), std::string());
  same.edges.pop_back();
  VERIFY(structure_difference(same, trained).starts_with("the run has the edge "));
  same.nodes.push_back({"extra", "ReLU", "", {}, {}});
  COMPARE(structure_difference(same, trained), std::string("this project has node 'extra' (ReLU), the run does not"));

  fs::remove(dir / "run" / "final.safetensors");
  const std::string none = message_of<ValueError>(
      [&] { make_continued_run(read_run(dir / "run"), g, {.project_dir = kExamples}); });
  VERIFY2(contains(none, "it has no final checkpoint (the run completed)"), none.c_str());
}

TEST(aContinuedRunStoppedAtOnceCountsTheEpochsBeforeIt) {
  graph::Graph g = graph::load_project(kExamples / "housing_regression.plexus");
  TrainingRun run = make_training_run(g, {.project_dir = kExamples, .train_subset = 100});
  train::TrainerOptions o = run.trainer_options;
  o.first_epoch = 4;
  o.epochs = 6;
  train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), o);
  trainer.cancel();
  const train::RunResult r = trainer.run();
  COMPARE(r.status, train::RunStatus::Cancelled);
  COMPARE(r.epochs_completed, 3);
}

