// Going on mid-epoch: DataLoader::begin_at delivers the rest of a pass bit for bit, and a run
// interrupted between two batches (Trainer::interrupt) and picked up by another Trainer at its
// RunPosition ends exactly where one uninterrupted run does: the same batches in the same
// order, the same weights, the same epoch figures and batch numbering.
#include "support/check.h"

#include "support/small_classifier.h"
#include "train/trainer.h"

using namespace plexus;

namespace {

testing::SmallClassifier make_setup() { return testing::small_classifier({.optimizer = "adam", .lr = 0.01}, 2); }

}  // namespace

TEST(beginAtDeliversTheRestOfThePass) {
  data::DataLoader loader(testing::three_class_points(70), {.batch_size = 8, .shuffle = true, .seed = 11, .workers = 2});
  loader.set_epoch(3);
  std::vector<data::Batch> whole;
  for (data::Batch& b : loader) whole.push_back(b);
  COMPARE(whole.size(), size_t(9));
  for (int64_t first : {0, 4, 8, 9}) {
    loader.set_epoch(3);
    size_t i = size_t(first);
    for (auto it = loader.begin_at(first); it != loader.end(); ++it, ++i) {
      COMPARE(it->indices, whole[i].indices);
      COMPARE(it->inputs.to_vector(), whole[i].inputs.to_vector());
    }
    COMPARE(i, whole.size());
    COMPARE(loader.epoch(), int64_t(4));
  }
  VERIFY_THROWS(IndexError, loader.begin_at(10));
}

TEST(anInterruptedRunGoesOnAsOne) {
  train::TrainerOptions o;
  o.epochs = 3;
  o.seed = 7;

  testing::SmallClassifier whole = make_setup();
  std::vector<train::BatchEnd> whole_batches;
  std::vector<train::EpochEnd> whole_epochs;
  train::Trainer t(*whole.model, *whole.opt, *whole.loader, nullptr, o);
  t.set_callback([&](const train::Event& e) {
    if (const auto* b = std::get_if<train::BatchEnd>(&e)) whole_batches.push_back(*b);
    if (const auto* ep = std::get_if<train::EpochEnd>(&e)) whole_epochs.push_back(*ep);
  });
  COMPARE(t.run().status, train::RunStatus::Completed);

  // Interrupted after batch 4 of epoch 2, then another Trainer goes on from there.
  testing::SmallClassifier parts = make_setup();
  std::vector<train::BatchEnd> batches;
  std::vector<train::EpochEnd> epochs;
  bool ended = false;
  const auto record = [&](const train::Event& e) {
    if (const auto* b = std::get_if<train::BatchEnd>(&e)) batches.push_back(*b);
    if (const auto* ep = std::get_if<train::EpochEnd>(&e)) epochs.push_back(*ep);
    ended = ended || std::holds_alternative<train::Finished>(e) || std::holds_alternative<train::Failed>(e);
  };
  train::Trainer first(*parts.model, *parts.opt, *parts.loader, nullptr, o);
  first.set_callback([&](const train::Event& e) {
    record(e);
    if (const auto* b = std::get_if<train::BatchEnd>(&e); b && b->epoch == 2 && b->batch == 4) first.interrupt();
  });
  const train::RunResult cut = first.run();
  COMPARE(cut.status, train::RunStatus::Interrupted);
  VERIFY(!ended);  // no final event: the run goes on elsewhere
  VERIFY(cut.position);
  COMPARE(cut.position->epoch, 2);
  COMPARE(cut.position->batch, int64_t(4));
  COMPARE(cut.position->batches_done, int64_t(9 + 4));
  COMPARE(cut.epochs_completed, 1);

  train::TrainerOptions next = o;
  next.first_epoch = cut.position->epoch;
  next.resume_at = cut.position;
  train::Trainer second(*parts.model, *parts.opt, *parts.loader, nullptr, next);
  second.set_callback(record);
  const train::RunResult rest = second.run();
  COMPARE(rest.status, train::RunStatus::Completed);
  VERIFY(ended);
  COMPARE(rest.epochs_completed, 3);

  COMPARE(testing::weights(*parts.model), testing::weights(*whole.model));
  COMPARE(batches.size(), whole_batches.size());
  for (size_t i = 0; i < batches.size(); ++i) {
    COMPARE(batches[i].epoch, whole_batches[i].epoch);
    COMPARE(batches[i].batch, whole_batches[i].batch);
    COMPARE(batches[i].loss, whole_batches[i].loss);
    COMPARE(batches[i].running_loss, whole_batches[i].running_loss);  // the epoch's figures carried on
  }
  COMPARE(epochs.size(), size_t(3));
  for (size_t i = 0; i < epochs.size(); ++i) {
    COMPARE(epochs[i].train_loss, whole_epochs[i].train_loss);
    COMPARE(epochs[i].train_accuracy, whole_epochs[i].train_accuracy);
  }
}

TEST(aPositionOutsideTheRunIsRefused) {
  testing::SmallClassifier s = make_setup();
  train::TrainerOptions o;
  o.epochs = 3;
  o.first_epoch = 2;
  o.resume_at = train::RunPosition{3, 0, {}, 0, 0, {}, {}, {}, {}};
  VERIFY_THROWS(ValueError, train::Trainer(*s.model, *s.opt, *s.loader, nullptr, o));
  o.resume_at = train::RunPosition{2, 10, {}, 0, 0, {}, {}, {}, {}};
  VERIFY_THROWS(ValueError, train::Trainer(*s.model, *s.opt, *s.loader, nullptr, o));
}

