// Early stopping and the plateau schedule in the training loop: a run whose validation loss stops
// improving ends `patience` epochs after its best, says so, keeps that epoch as its best, and is
// evaluated on the test split as a completed run is; a plateau schedule lowers the lr once the
// monitored figure has not improved for more than its patience.
#include <cmath>
#include <memory>
#include <vector>

#include "data/dataloader.h"
#include "nn/activation.h"
#include "nn/linear.h"
#include "nn/sequential.h"
#include "optim/factory.h"
#include "optim/plateau.h"
#include "plexus.h"
#include "support/check.h"
#include "support/test_support.h"
#include "train/early_stopping.h"
#include "train/trainer.h"

using namespace plexus;

namespace {

// Random inputs with random labels: a wide layer learns the 32 training examples by heart at a
// high learning rate, so the validation loss (other random examples) soon rises for good.
struct Overfit {
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::Optimizer> opt;
  std::unique_ptr<data::DataLoader> train, validation, test;
};

std::shared_ptr<data::TensorDataset> noise(int64_t n, uint64_t seed) {
  Generator gen(seed);
  const Tensor x = randn({n, 16}, &gen);
  std::vector<float> labels;
  for (int64_t i = 0; i < n; ++i) labels.push_back(float((i * 7 + int64_t(seed)) % 4));
  return std::make_shared<data::TensorDataset>(x, from_vector(labels, {n}));
}

Overfit overfit() {
  Generator gen(3);
  Overfit o;
  o.model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(16, 256, true, &gen), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(256, 4, true, &gen)});
  o.opt = optim::make_optimizer({.optimizer = "adam", .lr = 0.01}, o.model->parameters());
  o.train = std::make_unique<data::DataLoader>(noise(32, 1), data::DataLoaderOptions{.batch_size = 8, .seed = 1});
  o.validation = std::make_unique<data::DataLoader>(noise(64, 2), data::DataLoaderOptions{.batch_size = 64});
  o.test = std::make_unique<data::DataLoader>(noise(64, 5), data::DataLoaderOptions{.batch_size = 64});
  return o;
}

}  // namespace

TEST(earlyStoppingEndsPatienceEpochsAfterTheBest) {
  Overfit o = overfit();
  const int patience = 3;
  train::TrainerOptions options;
  options.epochs = 60;
  options.early_stopping = {.monitor = {"val_loss", "auto"}, .patience = patience};
  train::Trainer t(*o.model, *o.opt, *o.train, o.validation.get(), options);
  t.set_test_loader(o.test.get());
  std::optional<train::Finished> finished;
  t.set_callback([&](const train::Event& e) {
    if (const auto* f = std::get_if<train::Finished>(&e)) finished = *f;
  });
  const train::RunResult r = t.run();
  COMPARE(int(r.status), int(train::RunStatus::Completed));
  VERIFY2(r.stopped_early, "the validation loss of a memorising run never stopped improving in 60 epochs");
  VERIFY(r.epochs_completed < 60);
  // The best epoch is the lowest validation loss, and the run ends `patience` epochs after it.
  int lowest = 0;
  for (size_t i = 0; i < r.history.size(); ++i)
    if (r.history[i].eval_loss < r.history[size_t(lowest)].eval_loss) lowest = int(i);
  COMPARE(r.best_epoch, r.history[size_t(lowest)].epoch);
  COMPARE(r.epochs_completed, r.best_epoch + patience);
  VERIFY(finished && finished->stopped_early && !finished->cancelled);
  COMPARE(finished->best_epoch, r.best_epoch);
  COMPARE(finished->epochs_completed, r.epochs_completed);
  // A finished run: the test split is evaluated on the final model.
  VERIFY(r.test.has_value());
  COMPARE(r.test->epoch, r.epochs_completed);
}

TEST(minDeltaCountsOnlyLargerImprovements) {
  train::EarlyStopping stopping{.monitor = {"val_accuracy", "auto"}, .patience = 2, .min_delta = 0.05};
  train::EarlyStoppingState state;
  const auto epoch = [](int n, double accuracy) {
    train::EpochEnd e;
    e.epoch = n;
    e.has_eval = true;
    e.eval_accuracy = accuracy;
    return e;
  };
  VERIFY(!stopping.epoch_ended(state, epoch(1, 0.50)));
  VERIFY(!stopping.epoch_ended(state, epoch(2, 0.54)));  // better, but by less than min_delta
  COMPARE(state.best_epoch, 1);
  VERIFY(!stopping.epoch_ended(state, epoch(3, 0.60)));
  COMPARE(state.best_epoch, 3);
  VERIFY(!stopping.epoch_ended(state, epoch(4, 0.10)));
  VERIFY(stopping.epoch_ended(state, epoch(5, 0.64)));  // patience 2: two epochs without improvement
  // Without a validation split a validation figure is the training one.
  train::EpochEnd no_eval;
  no_eval.train_loss = 0.25;
  const train::Monitor val_loss{"val_loss", "auto"}, train_loss_max{"train_loss", "max"};
  COMPARE(val_loss.value(no_eval), 0.25);
  VERIFY(!val_loss.maximize());
  VERIFY(train_loss_max.maximize());
  const std::string refused = plexus::testing::message_of<ValueError>([&] {
    (void)train::Monitor{"f1", "auto"}.value(no_eval);
  });
  VERIFY2(refused.find("unknown metric 'f1'") != std::string::npos, refused);
}

TEST(plateauLowersTheLrAfterItsPatience) {
  Overfit o = overfit();
  optim::ReduceLROnPlateau plateau(*o.opt, {.factor = 0.5, .patience = 1, .threshold = 0, .relative = false});
  train::TrainerOptions options;
  options.epochs = 12;
  options.plateau = &plateau;
  options.base_lr = 0.01;
  train::Trainer t(*o.model, *o.opt, *o.train, o.validation.get(), options);
  const train::RunResult r = t.run();
  COMPARE(int(r.status), int(train::RunStatus::Completed));
  // Replays the rule on the epochs' validation losses: each epoch's lr is the one before it, halved
  // after two epochs in a row no better than the best.
  double best = INFINITY, lr = 0.01;
  int bad = 0, lowered = 0;
  for (const train::EpochEnd& e : r.history) {
    VERIFY2(std::fabs(e.lr - lr) <= 1e-12 * lr,
            "epoch " + std::to_string(e.epoch) + ": lr " + std::to_string(e.lr) + ", expected " + std::to_string(lr));
    if (e.eval_loss < best) {
      best = e.eval_loss;
      bad = 0;
    } else if (++bad > 1) {
      lr *= 0.5;
      bad = 0;
      ++lowered;
    }
  }
  VERIFY2(lowered > 0, "the validation loss never stalled: the test shows nothing");
  COMPARE(o.opt->param_groups()[0].lr, lr);
}
