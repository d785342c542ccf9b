// Learning-rate warm-up per optimizer step (optim/step_warmup.h, TrainerOptions::warmup): the
// factor's formula; the lr a run reports for steps 1 .. N + 1, composed with a step schedule
// across an epoch boundary; the lr the updates really use (the same weights as a loop that sets
// it by hand); and a run that goes on mid-epoch or continues at a later epoch warming up where
// one run would be.
#include "support/check.h"

#include <cmath>

#include "support/small_classifier.h"
#include "optim/scheduler.h"
#include "optim/step_warmup.h"
#include "train/step.h"
#include "train/trainer.h"
#include "plexus.h"

using namespace plexus;

namespace {

constexpr double kLr = 0.1;
constexpr int64_t kBatches = 9;  // 70 points in batches of 8

// The same model, optimizer (SGD with momentum), halving step schedule and data each time.
struct Setup : testing::SmallClassifier {
  std::unique_ptr<optim::LRScheduler> schedule;
};

Setup make_setup() {
  Setup s{testing::small_classifier({.optimizer = "sgd", .lr = kLr, .momentum = 0.9}), nullptr};
  s.schedule = std::make_unique<optim::StepLR>(*s.opt, 1, 0.5);
  return s;
}

train::TrainerOptions warmed_up(int epochs, int64_t steps, double start) {
  train::TrainerOptions o;
  o.epochs = epochs;
  o.seed = 7;
  o.warmup = {.steps = steps, .start_factor = start};
  o.base_lr = kLr;
  return o;
}

struct Recorded {
  std::vector<train::BatchEnd> batches;
  std::vector<train::EpochEnd> epochs;
};

train::RunResult run(Setup& s, const train::TrainerOptions& o, Recorded& r,
                     const std::function<void(train::Trainer&, const train::BatchEnd&)>& after_batch = {}) {
  train::Trainer t(*s.model, *s.opt, *s.loader, nullptr, o);
  t.set_scheduler(s.schedule.get());
  t.set_callback([&](const train::Event& e) {
    if (const auto* b = std::get_if<train::BatchEnd>(&e)) {
      r.batches.push_back(*b);
      if (after_batch) after_batch(t, *b);
    }
    if (const auto* ep = std::get_if<train::EpochEnd>(&e)) r.epochs.push_back(*ep);
  });
  return t.run();
}

// lr = base × schedule(epoch) × warm-up(step), for the `step`th step of the run (from 1).
double expected_lr(int64_t step, int64_t warmup_steps, double start) {
  const int64_t epoch = (step - 1) / kBatches;  // from 0
  const double warm = step - 1 >= warmup_steps ? 1 : start + (1 - start) * double(step - 1) / double(warmup_steps);
  return kLr * std::pow(0.5, double(epoch)) * warm;
}

}  // namespace

TEST(theFactorRisesLinearlyToOne) {
  const optim::StepWarmup w{.steps = 4, .start_factor = 0.25};
  const std::vector<double> expected{0.25, 0.4375, 0.625, 0.8125, 1, 1, 1};
  for (size_t done = 0; done < expected.size(); ++done) COMPARE(w.factor(int64_t(done)), expected[done]);
  COMPARE(optim::StepWarmup{}.factor(0), 1.0);  // no warm-up
  COMPARE((optim::StepWarmup{.steps = 3, .start_factor = 0}).factor(0), 0.0);
  VERIFY_THROWS(ValueError, (optim::StepWarmup{.steps = -1}).check());
  VERIFY_THROWS(ValueError, (optim::StepWarmup{.steps = 5, .start_factor = 1.5}).check());
  VERIFY_THROWS(ValueError, (optim::StepWarmup{.steps = 5, .start_factor = std::nan("")}).check());
}

TEST(scaledLrPutsTheExactLrsBack) {
  Setup s = make_setup();
  optim::Optimizer& opt = *s.opt;
  opt.param_groups()[0].lr = 0.1 / 3;  // not a multiple the factor undoes exactly
  {
    const optim::ScaledLr scaled(opt, 0.3);
    COMPARE(opt.param_groups()[0].lr, 0.1 / 3 * 0.3);
  }
  VERIFY(opt.param_groups()[0].lr == 0.1 / 3);
  {
    const optim::ScaledLr unchanged(opt, 1);
    VERIFY(opt.param_groups()[0].lr == 0.1 / 3);
  }
}

// 12 warm-up steps over epochs of 9 batches, under a schedule that halves the lr each epoch.
TEST(theReportedLrFollowsTheFormulaAcrossAnEpochBoundary) {
  Setup s = make_setup();
  Recorded r;
  COMPARE(run(s, warmed_up(2, 12, 0.1), r).status, train::RunStatus::Completed);
  COMPARE(r.batches.size(), size_t(2 * kBatches));
  for (size_t i = 0; i < r.batches.size(); ++i) {
    const int64_t step = int64_t(i) + 1;
    COMPARE(r.batches[i].lr, expected_lr(step, 12, 0.1));
  }
  COMPARE(r.batches[0].lr, kLr * 0.1);      // step 1: the start factor
  COMPARE(r.batches[12].lr, kLr * 0.5);     // step 13 = N + 1: the schedule's lr, epoch 2
  // The epochs report the schedule's lr; between steps the groups hold it (the warm-up is gone).
  COMPARE(r.epochs[0].lr, kLr);
  COMPARE(r.epochs[1].lr, kLr * 0.5);
  COMPARE(s.opt->param_groups()[0].lr, kLr * 0.25);
}

// The lr reported is the project's (base_lr through the schedule and the warm-up), not a
// group's: a model whose first group trains at 3x its lr reports the base lr all the same.
TEST(theReportedLrIsTheBaseLr) {
  Setup s = make_setup();
  std::vector<Tensor> params = s.model->parameters();
  std::vector<optim::ScaledParams> groups{{{params[0], params[1]}, 3, 1}, {{params[2], params[3]}, 1, 1}};
  s.opt = optim::make_optimizer({.optimizer = "sgd", .lr = kLr}, std::move(groups));
  s.schedule = std::make_unique<optim::StepLR>(*s.opt, 1, 0.5);
  Recorded with_base, without;
  run(s, warmed_up(1, 4, 0.5), with_base);
  COMPARE(with_base.batches[0].lr, kLr * 0.5);
  train::TrainerOptions o = warmed_up(2, 4, 0.5);
  o.first_epoch = 2;
  o.base_lr.reset();  // group 0's lr then
  run(s, o, without);
  COMPARE(without.batches[0].lr, 3 * kLr * 0.5);
}

// The updates use the warmed-up lr: the Trainer's weights are those of a loop that sets each
// step's lr by hand.
TEST(theUpdatesUseTheWarmedUpLr) {
  Setup trained = make_setup();
  Recorded r;
  run(trained, warmed_up(2, 12, 0.1), r);

  Setup hand = make_setup();
  train::TrainingStep step(*hand.model, *hand.opt,
                           {.loss = [](const Tensor& out, const Tensor& y) { return cross_entropy(out, y); }});
  int64_t done = 0;
  for (int epoch = 1; epoch <= 2; ++epoch) {
    hand.model->train();
    hand.loader->set_epoch(epoch - 1);
    for (data::Batch& b : *hand.loader) {
      optim::ParamGroup& g = hand.opt->param_groups()[0];
      const double scheduled = g.lr;
      g.lr = scheduled * (done < 12 ? 0.1 + 0.9 * double(done) / 12 : 1.0);
      ++done;
      VERIFY(step.run(b.inputs, b.targets).updated);
      g.lr = scheduled;
    }
    hand.schedule->step();
  }
  COMPARE(testing::weights(*trained.model), testing::weights(*hand.model));

  Setup cold = make_setup();  // and the warm-up made a difference
  Recorded c;
  run(cold, warmed_up(2, 0, 0.1), c);
  VERIFY(testing::weights(*cold.model) != testing::weights(*trained.model));
}

// Interrupted at epoch 2, batch 3 (step 12 of 14 warm-up steps) and picked up by another
// Trainer; or ended after epoch 1 and continued by one that starts at epoch 2: both end with
// the weights and lrs of one uninterrupted run.
TEST(aRunGoingOnWarmsUpWhereOneRunWouldBe) {
  Setup whole = make_setup();
  Recorded all;
  run(whole, warmed_up(3, 14, 0.2), all);

  Setup parts = make_setup();
  Recorded first, rest;
  const train::RunResult cut = run(parts, warmed_up(3, 14, 0.2), first, [](train::Trainer& t, const train::BatchEnd& b) {
    if (b.epoch == 2 && b.batch == 3) t.interrupt();
  });
  COMPARE(cut.status, train::RunStatus::Interrupted);
  train::TrainerOptions next = warmed_up(3, 14, 0.2);
  next.first_epoch = cut.position->epoch;
  next.resume_at = cut.position;
  run(parts, next, rest);
  COMPARE(testing::weights(*parts.model), testing::weights(*whole.model));
  COMPARE(first.batches.size() + rest.batches.size(), all.batches.size());
  COMPARE(rest.batches.front().lr, expected_lr(13, 14, 0.2));
  for (size_t i = 0; i < rest.batches.size(); ++i)
    COMPARE(rest.batches[i].lr, all.batches[first.batches.size() + i].lr);

  Setup continued = make_setup();
  Recorded one, more;
  run(continued, warmed_up(1, 14, 0.2), one);
  train::TrainerOptions later = warmed_up(3, 14, 0.2);
  later.first_epoch = 2;
  run(continued, later, more);
  COMPARE(more.batches.front().lr, expected_lr(kBatches + 1, 14, 0.2));
  COMPARE(testing::weights(*continued.model), testing::weights(*whole.model));
}

TEST(aBadWarmupIsRefused) {
  Setup s = make_setup();
  VERIFY_THROWS(ValueError, train::Trainer(*s.model, *s.opt, *s.loader, nullptr, warmed_up(1, -2, 0.1)));
}

