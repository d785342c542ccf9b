// The training loop end to end: accuracy on real (or generated) digits, events, pause /
// resume / cancel from another thread, NaN detection, reproducibility, checkpoints, the time
// spent waiting on data.
#include "support/check.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "data/dataloader.h"
#include "data/mnist.h"
#include "nn/layers.h"
#include "optim/sgd.h"
#include "optim/factory.h"
#include "train/builtin.h"
#include "train/checkpoint.h"
#include "train/step.h"
#include "train/peak.h"
#include "train/trainer.h"
#include "ops/cpu/sbgemm.h"
#include "plexus.h"
#include "support/env.h"
#include "support/temp_dir.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

const fs::path kMnist = fs::path(PLEXUS_SOURCE_DIR) / "data" / "mnist";

// Ten fixed random 28x28 stroke patterns plus per-image noise and a random shift: a
// stand-in for MNIST when it has not been fetched.
std::shared_ptr<data::TensorDataset> generated_digits(int64_t n, uint64_t seed) {
  Generator shapes(1234), gen(seed);  // the same ten patterns for every split
  const Tensor prototypes = gt(rand({10, 1, 28, 28}, &shapes), full({}, 0.8f));
  std::vector<float> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[size_t(i)] = float(i % 10);
  const Tensor y = from_vector(labels, {n});
  const Tensor x = clamp(index_select(prototypes, 0, y) + randn({n, 1, 28, 28}, &gen) * 0.3f, 0.f, 1.f);
  return std::make_shared<data::TensorDataset>(x, y);
}

std::pair<std::shared_ptr<const data::Dataset>, std::shared_ptr<const data::Dataset>> digits(int64_t train_n,
                                                                                            int64_t test_n) {
  if (fs::exists(kMnist / "train-images-idx3-ubyte")) {
    auto train = std::make_shared<data::MnistDataset>(kMnist.string(), data::Split::Train);
    auto test = std::make_shared<data::MnistDataset>(kMnist.string(), data::Split::Test);
    std::vector<int64_t> a, b;
    for (int64_t i = 0; i < train_n; ++i) a.push_back(i);
    for (int64_t i = 0; i < test_n; ++i) b.push_back(test->size() - test_n + i);  // the last test images
    return {std::make_shared<data::Subset>(train, a), std::make_shared<data::Subset>(test, b)};
  }
  std::printf("MNIST not found at %s (run scripts/fetch-mnist): training on generated digits instead\n",
              kMnist.string().c_str());
  return {generated_digits(train_n, 1), generated_digits(test_n, 2)};
}

struct Setup {
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::Optimizer> opt;
  std::unique_ptr<data::DataLoader> train, test;
};

Setup make_setup(int64_t train_n, int64_t test_n, uint64_t seed = 1, double lr = 0.01) {
  auto [tr, te] = digits(train_n, test_n);
  Generator gen(seed);
  Setup s;
  s.model = train::make_builtin_model("mlp", &gen);
  s.opt = optim::make_optimizer({.optimizer = "sgd", .lr = lr, .momentum = 0.9}, s.model->parameters());
  const auto norm = train::standardize_images(*tr);
  s.train = std::make_unique<data::DataLoader>(tr, data::DataLoaderOptions{.batch_size = 50, .shuffle = true,
                                                                           .seed = seed, .transform = norm});
  s.test = std::make_unique<data::DataLoader>(te, data::DataLoaderOptions{.batch_size = 500, .transform = norm});
  return s;
}

// Another dataset's examples, each batch `ms` milliseconds late (with ms > 0: data slower than
// the model). It counts the batches it gives, and those it gives on the thread that made it (the
// training thread here), and adds up how long they took, timed with the trainer's clock.
class WatchedDataset : public data::Dataset {
 public:
  WatchedDataset(std::shared_ptr<const data::Dataset> inner, int ms) : inner_(std::move(inner)), ms_(ms) {}
  int64_t size() const override { return inner_->size(); }
  data::Example get(int64_t index) const override { return inner_->get(index); }
  data::Example get_batch(const std::vector<int64_t>& indices) const override {
    const auto start = std::chrono::steady_clock::now();
    if (ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    data::Example e = inner_->get_batch(indices);
    const std::lock_guard lock(mu_);
    ++batches_;
    on_owner_thread_ += std::this_thread::get_id() == owner_;
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return e;
  }

  int64_t batches() const {
    const std::lock_guard lock(mu_);
    return batches_;
  }
  int64_t on_owner_thread() const {
    const std::lock_guard lock(mu_);
    return on_owner_thread_;
  }
  double seconds() const {
    const std::lock_guard lock(mu_);
    return seconds_;
  }

 private:
  std::shared_ptr<const data::Dataset> inner_;
  int ms_;
  std::thread::id owner_ = std::this_thread::get_id();
  mutable std::mutex mu_;
  mutable int64_t batches_ = 0, on_owner_thread_ = 0;
  mutable double seconds_ = 0;
};

// A number as a failure message shows it ("%g").
std::string number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

// Whether `s` is a date as ISO 8601 writes it, "2026-11-25", and a day the calendar has.
bool is_iso_date(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (const int i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (s[size_t(i)] < '0' || s[size_t(i)] > '9') return false;
  const std::chrono::year_month_day day{std::chrono::year(std::stoi(s.substr(0, 4))),
                                        std::chrono::month(unsigned(std::stoi(s.substr(5, 2)))),
                                        std::chrono::day(unsigned(std::stoi(s.substr(8, 2))))};
  return day.ok();
}

std::vector<std::vector<float>> weights(const nn::Module& m) {
  std::vector<std::vector<float>> out;
  for (const Tensor& p : m.parameters()) out.push_back(p.to_vector());
  return out;
}

}  // namespace

TEST(mlpLearnsDigitsSubset) {
  Setup s = make_setup(6000, 2000);
  train::TrainerOptions o;
  o.epochs = 8;
  train::Trainer t(*s.model, *s.opt, *s.train, s.test.get(), o);
  const train::RunResult r = t.run();
  VERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
  COMPARE(r.history.size(), size_t(8));
  const train::EpochEnd& last = r.history.back();
  std::printf("held-out accuracy after 8 epochs on 6000 images: %.2f%%\n", 100 * last.eval_accuracy);
  VERIFY2(last.eval_accuracy >= 0.90, number(last.eval_accuracy));
  VERIFY(last.train_loss < r.history.front().train_loss);
  // The confusion matrix covers the held-out set.
  int64_t total = 0;
  for (int64_t c : last.confusion) total += c;
  COMPARE(total, int64_t(2000));
  COMPARE(last.per_class_accuracy.size(), size_t(10));
}

TEST(eventsArriveInOrder) {
  Setup s = make_setup(500, 100);
  train::TrainerOptions o;
  o.epochs = 2;
  o.flops_per_example = 4e5;
  o.peak_gflops = 200;
  train::Trainer t(*s.model, *s.opt, *s.train, s.test.get(), o);
  std::vector<train::Event> events;
  t.set_callback([&](const train::Event& e) { events.push_back(e); });
  t.run();
  std::vector<std::string> kinds;
  int64_t batch_events = 0;
  for (const train::Event& e : events) {
    if (std::holds_alternative<train::BatchEnd>(e)) {
      ++batch_events;
      const auto& b = std::get<train::BatchEnd>(e);
      VERIFY(b.batch >= 1 && b.batch <= b.batches && b.samples_per_second > 0);
      // The speed figures: the counted FLOPs at that rate, and the peak to set them against.
      COMPARE(b.gflops, b.samples_per_second * 4e5 / 1e9);
      COMPARE(b.peak_gflops, 200.0);
    } else if (const auto* epoch = std::get_if<train::EpochEnd>(&e)) {
      COMPARE(epoch->samples_per_second, 500 / epoch->train_seconds);
      COMPARE(epoch->gflops, epoch->samples_per_second * 4e5 / 1e9);
      COMPARE(epoch->peak_gflops, 200.0);
      kinds.push_back("epoch");
    } else {
      kinds.push_back(std::holds_alternative<train::Finished>(e) ? "finished" : "failed");
    }
  }
  COMPARE(batch_events, int64_t(2 * 10));
  COMPARE(kinds, (std::vector<std::string>{"epoch", "epoch", "finished"}));
}

// A run faster than the measured peak reports its own best rate as the peak, so its share of
// peak stays at most 100 %; a peak never measured (0) is not made up from the run.
TEST(aFasterRunRaisesThePeakItReports) {
  for (const double measured : {1e-6, 0.0}) {
    Setup s = make_setup(300, 100);
    train::TrainerOptions o;
    o.epochs = 1;
    o.flops_per_example = 4e5;
    o.peak_gflops = measured;
    train::Trainer t(*s.model, *s.opt, *s.train, s.test.get(), o);
    double best = 0, last_peak = 0;
    int64_t batches = 0;
    t.set_callback([&](const train::Event& e) {
      if (const auto* b = std::get_if<train::BatchEnd>(&e)) {
        ++batches;
        best = std::max(best, b->gflops);
        if (measured == 0) {
          COMPARE(b->peak_gflops, 0.0);
          COMPARE(train::share_of_peak(b->gflops, b->peak_gflops), 0.0);
          return;
        }
        COMPARE(b->peak_gflops, best);  // the fastest rate so far, far above 1e-6
        VERIFY(b->peak_gflops >= last_peak);
        last_peak = b->peak_gflops;
        VERIFY(train::share_of_peak(b->gflops, b->peak_gflops) <= 1.0);
      } else if (const auto* epoch = std::get_if<train::EpochEnd>(&e); epoch && measured > 0) {
        COMPARE(epoch->peak_gflops, std::max(best, epoch->gflops));
      }
    });
    t.run();
    COMPARE(batches, int64_t(6));
  }
  // A share from events written elsewhere (an older version, another machine's settings).
  COMPARE(train::share_of_peak(250, 200), 1.0);
  COMPARE(train::share_of_peak(50, 200), 0.25);
}

// util/subnormals.h: the training loop's own thread flushes subnormals while it runs, so
// small ops (run on that thread, not the pool) flush as the pool's do; the thread's own
// setting comes back when run() returns. 1e-30 * 1e-10 = 1e-40 is subnormal.
TEST(trainingThreadFlushesSubnormals) {
#if defined(__x86_64__) || defined(__i386__)
  auto tiny_product = [] { return (full({4}, 1e-30f) * 1e-10f).to_vector()[0]; };
  COMPARE(std::fpclassify(tiny_product()), FP_SUBNORMAL);  // this thread keeps them
  Setup s = make_setup(200, 100);
  train::TrainerOptions o;
  o.epochs = 1;
  train::Trainer t(*s.model, *s.opt, *s.train, s.test.get(), o);
  int events = 0;
  float during = -1.f;
  t.set_callback([&](const train::Event&) {
    ++events;
    during = std::max(during, tiny_product());
  });
  t.run();
  VERIFY(events > 0);
  VERIFY2(during == 0.f, number(double(during)));  // COMPARE would call 1e-40 zero
  COMPARE(std::fpclassify(tiny_product()), FP_SUBNORMAL);
#else
  SKIP("flushing subnormals is set through x86's MXCSR only");
#endif
}

// The epoch hook sees every epoch's figures after evaluation, on the training thread with
// the live model, and what it adds is published and kept in the history.
TEST(theEpochHookAddsToEveryEpoch) {
  Setup s = make_setup(200, 50);
  train::TrainerOptions o;
  o.epochs = 2;
  std::vector<bool> saw_eval;
  o.on_epoch_end = [&](train::EpochEnd& e) {
    saw_eval.push_back(e.has_eval);
    e.samples = {"after epoch " + std::to_string(e.epoch)};
    return e.epoch == 1 ? std::string("a note") : std::string();
  };
  train::Trainer t(*s.model, *s.opt, *s.train, s.test.get(), o);
  std::vector<std::string> published;
  t.set_callback([&](const train::Event& e) {
    if (const auto* epoch = std::get_if<train::EpochEnd>(&e)) published.push_back(epoch->samples.at(0));
    if (const auto* notice = std::get_if<train::Notice>(&e)) published.push_back("notice: " + notice->text);
  });
  const train::RunResult r = t.run();
  COMPARE(published, (std::vector<std::string>{"notice: a note", "after epoch 1", "after epoch 2"}));
  COMPARE(saw_eval, (std::vector<bool>{true, true}));
  COMPARE(r.history.at(1).samples, std::vector<std::string>{"after epoch 2"});
}

// The peak is measured once (our own matrix product), then read from the cache file under
// its key; a cache that is not JSON is measured past and replaced.
TEST(machinePeakIsMeasuredOnceAndCached) {
  const testing::TempDir dir;
  const fs::path cache = dir.path() / "sub" / "machine-peak.json";
  const train::MachinePeak first = train::machine_peak(Device::cpu(), cache);
  VERIFY(!first.cached);
  VERIFY2(first.gflops > 0.1, number(first.gflops));
  // Keyed by the CPU, the thread count and the product's kernel (OPENBLAS_CORETYPE, AVX-512 or AVX2).
  VERIFY2(first.key.rfind("cpu ", 0) == 0 &&
              first.key.find(", " + std::to_string(num_threads()) + " threads, ") != std::string::npos &&
              (first.key.ends_with(" kernel") || first.key.find("OpenBLAS") != std::string::npos),
          first.key.c_str());
  VERIFY2(is_iso_date(first.measured), first.measured);
  VERIFY(fs::exists(cache));
  const train::MachinePeak second = train::machine_peak(Device::cpu(), cache);
  VERIFY(second.cached);
  COMPARE(second.gflops, first.gflops);
  COMPARE(second.measured, first.measured);
  COMPARE(second.key, first.key);
  // A run faster than the peak raises the cached entry to its fastest epoch; a slower one
  // leaves it alone.
  train::RunResult run;
  run.history.resize(2);
  run.history[0].gflops = first.gflops / 2;
  run.history[1].gflops = first.gflops * 3;
  train::remember_faster_run(second, run, cache);
  const train::MachinePeak raised = train::machine_peak(Device::cpu(), cache);
  VERIFY(raised.cached);
  COMPARE(raised.gflops, first.gflops * 3);
  run.history[1].gflops = first.gflops * 2;
  train::remember_faster_run(raised, run, cache);
  COMPARE(train::machine_peak(Device::cpu(), cache).gflops, first.gflops * 3);
  { std::ofstream(cache) << "not json"; }
  const train::MachinePeak again = train::machine_peak(Device::cpu(), cache);
  VERIFY(!again.cached && again.gflops > 0.1);
  VERIFY(train::machine_peak(Device::cpu(), cache).cached);
}

// The hardware's bound from /proc/cpuinfo: threads × lanes × 2 FMA units × 2 flops × clock,
// and the words saying so; the description names the measured rate, its key and the bound.
TEST(peakDescriptionNamesTheKernelAndTheHardwareBound) {
  const train::MachinePeak one = train::cpu_bound(1), two = train::cpu_bound(2);
  if (one.bound_gflops == 0) SKIP("this CPU reports no clock in /proc/cpuinfo or cpufreq");
  COMPARE(two.bound_gflops, 2 * one.bound_gflops);
  VERIFY2(two.bound.rfind("2 threads × ", 0) == 0 && two.bound.find(" FMA units × 2 flops × ") != std::string::npos &&
              two.bound.ends_with(" GHz"),
          two.bound.c_str());
  // lanes × 2 FMA units × 2 flops × GHz for one thread: at least SSE's 16 flops a cycle.
  VERIFY2(one.bound_gflops >= 16 * 0.1, number(one.bound_gflops));
  train::MachinePeak peak = two;
  peak.gflops = 123.4;
  peak.key = "cpu Some CPU, 2 threads, AVX-512 kernel";
  peak.measured = "2026-11-29";
  const std::string text = train::describe(peak);
  VERIFY2(text.rfind("the fastest our matrix product ran here (cpu Some CPU, 2 threads, AVX-512 kernel, measured "
                     "2026-11-29): 123 GFLOP/s. The hardware's bound, 2 threads × ",
                     0) == 0,
          text.c_str());
  COMPARE(train::describe(train::MachinePeak{}), std::string());
}

TEST(peakCacheFollowsXdg) {
  const testing::ScopedEnv xdg("XDG_CACHE_HOME"), home("HOME");  // both as they were afterwards
  xdg.set("/somewhere/cache");
  COMPARE(train::default_peak_cache(), fs::path("/somewhere/cache/plexus/machine-peak.json"));
  xdg.unset();
  home.set("/home/someone");
  COMPARE(train::default_peak_cache(), fs::path("/home/someone/.cache/plexus/machine-peak.json"));
  home.unset();
  COMPARE(train::default_peak_cache(), fs::path());
}

TEST(evaluationRecordsPredictionsInLoaderOrder) {
  Setup s = make_setup(600, 300);
  train::TrainerOptions o;
  o.epochs = 2;
  o.record_predictions = true;
  train::Trainer t(*s.model, *s.opt, *s.train, s.test.get(), o);
  const train::RunResult r = t.run();
  VERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
  const train::EpochEnd& e = r.history.back();
  COMPARE(e.predicted.size(), size_t(300));
  COMPARE(e.confidence.size(), size_t(300));

  // The eval loader yields the examples in dataset order, so prediction i is example i's.
  std::vector<float> truth;
  std::vector<int64_t> order;
  Tensor inputs;
  for (data::Batch& b : *s.test) {
    const std::vector<float> targets = b.targets.to_vector();
    truth.insert(truth.end(), targets.begin(), targets.end());
    order.insert(order.end(), b.indices.begin(), b.indices.end());
    inputs = inputs.defined() ? concat({inputs, b.inputs}) : b.inputs;
  }
  for (size_t i = 0; i < order.size(); ++i) COMPARE(order[i], int64_t(i));

  // They agree with the confusion matrix...
  std::vector<int64_t> confusion(size_t(e.classes * e.classes), 0);
  for (size_t i = 0; i < truth.size(); ++i) ++confusion[size_t(int64_t(truth[i]) * e.classes + e.predicted[i])];
  COMPARE(confusion, e.confusion);
  // ...and with the trained model's softmax, recomputed here in one go.
  s.model->eval();
  const Tensor probs = softmax((*s.model)(inputs), 1);
  const std::vector<float> best = argmax(probs, 1).to_vector(), top = max(probs, {1}).to_vector();
  for (size_t i = 0; i < truth.size(); ++i) {
    COMPARE(e.predicted[i], int32_t(best[i]));
    VERIFY2(e.confidence[i] > 0.f && e.confidence[i] <= 1.f, number(e.confidence[i]));
    VERIFY(std::abs(e.confidence[i] - top[i]) < 1e-5f);
  }
  VERIFY(e.positive_probability.empty());  // ten classes: no positive one
}

TEST(twoClassEvaluationRecordsClassOnesProbability) {
  Generator gen(3);
  nn::Linear model(4, 2);
  const Tensor inputs = randn({40, 4}, &gen);
  Tensor labels = zeros({40});
  for (int64_t i = 0; i < 40; i += 3) labels.data()[i] = 1.f;
  auto set = std::make_shared<data::TensorDataset>(inputs, labels);
  data::DataLoader loader(set, {.batch_size = 16});
  train::TrainerOptions o;
  o.record_predictions = true;
  const train::EpochEnd e = train::evaluate(model, loader, o);
  COMPARE(e.positive_probability.size(), size_t(40));
  NoGradGuard no_grad;
  const std::vector<float> p = softmax(model(inputs), 1).to_vector();
  for (size_t i = 0; i < 40; ++i) {
    VERIFY(std::abs(e.positive_probability[i] - p[2 * i + 1]) < 1e-6f);
    // The predicted class's probability is class 1's, or the rest of it.
    const float of_predicted = e.predicted[i] == 1 ? e.positive_probability[i] : 1 - e.positive_probability[i];
    VERIFY(std::abs(e.confidence[i] - of_predicted) < 1e-6f);
  }
}

// A regression's [N, k] outputs, example-major in loader order: what a predicted-versus-actual
// plot draws (session/evaluation_report.h).
TEST(regressionEvaluationRecordsTheOutputs) {
  Generator gen(5);
  nn::Linear model(3, 2);
  const Tensor inputs = randn({30, 3}, &gen);
  auto set = std::make_shared<data::TensorDataset>(inputs, randn({30, 2}, &gen));
  data::DataLoader loader(set, {.batch_size = 8});
  train::TrainerOptions o;
  o.classification = false;
  o.loss = [](const Tensor& p, const Tensor& t) { return mse_loss(p, t); };
  o.record_predictions = true;
  const train::EpochEnd e = train::evaluate(model, loader, o);
  NoGradGuard no_grad;
  const std::vector<float> want = model(inputs).to_vector();
  COMPARE(e.outputs.size(), size_t(60));
  for (size_t i = 0; i < want.size(); ++i) VERIFY(std::abs(e.outputs[i] - want[i]) < 1e-6f);
  VERIFY(e.predicted.empty());
  o.record_predictions = false;
  VERIFY(train::evaluate(model, loader, o).outputs.empty());
}

// The test split's predictions (the final model's, judged after the run) only when asked for,
// apart from the validation split's.
TEST(testPredictionsAreRecordedWhenAsked) {
  for (bool asked : {false, true}) {
    Setup s = make_setup(200, 100);
    train::TrainerOptions o;
    o.epochs = 1;
    o.record_test_predictions = asked;
    train::Trainer t(*s.model, *s.opt, *s.train, nullptr, o);
    t.set_test_loader(s.test.get());
    const train::RunResult r = t.run();
    VERIFY2(r.status == train::RunStatus::Completed && r.test, r.message.c_str());
    COMPARE(r.test->predicted.size(), size_t(asked ? 100 : 0));
    COMPARE(r.test->confidence.size(), size_t(asked ? 100 : 0));
  }
}

TEST(predictionsAreOffByDefault) {
  Setup s = make_setup(200, 100);
  train::Trainer t(*s.model, *s.opt, *s.train, s.test.get(), {});
  const train::RunResult r = t.run();
  VERIFY(r.history.back().predicted.empty() && r.history.back().confidence.empty());
}

TEST(pauseResumeAndCancelFromAnotherThread) {
  Setup s = make_setup(2000, 100);
  train::TrainerOptions o;
  o.epochs = 1000;  // only cancel ends it
  train::Trainer t(*s.model, *s.opt, *s.train, nullptr, o);
  std::atomic<int64_t> batches{0};
  bool finished_cancelled = false;  // written by the worker, read after join()
  t.set_callback([&](const train::Event& e) {
    if (std::holds_alternative<train::BatchEnd>(e)) ++batches;
    if (auto* f = std::get_if<train::Finished>(&e)) finished_cancelled = f->cancelled;
  });
  train::RunResult result;
  std::thread worker([&] { result = t.run(); });
  while (batches < 5) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  t.pause();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const int64_t at_pause = batches;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  VERIFY(batches <= at_pause + 1);  // at most the batch in flight finished
  t.resume();
  while (batches < at_pause + 5) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  t.cancel();
  worker.join();
  COMPARE(int(result.status), int(train::RunStatus::Cancelled));
  VERIFY(finished_cancelled);
}

TEST(cancelWhilePausedStops) {
  Setup s = make_setup(500, 100);
  train::TrainerOptions o;
  o.epochs = 1000;
  train::Trainer t(*s.model, *s.opt, *s.train, nullptr, o);
  t.pause();
  train::RunResult result;
  std::thread worker([&] { result = t.run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  t.cancel();
  worker.join();
  COMPARE(int(result.status), int(train::RunStatus::Cancelled));
  COMPARE(result.epochs_completed, 0);
}

TEST(nonFiniteLossStopsWithTheBatch) {
  Setup s = make_setup(500, 100, 1, 1e6);  // diverges within a few batches
  train::TrainerOptions o;
  o.epochs = 5;
  train::Trainer t(*s.model, *s.opt, *s.train, nullptr, o);
  bool failed_event = false;
  t.set_callback([&](const train::Event& e) { failed_event = failed_event || std::holds_alternative<train::Failed>(e); });
  const train::RunResult r = t.run();
  COMPARE(int(r.status), int(train::RunStatus::Failed));
  VERIFY2(r.message.find("epoch 1, batch ") != std::string::npos, r.message.c_str());
  VERIFY2(r.message.find("NaN") != std::string::npos || r.message.find("infinite") != std::string::npos,
          r.message.c_str());
  VERIFY(failed_event);
}

// A short run in `precision`: the weights it ends with, and the notices it published.
std::vector<std::vector<float>> weights_after_run(Precision precision, std::vector<std::string>& notices) {
  Setup s = make_setup(300, 100);
  train::TrainerOptions o;
  o.precision = precision;
  train::Trainer t(*s.model, *s.opt, *s.train, nullptr, o);
  t.set_callback([&](const train::Event& e) {
    if (const auto* n = std::get_if<train::Notice>(&e)) notices.push_back(n->text);
  });
  if (t.run().status != train::RunStatus::Completed) throw Error("the run did not complete");
  return weights(*s.model);
}

// bf16 on a CPU without AVX512_BF16 (PLEXUS_CPU_BF16=off makes this one such): the run computes
// in FP32, exactly as an FP32 run, and says so once.
TEST(bf16WithoutAvx512Bf16IsFp32WithANotice) {
  const testing::ScopedEnv off("PLEXUS_CPU_BF16", "off");
  std::vector<std::string> fp32_notices, bf16_notices;
  const auto fp32 = weights_after_run(Precision::FP32, fp32_notices);
  const auto bf16 = weights_after_run(Precision::BF16, bf16_notices);
  VERIFY(fp32_notices.empty());  // no CUDA graph note on the CPU either
  COMPARE(bf16_notices.size(), size_t(1));
  VERIFY2(bf16_notices[0].find("needs a CPU with AVX512_BF16") != std::string::npos, bf16_notices[0].c_str());
  VERIFY(fp32 == bf16);
}

// bf16 on a CPU with AVX512_BF16: the products round their operands, so the weights differ from
// an FP32 run's, slightly; no notice.
TEST(bf16OnAnAvx512Bf16CpuRoundsTheProducts) {
  if (!cpu::cpu_has_bf16_products()) SKIP("skipped: no AVX512_BF16");
  std::vector<std::string> notices;
  const auto fp32 = weights_after_run(Precision::FP32, notices);
  const auto bf16 = weights_after_run(Precision::BF16, notices);
  VERIFY(notices.empty());
  VERIFY(fp32 != bf16);
  double worst = 0;
  for (size_t i = 0; i < fp32.size(); ++i)
    for (size_t j = 0; j < fp32[i].size(); ++j) worst = std::max(worst, double(std::fabs(fp32[i][j] - bf16[i][j])));
  VERIFY2(worst < 0.05, ("weights moved " + std::to_string(worst) + " apart").c_str());
}

// The step the Trainer runs, used directly: on the CPU it is eager, says nothing about CUDA
// graphs, and a non-finite loss leaves the weights as they were.
TEST(trainingStepOnTheCpu) {
  Setup s = make_setup(100, 100);
  train::TrainingStep step(*s.model, *s.opt,
                           {.loss = [](const Tensor& o, const Tensor& y) { return cross_entropy(o, y); }});
  Generator gen(3);
  const Tensor x = randn({8, 1, 28, 28}, &gen);
  const Tensor y = from_vector({0, 1, 2, 3, 4, 5, 6, 7}, {8});
  const auto before = weights(*s.model);
  const train::StepResult r = step.run(x, y);
  VERIFY(r.updated && std::isfinite(r.loss));
  VERIFY(r.hits_counted && r.hits >= 0 && r.hits <= 8);
  VERIFY(weights(*s.model) != before);
  VERIFY(step.graph_note().empty());
  VERIFY(!step.replaying());
  const auto good = weights(*s.model);
  const train::StepResult bad = step.run(x * std::numeric_limits<float>::quiet_NaN(), y);
  VERIFY(!bad.updated);
  VERIFY(std::isnan(bad.loss));
  VERIFY(weights(*s.model) == good);
}

TEST(badTargetsFailTheRunWithoutCrashing) {
  Setup s = make_setup(200, 100);
  train::TrainerOptions o;
  o.loss = [](const Tensor& out, const Tensor& target) { return cross_entropy(out, target + 10.f); };
  train::Trainer t(*s.model, *s.opt, *s.train, nullptr, o);
  const train::RunResult r = t.run();
  COMPARE(int(r.status), int(train::RunStatus::Failed));
  VERIFY2(r.message.find("not a class index") != std::string::npos, r.message.c_str());
}

// The wait is checked against what it holds, never against how long things should take: the
// time the data took (timed by the dataset itself, inside the trainer's wait for it) and the
// thread that assembled each batch, counted.
TEST(dataWaitIsMeasured) {
  auto [tr, te] = digits(500, 100);
  Generator gen(1);
  auto model = train::make_builtin_model("mlp", &gen);
  auto opt = optim::make_optimizer({.optimizer = "sgd", .lr = 0.01}, model->parameters());
  // Slow data without prefetch: each of the 10 batches keeps training waiting 20 ms. The
  // evaluation's slow batches (2 of 100 ms) are not training's wait.
  const auto slow_data = std::make_shared<WatchedDataset>(tr, 20);
  const auto slow_eval_data = std::make_shared<WatchedDataset>(te, 100);
  data::DataLoader slow(slow_data, {.batch_size = 50, .prefetch = 0});
  data::DataLoader slow_eval(slow_eval_data, {.batch_size = 50, .prefetch = 0});
  train::TrainerOptions o;
  o.epochs = 1;
  const train::RunResult r = train::Trainer(*model, *opt, slow, &slow_eval, o).run();
  VERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
  const train::EpochEnd& e = r.history.front();
  // Without prefetch the training thread assembles each batch while it waits: the wait holds all
  // the time the 10 batches took.
  COMPARE(slow_data->batches(), int64_t(10));
  COMPARE(slow_data->on_owner_thread(), int64_t(10));
  VERIFY2(e.data_wait_seconds >= slow_data->seconds(),
          "waited " + number(e.data_wait_seconds) + " s for 10 batches that took " + number(slow_data->seconds()) +
              " s");
  COMPARE(slow_eval_data->batches(), int64_t(2));
  VERIFY(e.seconds >= e.data_wait_seconds + slow_eval_data->seconds());
  // The slow evaluation is in the epoch's seconds, not in the training loop's.
  VERIFY(e.train_seconds >= e.data_wait_seconds && e.train_seconds <= e.seconds - slow_eval_data->seconds());

  // In-memory data assembled ahead of a model that takes longer per batch: training hardly waits,
  // because the loader's worker assembles every batch and the training thread none. (Whether each
  // batch is ready in time depends on the scheduler of a loaded machine, so it is not asserted.)
  auto lenet = train::make_builtin_model("lenet", &gen);
  auto lenet_opt = optim::make_optimizer({.optimizer = "sgd", .lr = 0.01}, lenet->parameters());
  const auto fast_data = std::make_shared<WatchedDataset>(tr, 0);
  data::DataLoader fast(fast_data, {.batch_size = 50, .transform = train::standardize_images(*tr)});
  const train::RunResult rf = train::Trainer(*lenet, *lenet_opt, fast, nullptr, o).run();
  VERIFY2(rf.status == train::RunStatus::Completed, rf.message.c_str());
  const train::EpochEnd& f = rf.history.front();
  std::printf("waited on data: %.3f s of %.3f s with 20 ms batches, %.3f s of %.3f s in memory\n",
              e.data_wait_seconds, e.seconds, f.data_wait_seconds, f.seconds);
  COMPARE(fast_data->batches(), int64_t(10));
  COMPARE(fast_data->on_owner_thread(), int64_t(0));
  VERIFY2(f.data_wait_seconds >= 0 && f.data_wait_seconds <= f.train_seconds,
          "waited " + number(f.data_wait_seconds) + " s of " + number(f.seconds) + " s");
}

TEST(runsAreReproducibleForASeed) {
  auto run_once = [] {
    Setup s = make_setup(600, 100, 7);
    train::TrainerOptions o;
    o.epochs = 2;
    train::Trainer(*s.model, *s.opt, *s.train, nullptr, o).run();
    return weights(*s.model);
  };
  COMPARE(run_once(), run_once());
}

TEST(checkpointRoundTripIsBitExact) {
  const testing::TempDir dir;
  const fs::path file = dir.file("lenet.safetensors");
  Generator gen(3);
  auto a = train::make_builtin_model("lenet", &gen);
  auto opt_a = optim::make_optimizer({.optimizer = "adam", .lr = 1e-3}, a->parameters());
  const Tensor x = rand({4, 1, 28, 28}, &gen), y = from_vector({1, 2, 3, 4}, {4});
  cross_entropy((*a)(x), y).backward();
  opt_a->step();
  train::save_checkpoint(file, *a, opt_a.get(), {{"note", "test"}});

  Generator other(99);
  auto b = train::make_builtin_model("lenet", &other);
  auto opt_b = optim::make_optimizer({.optimizer = "adam", .lr = 1e-3}, b->parameters());
  const train::Metadata meta = train::load_checkpoint(file, *b, opt_b.get());
  COMPARE(meta.at("note"), std::string("test"));
  COMPARE((*b)(x).to_vector(), (*a)(x).to_vector());
  COMPARE(weights(*b), weights(*a));
  // Optimizer state came along: one more identical step keeps them identical.
  for (auto* m : {a.get(), b.get()}) m->zero_grad();
  cross_entropy((*a)(x), y).backward();
  cross_entropy((*b)(x), y).backward();
  opt_a->step();
  opt_b->step();
  COMPARE(weights(*b), weights(*a));
}

TEST(mismatchedCheckpointLeavesTheModelUnchanged) {
  const testing::TempDir dir;
  const fs::path file = dir.file("mlp.safetensors");
  auto mlp128 = train::make_builtin_model("mlp");
  train::save_checkpoint(file, *mlp128);
  auto mlp64 = train::make_builtin_model("mlp64");
  const auto before = weights(*mlp64);
  try {
    train::load_checkpoint(file, *mlp64);
    FAIL("loading a 784-128-10 checkpoint into 784-64-10 must fail");
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    VERIFY2(msg.find("1.weight") != std::string::npos && msg.find("[128, 784]") != std::string::npos &&
                msg.find("[64, 784]") != std::string::npos,
            msg.c_str());
  }
  COMPARE(weights(*mlp64), before);
  // A missing file and a file that is not a checkpoint are errors too.
  VERIFY_THROWS(IoError, train::load_checkpoint(file.string() + ".missing", *mlp64));
  io::save_safetensors(file, {{"x", zeros({2})}});
  VERIFY_THROWS(IoError, train::load_checkpoint(file, *mlp64));
  COMPARE(weights(*mlp64), before);
}

