// plexus-cli: headless front end for Plexus. Links plexus_core only (no Qt): it parses the
// command line and wires core pieces together; training itself is core::train::Trainer.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/dataloader.h"
#include "data/transforms.h"
#include "data/mnist.h"
#include "optim/scheduler.h"
#include "train/builtin.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "util/error.h"
#include "util/threads.h"

using namespace plexus;

namespace {

constexpr std::string_view kUsage = R"(Usage: plexus-cli <command> [options]
       plexus-cli --help | --version

Headless front end for Plexus, a tool for designing and training neural networks.

Commands:
  train   train a built-in model on an image dataset
  eval    evaluate a checkpoint on the test split
  (check and grad arrive with project files)

Options of train and eval:
  --model NAME         mlp (784-128-10), mlp64 (784-64-10) or lenet      [mlp]
  --dataset KIND       mnist or fashion-mnist                              [mnist]
  --data DIR           folder with the IDX files  [data/mnist; fashion-mnist:
                       /usr/share/datasets/fashion-mnist]
  --batch-size N       examples per batch                                  [100]
  --threads N          CPU threads for the math                  [all hardware threads]

Options of train only:
  --epochs N           passes over the training set                        [5]
  --optimizer NAME     sgd, adam, adamw, rmsprop or adagrad                 [sgd]
  --lr X               learning rate                                       [0.1]
  --momentum X         momentum (sgd, rmsprop)                             [0]
  --nesterov           Nesterov momentum (sgd)
  --weight-decay X     L2 penalty (adamw: decoupled, default 0.01)         [0]
  --schedule KIND      none, cosine or step (see --step-size, --gamma)     [none]
  --step-size N        epochs between lr decays of the step schedule       [1]
  --gamma X            lr factor of the step schedule                      [0.1]
  --clip-norm X        clip the gradient norm to X (0 = off)               [0]
  --shift K            augment: shift training images by up to K pixels    [0]
  --train-subset N     train on the first N training images only           [all]
  --seed N             seeds initialisation, shuffling, dropout            [1]
  --metrics FILE       append every event as a JSON line to FILE
  --save FILE          save a checkpoint (model + optimizer) after every epoch
  --resume FILE        start from a checkpoint saved with --save
  --quiet              print only the epoch summaries

Options of eval only:
  --checkpoint FILE    the checkpoint to evaluate (required)
  --json               print the result as one JSON object

Exit status: 0 success, 1 a problem with the input or the run, 2 bad usage.
)";

struct UsageError {
  std::string message;
};

// --name value / --flag options, each at most once; values are parsed on request.
class Args {
 public:
  Args(int argc, char** argv, int first, const std::vector<std::string>& flags) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (!a.starts_with("--")) throw UsageError{"unexpected argument '" + a + "'"};
      if (values_.count(a)) throw UsageError{"option " + a + " given twice"};
      if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
        values_[a] = "";
      } else {
        if (i + 1 >= argc) throw UsageError{"option " + a + " needs a value"};
        values_[a] = argv[++i];
      }
    }
  }
  void allow(const std::vector<std::string>& known) const {
    for (const auto& [k, _] : values_)
      if (std::find(known.begin(), known.end(), k) == known.end()) throw UsageError{"unknown option " + k};
  }
  bool has(const std::string& k) const { return values_.count(k) > 0; }
  std::string str(const std::string& k, const std::string& def) const { return has(k) ? values_.at(k) : def; }
  int64_t integer(const std::string& k, int64_t def, int64_t lo) const {
    if (!has(k)) return def;
    try {
      size_t used = 0;
      const int64_t v = std::stoll(values_.at(k), &used);
      if (used == values_.at(k).size() && v >= lo) return v;
    } catch (const std::exception&) {
    }
    throw UsageError{"option " + k + " needs a whole number >= " + std::to_string(lo) + ", got '" + values_.at(k) + "'"};
  }
  double number(const std::string& k, double def) const {
    if (!has(k)) return def;
    try {
      size_t used = 0;
      const double v = std::stod(values_.at(k), &used);
      if (used == values_.at(k).size() && std::isfinite(v) && v >= 0) return v;
    } catch (const std::exception&) {
    }
    throw UsageError{"option " + k + " needs a non-negative number, got '" + values_.at(k) + "'"};
  }

 private:
  std::map<std::string, std::string> values_;
};

const std::vector<std::string> kCommonOptions{"--model", "--dataset", "--data", "--batch-size", "--threads"};

std::string default_folder(const std::string& dataset) {
  return dataset == "fashion-mnist" ? data::MnistDataset::kDebianFashionDir : "data/mnist";
}

std::string clock_text(double seconds) {
  const int64_t s = int64_t(std::llround(std::max(0.0, seconds)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
  return buf;
}

nlohmann::json to_json(const train::Event& event) {
  return std::visit(
      [](const auto& e) -> nlohmann::json {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, train::BatchEnd>) {
          return {{"event", "batch"}, {"epoch", e.epoch}, {"batch", e.batch}, {"batches", e.batches},
                  {"loss", e.loss}, {"running_loss", e.running_loss}, {"running_accuracy", e.running_accuracy},
                  {"samples_per_second", e.samples_per_second}, {"lr", e.lr}};
        } else if constexpr (std::is_same_v<T, train::EpochEnd>) {
          nlohmann::json j{{"event", "epoch"}, {"epoch", e.epoch}, {"train_loss", e.train_loss},
                           {"train_accuracy", e.train_accuracy}, {"lr", e.lr}, {"seconds", e.seconds}};
          if (e.has_eval) {
            j["eval_loss"] = e.eval_loss;
            j["eval_accuracy"] = e.eval_accuracy;
            j["eval_top5"] = e.eval_top5;
            nlohmann::json per = nlohmann::json::array();
            for (double v : e.per_class_accuracy) per.push_back(std::isnan(v) ? nlohmann::json() : nlohmann::json(v));
            j["per_class_accuracy"] = per;
            j["confusion"] = e.confusion;
          }
          return j;
        } else if constexpr (std::is_same_v<T, train::Finished>) {
          return {{"event", "finished"}, {"cancelled", e.cancelled}, {"epochs", e.epochs_completed},
                  {"seconds", e.seconds}};
        } else {
          return {{"event", "failed"}, {"message", e.message}};
        }
      },
      event);
}

void print_epoch(const train::EpochEnd& e) {
  std::printf("epoch %d/%d: train loss %.4f acc %.2f%%", e.epoch, e.epochs, e.train_loss, 100 * e.train_accuracy);
  if (e.has_eval)
    std::printf(" | test loss %.4f acc %.2f%% top-5 %.2f%%", e.eval_loss, 100 * e.eval_accuracy, 100 * e.eval_top5);
  std::printf(" | lr %.4g | %.1f s\n", e.lr, e.seconds);
  std::fflush(stdout);
}

int cmd_train(const Args& args) {
  std::vector<std::string> known = kCommonOptions;
  for (const char* o : {"--epochs", "--optimizer", "--lr", "--momentum", "--nesterov", "--weight-decay", "--schedule",
                        "--step-size", "--gamma", "--clip-norm", "--shift", "--train-subset", "--seed", "--metrics",
                        "--save", "--resume", "--quiet"})
    known.push_back(o);
  args.allow(known);
  const std::string model_name = args.str("--model", "mlp"), dataset = args.str("--dataset", "mnist");
  const std::string folder = args.str("--data", default_folder(dataset));
  const int64_t batch = args.integer("--batch-size", 100, 1), epochs = args.integer("--epochs", 5, 1);
  const uint64_t seed = uint64_t(args.integer("--seed", 1, 0));
  const std::string schedule = args.str("--schedule", "none");
  if (schedule != "none" && schedule != "cosine" && schedule != "step")
    throw UsageError{"--schedule must be none, cosine or step, got '" + schedule + "'"};
  const bool quiet = args.has("--quiet");
  if (args.has("--threads")) set_num_threads(int(args.integer("--threads", 1, 1)));

  Generator init_gen(seed);
  auto model = train::make_builtin_model(model_name, &init_gen);
  train::OptimizerConfig oc;
  oc.kind = args.str("--optimizer", "sgd");
  oc.lr = args.number("--lr", 0.1);
  oc.momentum = args.number("--momentum", 0);
  oc.nesterov = args.has("--nesterov");
  oc.weight_decay = args.number("--weight-decay", 0);
  oc.weight_decay_set = args.has("--weight-decay");
  auto optimizer = train::make_optimizer(oc, model->parameters());

  std::shared_ptr<const data::Dataset> train_set = train::open_image_dataset(dataset, folder, true);
  const std::shared_ptr<const data::Dataset> test_set = train::open_image_dataset(dataset, folder, false);
  if (args.has("--train-subset")) {
    const int64_t n = std::min(args.integer("--train-subset", 0, 1), train_set->size());
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) idx[size_t(i)] = i;
    train_set = std::make_shared<data::Subset>(train_set, idx);
  }
  // Inputs are standardised with the training images' mean and std (after any shift, whose
  // zero fill is the background), the usual MNIST preprocessing.
  const data::TransformPtr normalize = train::standardize_images(*train_set);
  data::DataLoaderOptions lo{.batch_size = batch, .shuffle = true, .seed = seed, .transform = normalize};
  if (const int64_t k = args.integer("--shift", 0, 0)) lo.transform = data::compose({data::random_shift(k), normalize});
  data::DataLoader train_loader(train_set, lo);
  data::DataLoader test_loader(test_set, {.batch_size = 1000, .transform = normalize});

  std::unique_ptr<optim::LRScheduler> scheduler;
  if (schedule == "cosine") scheduler = std::make_unique<optim::CosineAnnealingLR>(*optimizer, epochs);
  if (schedule == "step")
    scheduler = std::make_unique<optim::StepLR>(*optimizer, args.integer("--step-size", 1, 1), args.number("--gamma", 0.1));

  if (args.has("--resume")) {
    train::load_checkpoint(args.str("--resume", ""), *model, optimizer.get());
    std::printf("resumed from %s\n", args.str("--resume", "").c_str());
  }

  std::ofstream metrics;
  if (args.has("--metrics")) {
    metrics.open(args.str("--metrics", ""), std::ios::app);
    if (!metrics) throw IoError("cannot open metrics file " + args.str("--metrics", ""));
  }

  std::printf("model %s (%lld parameters), %s from %s: %lld train / %lld test images, %s lr %g, batch %lld, %d threads\n",
              model_name.c_str(), (long long)model->num_parameters(), dataset.c_str(), folder.c_str(),
              (long long)train_set->size(), (long long)test_set->size(), oc.kind.c_str(), oc.lr, (long long)batch,
              num_threads());
  std::fflush(stdout);

  train::TrainerOptions to;
  to.epochs = int(epochs);
  to.clip_grad_norm = float(args.number("--clip-norm", 0));
  to.seed = seed;
  train::Trainer trainer(*model, *optimizer, train_loader, &test_loader, to);
  trainer.set_scheduler(scheduler.get());
  const std::string save_path = args.str("--save", "");
  auto last_print = std::chrono::steady_clock::now();
  trainer.set_callback([&](const train::Event& event) {
    if (metrics.is_open()) metrics << to_json(event).dump() << '\n' << std::flush;
    if (const auto* b = std::get_if<train::BatchEnd>(&event)) {
      const auto now = std::chrono::steady_clock::now();
      if (quiet || (now - last_print < std::chrono::seconds(1) && b->batch != b->batches)) return;
      last_print = now;
      std::printf("epoch %d/%d  batch %lld/%lld  loss %.4f  acc %.2f%%  %.0f samples/s  ETA %s\n", b->epoch, b->epochs,
                  (long long)b->batch, (long long)b->batches, b->running_loss, 100 * b->running_accuracy,
                  b->samples_per_second, clock_text(b->eta_seconds).c_str());
      std::fflush(stdout);
    } else if (const auto* e = std::get_if<train::EpochEnd>(&event)) {
      print_epoch(*e);
      if (!save_path.empty()) train::save_checkpoint(save_path, *model, optimizer.get(), {{"model", model_name}});
    }
  });
  const train::RunResult result = trainer.run();
  if (result.status == train::RunStatus::Failed) {
    std::fprintf(stderr, "plexus-cli: training failed: %s\n", result.message.c_str());
    return 1;
  }
  std::printf("finished %d epochs in %.1f s\n", result.epochs_completed, result.seconds);
  return 0;
}

int cmd_eval(const Args& args) {
  std::vector<std::string> known = kCommonOptions;
  known.push_back("--checkpoint");
  known.push_back("--json");
  args.allow(known);
  if (!args.has("--checkpoint")) throw UsageError{"eval needs --checkpoint FILE"};
  const std::string model_name = args.str("--model", "mlp"), dataset = args.str("--dataset", "mnist");
  const std::string folder = args.str("--data", default_folder(dataset));
  if (args.has("--threads")) set_num_threads(int(args.integer("--threads", 1, 1)));
  auto model = train::make_builtin_model(model_name);
  train::load_checkpoint(args.str("--checkpoint", ""), *model);
  const auto test_set = train::open_image_dataset(dataset, folder, false);
  const auto train_set = train::open_image_dataset(dataset, folder, true);
  data::DataLoader loader(test_set, {.batch_size = args.integer("--batch-size", 1000, 1),
                                     .transform = train::standardize_images(*train_set)});
  // evaluate() needs a Trainer only for its loss and metrics settings; nothing is trained.
  auto optimizer = train::make_optimizer({}, model->parameters());
  data::DataLoader unused(test_set, {.batch_size = 1});
  train::Trainer trainer(*model, *optimizer, unused);
  const train::EpochEnd r = trainer.evaluate(loader);
  if (args.has("--json")) {
    nlohmann::json j = to_json(r);
    j["event"] = "eval";
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s on %lld %s test images: loss %.4f, accuracy %.2f%%, top-5 %.2f%%\n", model_name.c_str(),
              (long long)test_set->size(), dataset.c_str(), r.eval_loss, 100 * r.eval_accuracy, 100 * r.eval_top5);
  std::printf("per-class accuracy:");
  for (size_t c = 0; c < r.per_class_accuracy.size(); ++c) std::printf(" %zu:%.1f%%", c, 100 * r.per_class_accuracy[c]);
  std::printf("\nconfusion matrix (rows: true class, columns: predicted):\n");
  for (int64_t i = 0; i < r.classes; ++i) {
    for (int64_t j = 0; j < r.classes; ++j) std::printf("%6lld", (long long)r.confusion[size_t(i * r.classes + j)]);
    std::printf("\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "-h" || cmd == "--help") {
      if (argc != 2) throw UsageError{"unexpected argument '" + std::string(argv[2]) + "'"};
      std::fwrite(kUsage.data(), 1, kUsage.size(), stdout);
      return 0;
    }
    if (cmd == "-V" || cmd == "--version") {
      if (argc != 2) throw UsageError{"unexpected argument '" + std::string(argv[2]) + "'"};
      std::printf("plexus-cli %s\n", PLEXUS_VERSION);
      return 0;
    }
    if (cmd == "train") return cmd_train(Args(argc, argv, 2, {"--nesterov", "--quiet"}));
    if (cmd == "eval") return cmd_eval(Args(argc, argv, 2, {"--json"}));
    if (cmd == "check" || cmd == "grad")
      throw UsageError{"'" + std::string(cmd) + "' arrives with project files and is not available yet"};
    throw UsageError{cmd.empty() ? "no command given" : "unknown command '" + std::string(cmd) + "'"};
  } catch (const UsageError& e) {
    std::fprintf(stderr, "plexus-cli: %s\n\n", e.message.c_str());
    std::fwrite(kUsage.data(), 1, kUsage.size(), stderr);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plexus-cli: %s\n", e.what());
    return 1;
  }
}
