// Going on mid-epoch: DataLoader::begin_at delivers the rest of a pass bit for bit, and a run
// interrupted between two batches (Trainer::interrupt) and picked up by another Trainer at its
// RunPosition ends exactly where one uninterrupted run does: the same batches in the same
// order, the same weights, the same epoch figures and batch numbering.
#include <QtTest>

#include "data/dataloader.h"
#include "nn/layers.h"
#include "optim/factory.h"
#include "train/trainer.h"
#include "plexus.h"

using namespace plexus;

namespace {

std::shared_ptr<data::TensorDataset> points(int64_t n) {
  Generator gen(5);
  const Tensor x = randn({n, 6}, &gen);
  std::vector<float> labels;
  for (int64_t i = 0; i < n; ++i) labels.push_back(float(i % 3));
  return std::make_shared<data::TensorDataset>(x, from_vector(labels, {n}));
}

struct Setup {
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::Optimizer> opt;
  std::unique_ptr<data::DataLoader> loader;
};

Setup make_setup() {
  Generator gen(3);
  Setup s;
  auto model = std::make_shared<nn::Sequential>();
  model->add(std::make_shared<nn::Linear>(6, 8, true, &gen));
  model->add(std::make_shared<nn::ReLU>());
  model->add(std::make_shared<nn::Linear>(8, 3, true, &gen));
  s.model = model;
  s.opt = optim::make_optimizer({.optimizer = "adam", .lr = 0.01}, s.model->parameters());
  s.loader = std::make_unique<data::DataLoader>(
      points(70), data::DataLoaderOptions{.batch_size = 8, .shuffle = true, .seed = 11, .workers = 2});
  return s;
}

std::vector<std::vector<float>> weights(const nn::Module& m) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, t] : m.state()) out.push_back(t.to_vector());
  return out;
}

}  // namespace

class TestTrainerResume : public QObject {
  Q_OBJECT

 private slots:
  void beginAtDeliversTheRestOfThePass() {
    data::DataLoader loader(points(70), {.batch_size = 8, .shuffle = true, .seed = 11, .workers = 2});
    loader.set_epoch(3);
    std::vector<data::Batch> whole;
    for (data::Batch& b : loader) whole.push_back(b);
    QCOMPARE(whole.size(), size_t(9));
    for (int64_t first : {0, 4, 8, 9}) {
      loader.set_epoch(3);
      size_t i = size_t(first);
      for (auto it = loader.begin_at(first); it != loader.end(); ++it, ++i) {
        QCOMPARE(it->indices, whole[i].indices);
        QCOMPARE(it->inputs.to_vector(), whole[i].inputs.to_vector());
      }
      QCOMPARE(i, whole.size());
      QCOMPARE(loader.epoch(), int64_t(4));
    }
    QVERIFY_THROWS_EXCEPTION(IndexError, loader.begin_at(10));
  }

  void anInterruptedRunGoesOnAsOne() {
    train::TrainerOptions o;
    o.epochs = 3;
    o.seed = 7;

    Setup whole = make_setup();
    std::vector<train::BatchEnd> whole_batches;
    std::vector<train::EpochEnd> whole_epochs;
    train::Trainer t(*whole.model, *whole.opt, *whole.loader, nullptr, o);
    t.set_callback([&](const train::Event& e) {
      if (const auto* b = std::get_if<train::BatchEnd>(&e)) whole_batches.push_back(*b);
      if (const auto* ep = std::get_if<train::EpochEnd>(&e)) whole_epochs.push_back(*ep);
    });
    QCOMPARE(t.run().status, train::RunStatus::Completed);

    // Interrupted after batch 4 of epoch 2, then another Trainer goes on from there.
    Setup parts = make_setup();
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
    QCOMPARE(cut.status, train::RunStatus::Interrupted);
    QVERIFY(!ended);  // no final event: the run goes on elsewhere
    QVERIFY(cut.position);
    QCOMPARE(cut.position->epoch, 2);
    QCOMPARE(cut.position->batch, int64_t(4));
    QCOMPARE(cut.position->batches_done, int64_t(9 + 4));
    QCOMPARE(cut.epochs_completed, 1);

    train::TrainerOptions next = o;
    next.first_epoch = cut.position->epoch;
    next.resume_at = cut.position;
    train::Trainer second(*parts.model, *parts.opt, *parts.loader, nullptr, next);
    second.set_callback(record);
    const train::RunResult rest = second.run();
    QCOMPARE(rest.status, train::RunStatus::Completed);
    QVERIFY(ended);
    QCOMPARE(rest.epochs_completed, 3);

    QCOMPARE(weights(*parts.model), weights(*whole.model));
    QCOMPARE(batches.size(), whole_batches.size());
    for (size_t i = 0; i < batches.size(); ++i) {
      QCOMPARE(batches[i].epoch, whole_batches[i].epoch);
      QCOMPARE(batches[i].batch, whole_batches[i].batch);
      QCOMPARE(batches[i].loss, whole_batches[i].loss);
      QCOMPARE(batches[i].running_loss, whole_batches[i].running_loss);  // the epoch's figures carried on
    }
    QCOMPARE(epochs.size(), size_t(3));
    for (size_t i = 0; i < epochs.size(); ++i) {
      QCOMPARE(epochs[i].train_loss, whole_epochs[i].train_loss);
      QCOMPARE(epochs[i].train_accuracy, whole_epochs[i].train_accuracy);
    }
  }

  void aPositionOutsideTheRunIsRefused() {
    Setup s = make_setup();
    train::TrainerOptions o;
    o.epochs = 3;
    o.first_epoch = 2;
    o.resume_at = train::RunPosition{3, 0, {}, 0, 0};
    QVERIFY_THROWS_EXCEPTION(ValueError, train::Trainer(*s.model, *s.opt, *s.loader, nullptr, o));
    o.resume_at = train::RunPosition{2, 10, {}, 0, 0};
    QVERIFY_THROWS_EXCEPTION(ValueError, train::Trainer(*s.model, *s.opt, *s.loader, nullptr, o));
  }
};

QTEST_GUILESS_MAIN(TestTrainerResume)
#include "test_trainer_resume.moc"
