// session/lr_finder.h: the suggestion rule on made-up curves, and the finder on the housing
// example (a CSV of 500 rows, small batches so one pass has enough steps), fresh or from a checkpoint.
#include <atomic>
#include <cmath>
#include <filesystem>

#include "graph/project.h"
#include "plexus.h"
#include "session/lr_finder.h"
#include "session/run.h"
#include "support/check.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

using namespace plexus;
using namespace plexus::session;
using plexus::testing::message_of;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(PLEXUS_SOURCE_DIR) / "examples";

// n points from lr 1e-5 to 1e1, the smoothed loss given as a function of ln(lr).
std::vector<LrPoint> curve(int n, const std::function<double(double)>& loss_of_log_lr) {
  std::vector<LrPoint> points;
  for (int i = 0; i < n; ++i) {
    const double lr = 1e-5 * std::pow(1e6, double(i) / (n - 1));
    const double loss = loss_of_log_lr(std::log(lr));
    points.push_back({lr, loss, loss});
  }
  return points;
}

graph::Graph housing(int64_t batch_size) {
  graph::Graph g = graph::load_project(kExamples / "housing_regression.plexus");
  g.training.batch_size = batch_size;
  return g;
}

}  // namespace

TEST(suggestionIsTheSteepestFallOfTheSmoothedLoss) {
  // A step down centred at lr 1e-2: the loss falls fastest there.
  const double centre = std::log(1e-2);
  const std::vector<LrPoint> points = curve(61, [&](double x) { return 2 - std::tanh(2 * (x - centre)); });
  const LrSuggestion s = suggest_learning_rate(points, false, 61);
  VERIFY2(s.lr.has_value(), s.note.c_str());
  // The steepest segment starts at the point just below the centre (a segment spans 0.1 decades).
  VERIFY2(*s.lr <= 1e-2 && *s.lr > 1e-2 / std::pow(10, 0.1) * 0.999, std::to_string(*s.lr).c_str());
  COMPARE(points[size_t(s.index)].lr, *s.lr);
  VERIFY(s.note.empty());
}

TEST(suggestionLeavesOutTheStartAndTheTailBeforeDivergence) {
  // The steepest fall is in the first tenth (the average settling) and in the last points before
  // the diverging one; between them the loss falls gently, fastest at point 30.
  std::vector<LrPoint> points = curve(50, [](double) { return 5.0; });
  for (size_t i = 0; i < points.size(); ++i) points[i].smoothed = 5.0 - 0.01 * double(i);
  points[1].smoothed = 1;                           // within the first tenth of 50 steps
  points[31].smoothed = points[30].smoothed - 0.5;  // the steepest of the points considered
  for (size_t i = 31; i < points.size(); ++i) points[i].smoothed = points[31].smoothed - 0.01 * double(i - 31);
  points[46].smoothed = -10;  // among the last 5 before the diverging point 49
  points[49].smoothed = 100;
  const LrSuggestion s = suggest_learning_rate(points, true, 50);
  VERIFY2(s.lr.has_value(), s.note.c_str());
  COMPARE(s.index, int64_t(30));
}

TEST(aLossThatNeverFallsHasNoSuggestionAndSaysWhy) {
  const LrSuggestion rising = suggest_learning_rate(curve(40, [](double x) { return x; }), false, 40);
  VERIFY(!rising.lr);
  VERIFY_CONTAINS(rising.note, "never fell");
  // Diverging at once: nothing left to choose from.
  const LrSuggestion early = suggest_learning_rate(curve(7, [](double x) { return -x; }), true, 100);
  VERIFY(!early.lr);
  VERIFY_CONTAINS(early.note, "too few points before the loss diverged");
}

TEST(finderRampsExponentiallyAndIsDeterministic) {
  const graph::Graph g = housing(4);  // 360 training rows: 90 batches
  const graph::Graph before = g;
  const LrFinderOptions o{.start_lr = 1e-6, .end_lr = 10, .steps = 60};
  int64_t reported = 0;
  const LrFinderResult a =
      find_learning_rate(g, o, {.project_dir = kExamples}, [&](const LrPoint&, int64_t step, int64_t steps) {
        reported = step;
        COMPARE(steps, int64_t(60));
      });
  COMPARE(a.planned_steps, int64_t(60));
  VERIFY(!a.points.empty() && a.points.size() <= 60);
  COMPARE(reported, int64_t(a.points.size()));
  COMPARE(a.points[0].lr, 1e-6);
  const double ratio = std::pow(1e7, 1.0 / 59);
  for (size_t i = 1; i < a.points.size(); ++i) COMPARE(a.points[i].lr / a.points[i - 1].lr, ratio);
  // Bias correction: the first smoothed loss is the first loss itself.
  COMPARE(a.points[0].smoothed, a.points[0].loss);
  VERIFY2(a.suggestion.lr.has_value(), a.suggestion.note.c_str());
  VERIFY(*a.suggestion.lr >= 1e-6 && *a.suggestion.lr <= 10);
  // A diverged ramp ends at the step whose smoothed loss passed 4x the lowest.
  if (a.diverged) {
    double lowest = a.points[0].smoothed;
    for (size_t i = 0; i + 1 < a.points.size(); ++i) lowest = std::min(lowest, a.points[i].smoothed);
    VERIFY(!(a.points.back().smoothed <= 4 * lowest));
  }

  const LrFinderResult b = find_learning_rate(g, o, {.project_dir = kExamples});
  COMPARE(b.points.size(), a.points.size());
  for (size_t i = 0; i < a.points.size(); ++i) COMPARE(b.points[i].loss, a.points[i].loss);
  COMPARE(b.suggestion.lr, a.suggestion.lr);
  // The project is left as it was: its lr and its freshly initialised model alike.
  COMPARE(g.training.lr, before.training.lr);
  TrainingRun fresh = make_training_run(g, {.project_dir = kExamples});
  TrainingRun again = make_training_run(before, {.project_dir = kExamples});
  const nn::NamedTensors w1 = fresh.compiled.model->state(), w2 = again.compiled.model->state();
  COMPARE(w1.size(), w2.size());
  for (size_t i = 0; i < w1.size(); ++i) COMPARE(w1[i].second.to_vector(), w2[i].second.to_vector());
}

TEST(finderStopsWhenCancelled) {
  std::atomic<bool> cancel{false};
  const LrFinderResult r = find_learning_rate(housing(4), {.steps = 60, .cancel = &cancel}, {.project_dir = kExamples},
                                              [&](const LrPoint&, int64_t step, int64_t) {
                                                if (step == 5) cancel = true;
                                              });
  VERIFY(r.cancelled);
  COMPARE(r.points.size(), size_t(5));
  VERIFY(!r.suggestion.lr);
}

TEST(finderRefusesTooFewBatchesAndBadRanges) {
  const std::string few =
      message_of<ValueError>([&] { find_learning_rate(housing(128), {}, {.project_dir = kExamples}); });
  VERIFY_CONTAINS(few, "the training split has 3 batches of 128 and the finder needs at least 8");
  const std::string range = message_of<ValueError>(
      [&] { find_learning_rate(housing(4), {.start_lr = 1, .end_lr = 0.1}, {.project_dir = kExamples}); });
  VERIFY_CONTAINS(range, "lr finder: end lr must be a number > the start lr (1), got 0.1");
  graph::Graph bad = housing(4);
  bad.training.batch_size = 0;
  const std::string settings = message_of<ValueError>([&] { find_learning_rate(bad, {}, {.project_dir = kExamples}); });
  VERIFY_CONTAINS(settings, "batch_size");
}

// init_from: the ramp starts from a checkpoint's weights (a model being fine-tuned), not fresh
// ones: its first loss is the trained model's, far below a fresh model's; the file is not changed.
TEST(finderStartsFromGivenWeights) {
  const graph::Graph g = housing(4);
  const testing::TempDir dir;
  const fs::path checkpoint = dir.file("trained.safetensors");
  {
    TrainingRun run = make_training_run(g, {.project_dir = kExamples});
    train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(),
                     run.trainer_options);
    COMPARE(t.run().status, train::RunStatus::Completed);
    train::save_checkpoint(checkpoint, *run.compiled.model, run.optimizer.get());
  }
  const std::string bytes = testing::read_all(checkpoint);
  const LrFinderOptions fresh_options{.start_lr = 1e-7, .end_lr = 1e-6, .steps = 10};
  LrFinderOptions from_options = fresh_options;
  from_options.init_from = checkpoint.string();
  const LrFinderResult fresh = find_learning_rate(g, fresh_options, {.project_dir = kExamples});
  const LrFinderResult from = find_learning_rate(g, from_options, {.project_dir = kExamples});
  VERIFY(fresh.initialised.empty());
  VERIFY_CONTAINS(from.initialised, "trained.safetensors");
  // The same batches at a rate too small to learn: the losses differ by the weights alone.
  VERIFY2(from.points[0].loss < 0.5 * fresh.points[0].loss,
          (std::to_string(from.points[0].loss) + " vs " + std::to_string(fresh.points[0].loss)).c_str());
  COMPARE(testing::read_all(checkpoint), bytes);
}
