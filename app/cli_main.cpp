// plexus-cli: headless front end for Plexus. Links plexus_core only (no Qt): it parses the
// command line and wires core pieces together; training itself is core::train::Trainer, a
// project's run is built by core::session::make_training_run (session/run.h) and saved by
// session::RunCheckpoints, exactly as the GUI's Train button does.
#include <charconv>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/cuda.h"
#include "data/csv.h"
#include "data/dataloader.h"
#include "data/image_file.h"
#include "data/transforms.h"
#include "data/mnist.h"
#include "dist/launch.h"
#include "dist/replicas.h"
#include "export/onnx.h"
#include "graph/dataset_info.h"
#include "graph/diff.h"
#include "graph/layer_docs.h"
#include "graph/node_settings.h"
#include "graph/project.h"
#include "graph/validate.h"
#include "io/atomic_file.h"
#include "io/safetensors.h"
#include "layers/compiler.h"
#include "ops/ops.h"
#include "optim/factory.h"
#include "session/continuation.h"
#include "session/data_pipeline.h"
#include "session/run.h"
#include "session/run_folder.h"
#include "session/run_log.h"
#include "session/text_sampling.h"
#include "session/trained_model.h"
#include "train/builtin.h"
#include "train/partial_load.h"
#include "train/checkpoint.h"
#include "train/event_json.h"
#include "train/peak.h"
#include "train/trainer.h"
#include "util/error.h"
#include "util/system_memory.h"
#include "util/text.h"
#include "util/threads.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kUsage = R"(Usage: plexus-cli <command> [options]
       plexus-cli --help | --version

Headless front end for Plexus, a tool for designing and training neural networks.

Commands:
  check FILE        validate a project file (.plexus): every problem, the shape on every edge
  train FILE        train the model a project file describes, with its own settings
  train --model M   train a built-in model on an image dataset
  eval [FILE]       evaluate a project's checkpoint or weights file on its test split
  eval [--model M]  evaluate a built-in model's checkpoint on the test split
  predict [FILE]    use a trained model on images (PNG, JPEG, BMP) or rows of a CSV file
  sample [FILE]     generate text with a trained text model
  export FILE       write a checkpoint of a project as an ONNX model
  runs FILE         list a project's past runs
  diff A B          what changed from project or run A to B: nodes, parameters, wires, settings
  init              write a project's freshly initialised weights (safetensors)
  grad              one forward and backward pass of a project: loss and every gradient
  layers            list every layer type: ports, parameters, defaults, ranges
  devices           list the devices training can use (the CPU, CUDA GPUs)

check FILE [--quiet]
  Loads the project, describes its dataset (a dataset that cannot be read is a warning:
  the graph is then validated without it), validates the graph (training that would not
  fit in this machine's memory included) and the training settings, and prints every
  problem, one per line ("error fc2.input: ..."), then the shape of every edge
  ("fc1.output -> act.input  [N, 128]") and the memory training needs. --quiet prints the
  problems only.
  Exit status 1 when there is any error (warnings are fine).

train FILE [options]
  Trains the project's graph on its dataset with its training settings; the options below
  override the file. Relative dataset paths are looked up next to the project file first,
  then in the current directory. The project's validation_fraction of the training data
  (seeded) is evaluated after every epoch and chooses the best checkpoint; the test split is
  evaluated once, with the final model, when the run completes. Inputs are standardised with
  the training split's mean and std. A regression loss (MSE, BCEWithLogits) reports loss only.
  --epochs N  --batch-size N  --lr X  --optimizer NAME  --seed N
  --data PATH          use this dataset folder or file instead of the project's
  --train-subset N     train on the first N training examples only
  --device D           cpu, cuda or cuda:N instead of the project's device
  --precision P        fp32 or bf16 (GPU products) instead of the project's precision
  --no-cuda-graphs     run every GPU step op by op (the project's cuda_graphs: false)
  --warmup-steps N     raise the learning rate linearly over the first N optimizer steps, on
                       top of the schedule (the project's warmup_steps; 0 = none)
  --lr-mult NODE=F     train the node with id NODE at F times the learning rate (0 freezes its
                       weights); repeatable, for other nodes (the node's lr_mult)
  --weight-decay-mult NODE=F   the same for the weight decay (the node's weight_decay_mult)
  --metrics F  --save F  --resume F  --quiet  --threads N    (as for the built-in models)
  --save-run           keep the run as the GUI does, in <project folder>/<name>.runs/<date-time>/:
                       best.safetensors whenever the validation score improves and
                       final.safetensors at the end, each with the project inside;
                       project.plexus; metrics.jsonl (a header line, then every event)
  --run-dir DIR        the same, in DIR (which must not hold a run already)
  --init-from C        start from the matching tensors of C, a checkpoint (with or without its
                       optimizer state) or a weights file: every tensor whose node id and shape
                       match is copied, with its optimizer state when C has some of the same
                       optimizer; the rest start as initialised. Prints which tensors were
                       kept, reset and ignored; a kept run's header names C ("init_from")
  --continue RUN_DIR   go on from the run in RUN_DIR: its final checkpoint with the optimizer
                       state, for --epochs (or the project's epochs) more epochs numbered on
                       from the run's, with this project's settings; the project must have
                       the run's layers and edges. Kept in a new run folder (as --save-run,
                       or --run-dir) whose metrics.jsonl header names RUN_DIR
  --accumulate-steps K one optimizer step per K batches (the project's accumulate_steps)
  --rank-timeout S     data-parallel: seconds a rank waits for the others before it stops
                       the job (default 120)
  Ctrl-C (SIGINT) or SIGTERM stops after the current batch, keeping final.safetensors.
  Data-parallel: mpirun -np N plexus-cli train FILE ... trains one model on N processes
  (docs/distributed.md). batch_size is the global batch: each rank takes its share of every
  batch, the gradients are summed over the ranks during backward, and rank 0 alone prints,
  writes --metrics, --save and the run folder. With --device cuda each rank uses the GPU of
  its local rank; without --threads the ranks on a machine share its cores.

eval [FILE] --checkpoint CKPT [--json] [--metrics F] [--predictions F] [--data PATH]
     [--batch-size N] [--device D] [--threads N]
  Evaluates the project's model with the weights of CKPT on the test split of its dataset:
  loss, and for classification accuracy, top-5, per-class accuracy and the confusion matrix.
  CKPT is a run checkpoint (a run's best.safetensors or final.safetensors, tensors
  "model.<node>.<param>") or a weights file (tensors "<node>.<param>", from init or the
  GUI's Export Weights). Without FILE, the project is the one a run checkpoint holds; its
  relative dataset path is looked up in the folder holding the run's <name>.runs folder, then
  in the current directory. A checkpoint of a built-in model (train --model) is evaluated as
  that model.
  --json               print the result as one JSON object
  --metrics F          write that JSON object to F
  --predictions F      write one CSV line per test example to F: index,label,predicted,
                       probability (a regression: index,target,prediction)

predict [FILE] --checkpoint CKPT INPUT... [--top K] [--json] [--batch-size N] [--threads N]
  Runs the trained model on each INPUT and prints, per example, the K most likely classes
  with their probabilities (softmax), or the regression output. FILE (a first argument
  ending in .plexus) and CKPT are as for eval. For an image dataset the INPUTs are PNG,
  JPEG or BMP images of any size: converted to the model's channels (gray: ITU-R BT.601 luma)
  and size (shrunk by area averaging, enlarged bilinearly), scaled to [0, 1] as the training
  images were, then normalised as in training. For a CSV dataset the INPUTs are CSV files
  whose header names the project's feature columns (matched by name when the project's data
  file is at hand, else every column but the target, in order); a target column is ignored.
  --top K              classes shown per example                          [3]
  --json               one JSON object per example: {"input", ("row",) "classes":
                       [{"class", "name", "probability"}...]} or {"input", ("row",) "value"}
  --batch-size N       examples per forward pass                          [100]

sample [FILE] --checkpoint CKPT [--count N] [--temperature T] [--prime TEXT]
       [--max-length N] [--seed S] [--json] [--threads N]
  Generates text with a model trained on a text dataset (kind "text"), one sample a line.
  FILE and CKPT are as for eval; the vocabulary is the one CKPT stores, so the text file is
  not needed. Each sample grows one character at a time, drawn from the model's softmax over
  the vocabulary at temperature T; the model sees at most the dataset's seq_len last
  characters. Without --prime a sample starts after a newline when the vocabulary has one
  (whole lines: names of a one-name-per-line corpus) and ends at the next newline.
  --count N            samples                                            [20]
  --temperature T      lower: likelier characters, higher: more varied;    [0.8]
                       0: always the likeliest (the same text every time)
  --prime TEXT         text every sample starts with and continues
  --max-length N       characters generated per sample, after the prime   [200]
  --seed S             the same seed gives the same samples               [1]
  --json               one JSON object per sample: {"sample", "text"}

export FILE --checkpoint CKPT --onnx OUT.onnx
  Writes the project's model with the weights of CKPT (a run's best.safetensors or
  final.safetensors, or a weights file) as an ONNX model, opset 13: input "x", float32
  [N, input shape...] in raw units (images: pixel / 255; the model standardises them as the
  run did), output "logits", the tensor that feeds the loss. A node that cannot be exported
  is named, and nothing is written then.

init --project FILE --out W.safetensors [--seed S]
  Compiles the project with seed S (default: the project's seed) and writes its initial
  parameters and buffers, each under its name "<node id>.<param>" (e.g. "fc1.weight").

grad --project FILE --weights W.safetensors --input X.safetensors --out G.safetensors
  Loads the weights (every tensor of the model must be there with its shape, nothing
  else), reads the batch from X: tensor "x" [N, input shape...] and tensor "y" (class
  indices as floats [N], or targets), and runs one forward and backward pass in training
  mode: batch normalization uses the batch's statistics, and dropout draws from the default
  generator seeded with the project's seed, so the result is reproducible. Writes "loss"
  (a 0-d tensor) and the gradient of every parameter under the parameter's name.

runs FILE [--json]
  The project's past runs (the folders of <name>.runs/ with a metrics.jsonl), newest first:
  folder, start, status, epochs, best validation accuracy (or loss) and the test figures. A
  run whose log cannot be read is listed with the reason. --json prints one JSON array.

diff A B [--json]
  Compares two projects: A and B are project files, or run folders (their project.plexus, the
  project as it trained). Prints one line per difference, B against A: nodes added, removed,
  retyped or renamed ("Linear 'fc1': out_features 128 → 64"; parameters with the type's
  defaults filled in, so one set to its default is no change) or trained otherwise
  ("Linear 'fc1': lr_mult 1 → 0"), wires added and removed, and dataset and training
  settings ("training.lr 0.1 → 0.01"); or "no differences". Positions and the editor's view
  are not compared. --json prints one JSON object: "summary", "added", "removed", "changed"
  (each with its "params" and "settings"), "edges_added", "edges_removed", "settings" and
  "same_structure" (the nodes, their types and parameters and the wires are the same).
  Exit status 0 whether or not they differ, 1 when A or B cannot be read.

layers [--markdown]
  Every layer type of the registry; --markdown writes docs/layers.md's format.

Options of train --model and eval (built-in models):
  --model NAME         mlp (784-128-10), mlp64 (784-64-10),               [mlp]
                       mlp1024 (784-1024-1024-10) or lenet
  --dataset KIND       mnist or fashion-mnist                              [mnist]
  --data DIR           folder with the IDX files  [data/mnist; fashion-mnist:
                       /usr/share/datasets/fashion-mnist]
  --batch-size N       examples per batch                                  [100]
  --threads N          CPU threads for the math                  [all hardware threads]
  --device D           cpu, cuda (the first GPU) or cuda:N                 [cpu]

Options of train --model only:
  --epochs N           passes over the training set                        [5]
  --optimizer NAME     sgd, adam, adamw, rmsprop or adagrad                 [sgd]
  --lr X               learning rate                                       [0.1]
  --momentum X         momentum (sgd, rmsprop)                             [0]
  --nesterov           Nesterov momentum (sgd)
  --weight-decay X     L2 penalty (adamw: decoupled, default 0.01)         [0]
  --schedule KIND      none, cosine or step (see --step-size, --gamma)     [none]
  --step-size N        epochs between lr decays of the step schedule       [1]
  --gamma X            lr factor of the step schedule                      [0.1]
  --warmup-steps N     lr from 0.1x up to X over the first N steps         [0]
  --clip-norm X        clip the gradient norm to X (0 = off)               [0]
  --precision P        fp32, or bf16 products with fp32 accumulation (GPU) [fp32]
  --no-cuda-graphs     on a GPU, run every step op by op instead of replaying
                       the captured step as a CUDA graph
  --shift K            augment: shift training images by up to K pixels    [0]
  --train-subset N     train on the first N training images only           [all]
  --seed N             seeds initialisation, shuffling, dropout            [1]
  --metrics FILE       append every event as a JSON line to FILE
  --save FILE          save a checkpoint (model + optimizer) after every epoch
  --resume FILE        start from a checkpoint saved with --save
  --quiet              print only the epoch summaries

Options of eval with a built-in model only:
  --checkpoint FILE    the checkpoint to evaluate (required); its model (metadata "model")
                       is the default for --model
  --json  --metrics F  --predictions F    (as for eval FILE)

Exit status: 0 success, 1 a problem with the input or the run, 2 bad usage.
)";

struct UsageError {
  std::string message;
};

// A finite number >= 0 written out in full; nullopt for anything else.
std::optional<double> non_negative_number(const std::string& text) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v) && v >= 0) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// --name value / --flag options, each at most once (but the `repeatable` ones, whose values
// all() lists), and up to `max_positional` plain arguments (a project FILE); values are parsed
// on request. Every command calls allow() first: it rejects unknown options, then an option
// left without its value.
class Args {
 public:
  Args(int argc, char** argv, int first, const std::vector<std::string>& flags, size_t max_positional = 0,
       const std::vector<std::string>& repeatable = {}) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (!a.starts_with("--")) {
        if (positional_.size() >= max_positional) throw UsageError{"unexpected argument '" + a + "'"};
        positional_.push_back(a);
        continue;
      }
      const bool listed = std::find(repeatable.begin(), repeatable.end(), a) != repeatable.end();
      if (values_.count(a) && !listed) throw UsageError{"option " + a + " given twice"};
      if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
        values_[a] = "";
      } else {
        if (i + 1 >= argc) {
          missing_value_ = a;  // reported by allow(), after unknown options
          values_[a] = "";
          break;
        }
        values_[a] = argv[++i];
        if (listed) lists_[a].push_back(values_[a]);
      }
    }
  }
  void allow(const std::vector<std::string>& known) const {
    for (const auto& [k, _] : values_)
      if (std::find(known.begin(), known.end(), k) == known.end()) throw UsageError{"unknown option " + k};
    if (!missing_value_.empty()) throw UsageError{"option " + missing_value_ + " needs a value"};
  }
  // Every value of a repeatable option, in order.
  std::vector<std::string> all(const std::string& k) const {
    return lists_.count(k) ? lists_.at(k) : std::vector<std::string>{};
  }
  void require(const std::string& command, const std::vector<std::string>& needed) const {
    for (const std::string& k : needed)
      if (!has(k)) throw UsageError{command + " needs " + k + " FILE"};
  }
  const std::vector<std::string>& positional() const { return positional_; }
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
    if (const std::optional<double> v = non_negative_number(values_.at(k))) return *v;
    throw UsageError{"option " + k + " needs a non-negative number, got '" + values_.at(k) + "'"};
  }

 private:
  std::map<std::string, std::string> values_;  // a repeatable option's last value
  std::map<std::string, std::vector<std::string>> lists_;
  std::vector<std::string> positional_;
  std::string missing_value_;
};

const std::vector<std::string> kCommonOptions{"--model", "--dataset", "--data", "--batch-size", "--threads", "--device"};

// The --device option, checked against the machine (DeviceError when the GPU is missing).
Device device_option(const Args& args) {
  const std::string text = args.str("--device", "cpu");
  Device d;
  try {
    d = parse_device(text);
  } catch (const ValueError& e) {
    throw UsageError{std::string("--device: ") + e.what()};
  }
  cuda::check_available(d);
  return d;
}

std::string default_folder(const std::string& dataset) {
  return dataset == "fashion-mnist" ? data::MnistDataset::kDebianFashionDir : "data/mnist";
}

std::string clock_text(double seconds) {
  const int64_t s = int64_t(std::llround(std::max(0.0, seconds)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
  return buf;
}

// "41200 samples/s, 98.4 GFLOP/s, 43% of peak": the speed figures that are known (a model's
// FLOPs are counted for project files, the peak where it could be measured).
std::string speed_text(double samples_per_second, double gflops, double peak_gflops) {
  char buf[96];
  int n = std::snprintf(buf, sizeof buf, "%.0f samples/s", samples_per_second);
  if (gflops > 0) n += std::snprintf(buf + n, sizeof buf - size_t(n), ", %.*f GFLOP/s", gflops < 100 ? 1 : 0, gflops);
  if (const double share = train::share_of_peak(gflops, peak_gflops); share > 0)
    std::snprintf(buf + n, sizeof buf - size_t(n), ", %.*f%% of peak", train::percent_decimals(100 * share), 100 * share);
  return buf;
}

// Measures (or finds in the cache) the peak of the device this thread will train on, and says
// what a run's "% of peak" is measured against.
double machine_peak(Device device, Precision precision) {
  const train::MachinePeak peak = train::machine_peak(device, train::default_peak_cache(), precision);
  if (peak.gflops > 0)
    std::printf("this machine's peak: %.0f GFLOP/s (our matrix product on %s, measured %s)\n", peak.gflops,
                peak.key.c_str(), peak.measured.c_str());
  return peak.gflops;
}

// `held_out` names what each epoch is evaluated on: "val" for a project's validation split,
// "test" for the built-in models (which hold out no validation split).
void print_epoch(const train::EpochEnd& e, bool classification, const char* held_out) {
  std::printf("epoch %d/%d: train loss %.4f", e.epoch, e.epochs, e.train_loss);
  if (classification) std::printf(" acc %.2f%%", 100 * e.train_accuracy);
  if (e.has_eval) {
    std::printf(" | %s loss %.4f", held_out, e.eval_loss);
    if (classification) std::printf(" acc %.2f%% top-5 %.2f%%", 100 * e.eval_accuracy, 100 * e.eval_top5);
  }
  std::printf(" | lr %.4g | %.1f s, %s", e.lr, e.seconds, speed_text(e.samples_per_second, e.gflops, e.peak_gflops).c_str());
  // The share of the training loop's time spent waiting on data, when it is worth a look.
  const double waited = e.train_seconds > 0 ? e.data_wait_seconds / e.train_seconds : 0.0;
  if (waited >= 0.01) std::printf(", waited on data %.0f%%", 100 * waited);
  std::printf("\n");
  // A text project's samples, one a line; a sample that spans lines stays indented.
  for (const std::string& sample : e.samples) {
    std::string shown;
    for (char c : sample) shown += c == '\n' ? std::string("\n    ") : std::string(1, c);
    std::printf("  > %s\n", shown.c_str());
  }
  std::fflush(stdout);
}

// How a training run reports: progress lines at most once a second (the last batch of an
// epoch always), an epoch summary, JSON lines to the metrics file and the run folder's log, and
// hooks after every epoch and after the run, failed or not (saving checkpoints). Shared by the
// built-in models and project files.
struct Reporting {
  bool quiet = false;
  bool classification = true;
  const char* held_out = "test";  // what epochs are evaluated on (print_epoch)
  std::string metrics_path;  // "" = none
  session::RunLog* log = nullptr;  // a run folder's metrics.jsonl; none without a run folder
  train::NodeInfos nodes;          // names the nodes of health issues (else their ids)
  std::function<void(const train::EpochEnd&)> after_epoch;
  std::function<void(const train::RunResult&)> after_run;
  dist::Communicator* comm = nullptr;  // data-parallel: the job to stop when this rank fails
};

std::ofstream open_metrics(const std::string& path) {
  std::ofstream metrics;
  if (!path.empty()) {
    metrics.open(path, std::ios::app);
    if (!metrics) throw IoError("cannot open metrics file " + path);
  }
  return metrics;
}

// SIGINT (Ctrl-C) or SIGTERM (mpirun passes Ctrl-C on as it): the run stops after the
// current batch; the handler is reset, so a second Ctrl-C ends the process at once.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int) { g_stop_signal = 1; }

void stop_on_signals() {
  struct sigaction a {};
  a.sa_handler = on_stop_signal;
  a.sa_flags = SA_RESETHAND;
  sigemptyset(&a.sa_mask);
  sigaction(SIGINT, &a, nullptr);
  sigaction(SIGTERM, &a, nullptr);
}

int run_and_report(train::Trainer& trainer, const Reporting& r) {
  std::ofstream metrics = open_metrics(r.metrics_path);
  auto last_print = std::chrono::steady_clock::now();
  std::set<std::pair<std::string, train::HealthKind>> standing;  // health issues already printed
  stop_on_signals();
  trainer.set_callback([&](const train::Event& event) {
    if (g_stop_signal && !trainer.is_cancelled()) {
      trainer.cancel();
      std::fprintf(stderr, "plexus-cli: stopping after this batch\n");
    }
    if (metrics.is_open()) metrics << train::to_json(event, r.classification).dump() << '\n' << std::flush;
    if (r.log) r.log->record(event);
    if (const auto* b = std::get_if<train::BatchEnd>(&event)) {
      const auto now = std::chrono::steady_clock::now();
      if (r.quiet || (now - last_print < std::chrono::seconds(1) && b->batch != b->batches)) return;
      last_print = now;
      std::printf("epoch %d/%d  batch %lld/%lld  loss %.4f", b->epoch, b->epochs, (long long)b->batch,
                  (long long)b->batches, b->running_loss);
      if (r.classification) std::printf("  acc %.2f%%", 100 * b->running_accuracy);
      std::printf("  %s  ETA %s\n", speed_text(b->samples_per_second, b->gflops, b->peak_gflops).c_str(),
                  clock_text(b->eta_seconds).c_str());
      std::fflush(stdout);
    } else if (const auto* e = std::get_if<train::EpochEnd>(&event)) {
      print_epoch(*e, r.classification, r.held_out);
      if (r.after_epoch) r.after_epoch(*e);
    } else if (const auto* t = std::get_if<train::TestEnd>(&event)) {
      std::printf("test (final model): loss %.4f", t->figures.eval_loss);
      if (r.classification) std::printf(" acc %.2f%% top-5 %.2f%%", 100 * t->figures.eval_accuracy, 100 * t->figures.eval_top5);
      std::printf("\n");
      std::fflush(stdout);
    } else if (const auto* n = std::get_if<train::Notice>(&event)) {
      std::printf("note: %s\n", n->text.c_str());
      std::fflush(stdout);
    } else if (const auto* s = std::get_if<train::NodeStats>(&event)) {
      // A line when an issue appears; it is printed again only after it has cleared.
      std::set<std::pair<std::string, train::HealthKind>> now;
      for (const train::HealthIssue& h : s->health) {
        now.insert({h.node, h.kind});
        if (!standing.count({h.node, h.kind}))
          std::printf("health: %s: %s\n", train::node_label(r.nodes, h.node).c_str(), h.reason.c_str());
      }
      standing = std::move(now);
      std::fflush(stdout);
    }
  });
  const train::RunResult result = trainer.run();
  const bool failed = result.status == train::RunStatus::Failed;
  if (failed) std::fprintf(stderr, "plexus-cli: training failed: %s\n", result.message.c_str());
  else std::printf("finished %zu epochs in %.1f s\n", result.history.size(), result.seconds);
  if (r.after_run) r.after_run(result);
  // A failure of this rank alone leaves the others waiting in a collective: stop them all.
  if (failed && r.comm && !result.every_rank) r.comm->abort("training failed: " + result.message, 1);
  return failed ? 1 : 0;
}

// ---- project files ---------------------------------------------------------------------------

// The folder relative dataset paths are looked up in first.
fs::path project_dir(const std::string& file) { return fs::path(file).parent_path(); }

// The project's dataset description, for commands that need its shapes (init, grad). A
// folder dataset is described without reading it; a CSV file is read.
graph::DatasetInfo describe_project_dataset(const graph::Graph& g, const std::string& file) {
  return graph::describe_dataset(graph::resolve_dataset(g.dataset, project_dir(file), /*must_exist=*/false));
}

std::string shape_text(const std::optional<Shape>& s) {
  if (!s) return "?";
  std::string out = "[N";
  for (int64_t d : *s) out += ", " + std::to_string(d);
  return out + "]";
}

int cmd_check(const Args& args) {
  args.allow({"--quiet"});
  if (args.positional().empty()) throw UsageError{"check needs a project FILE"};
  const std::string file = args.positional()[0];
  const bool quiet = args.has("--quiet");
  const graph::Graph g = graph::load_project(file);

  // The dataset: described when it can be; otherwise a warning, and validation goes on
  // without it (shapes that depend on it stay unknown).
  std::vector<graph::Problem> problems;
  auto warn = [&](std::string m) { problems.push_back({graph::Severity::Warning, "", "", std::move(m)}); };
  std::optional<graph::DatasetInfo> info;
  std::string dataset_line;
  if (g.dataset.kind.empty()) {
    warn("no dataset is bound: shapes that depend on it are unknown");
  } else {
    const bool folder_kind = graph::is_idx_dataset(g.dataset.kind);
    const std::string consequence = folder_kind ? "; training needs it" : ": shapes that depend on it are unknown";
    try {
      graph::check_dataset_values(g.dataset);  // a known kind, settings within range
      const graph::DatasetLocation loc = graph::locate_dataset(g.dataset.path, project_dir(file));
      if (g.dataset.path.empty()) warn("dataset: no path is set (the folder or file with the data)" + consequence);
      else if (!loc.found) warn("dataset '" + g.dataset.path + "' not found (looked in " + loc.looked + ")" + consequence);
      if (loc.found || folder_kind) {  // image datasets are described without reading them
        graph::DatasetBinding b = g.dataset;
        b.path = loc.path.string();
        info = graph::describe_dataset(b);
        dataset_line = g.dataset.kind + " at " + b.path + ": inputs " + shape_text(info->input_shape) + ", " +
                       (info->classes ? std::to_string(info->classes) + " classes" : std::string("regression targets"));
      }
    } catch (const std::exception& e) {
      std::string m = e.what();
      if (!m.starts_with("dataset")) m = "dataset: " + m;
      warn(m + " (shapes that depend on it are unknown)");
    }
  }
  try {
    session::check_training_settings(g.training);
  } catch (const DeviceError& e) {
    warn(std::string("training: ") + e.what());
  } catch (const std::exception& e) {
    problems.push_back({graph::Severity::Error, "", "", e.what()});
  }

  const graph::Validation v = graph::validate(g, info ? &*info : nullptr);
  problems.insert(problems.begin(), v.problems.begin(), v.problems.end());
  std::stable_sort(problems.begin(), problems.end(), [](const graph::Problem& a, const graph::Problem& b) {
    return a.severity == graph::Severity::Error && b.severity != graph::Severity::Error;
  });
  size_t errors = 0, warnings = 0;
  for (const graph::Problem& p : problems) {
    (p.severity == graph::Severity::Error ? errors : warnings) += 1;
    std::printf("%s\n", graph::to_string(p).c_str());
  }
  if (!quiet) {
    if (!dataset_line.empty()) std::printf("dataset: %s\n", dataset_line.c_str());
    std::printf("edges:\n");
    for (size_t i = 0; i < g.edges.size(); ++i) {
      const graph::Edge& e = g.edges[i];
      std::printf("  %s.%s -> %s.%s  %s\n", e.from.node.c_str(), e.from.port.c_str(), e.to.node.c_str(),
                  e.to.port.c_str(), shape_text(v.shapes.edge_shapes[i]).c_str());
    }
    // From the registry's counts, not by compiling: checking a large graph allocates nothing.
    if (v.ok() && info) {
      const uint64_t machine = machine_memory();
      std::printf("memory: about %s to train with batch size %lld%s\n", memory_text(v.memory.bytes).c_str(),
                  (long long)v.memory.batch_size,
                  machine ? (" (this machine has " + memory_text(double(machine)) + ")").c_str() : "");
    }
    std::string summary = std::to_string(g.nodes.size()) + " nodes, " + std::to_string(g.edges.size()) + " edges";
    if (v.ok() && info) summary += ", " + std::to_string(int64_t(v.memory.parameters)) + " trainable parameters";
    std::printf("%s: %s; %zu error%s, %zu warning%s\n", errors ? "FAILED" : "OK", summary.c_str(), errors,
                errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  }
  return errors ? 1 : 0;
}

// --device, --data and --threads of train FILE and eval FILE: where this machine runs the project.
void apply_machine_options(const Args& args, graph::Graph& g) {
  if (args.has("--device")) g.training.device = device_option(args).str();
  // A --data path comes from the command line: it is relative to the current directory.
  if (args.has("--data")) g.dataset.path = fs::absolute(args.str("--data", "")).lexically_normal().string();
  if (args.has("--threads")) set_num_threads(int(args.integer("--threads", 1, 1)));
}

// Files an image folder left out (bad_files "skip"), from the `first`th on: counted, and the
// first 20 listed with the reason.
void print_skipped(const std::vector<data::SkippedFile>& skipped, size_t first, const char* when) {
  if (skipped.size() <= first) return;
  const size_t n = skipped.size() - first, shown = std::min<size_t>(n, 20);
  std::printf("%s %zu file%s of the image folder (bad_files: skip):\n", when, n, n == 1 ? "" : "s");
  for (size_t i = first; i < first + shown; ++i) std::printf("  %s: %s\n", skipped[i].path.c_str(), skipped[i].reason.c_str());
  if (n > shown) std::printf("  ... and %zu more\n", n - shown);
}

// A data-parallel job's side of this process: joined when an MPI launcher started it.
struct Distributed {
  dist::World world;
  // Also for `mpirun -np 1`: one rank runs the job's path (its all-reduces, NCCL on a GPU).
  bool on() const { return world.comm != nullptr; }
  int rank() const { return world.comm ? world.comm->rank() : 0; }
  int size() const { return world.comm ? world.comm->size() : 1; }
};

// Joins the job mpirun started (nothing when run alone): a GPU run takes its local rank's GPU,
// and without --threads the ranks on a machine share its cores. Ranks other than 0 print
// nothing but errors.
Distributed join_job(const Args& args, graph::Graph& g) {
  Distributed d;
  if (!dist::launched_by_mpi()) return d;
  if (args.has("--rank-timeout") && args.number("--rank-timeout", 120) <= 0)
    throw UsageError{"--rank-timeout must be a positive number of seconds"};
  const Device device = parse_device(g.training.device);
  d.world = dist::join(device.is_cuda());
  if (args.has("--rank-timeout")) d.world.comm->set_timeout(args.number("--rank-timeout", 120));
  // One GPU per local rank; where the scheduler shows each rank only its own
  // (CUDA_VISIBLE_DEVICES), that one is cuda:0.
  if (device.is_cuda())
    g.training.device = "cuda:" + std::to_string(d.world.local_rank % std::max(1, cuda::device_count()));
  if (!args.has("--threads")) set_num_threads(std::max(1, physical_cores() / d.world.local_size));
  if (d.rank() != 0 && !std::freopen("/dev/null", "w", stdout))
    throw IoError("rank " + std::to_string(d.rank()) + ": cannot silence its output");
  // mpirun forwards the ranks' output, but stops reading it while it ends the job (Ctrl-C):
  // a rank must never block on a full pipe then, so a line it cannot write at once is dropped.
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return d;
}

// What the ranks' datasets must agree on: where, how big, and the first examples' values.
std::string dataset_fact(const session::TrainingRun& run) {
  std::string fact = run.dataset.kind + "\n" + run.dataset.path + "\n" + std::to_string(run.data.train->size()) + " " +
                     std::to_string(run.data.validation ? run.data.validation->size() : 0) + " " +
                     std::to_string(run.data.test ? run.data.test->size() : 0) + "\n";
  std::vector<int64_t> first(size_t(std::min<int64_t>(16, run.data.train->size())));
  std::iota(first.begin(), first.end(), int64_t(0));
  if (!first.empty()) {
    const data::Example e = run.data.train->get_batch(first);
    for (const Tensor& t : {e.input, e.target}) {
      const std::vector<float> v = t.to_vector();
      fact += dist::fingerprint(v.data(), v.size() * sizeof(float));
    }
  }
  return fact;
}

int train_project(const Args& args, const std::string& file, graph::Graph& g, const session::RunOptions& ro,
                  const Distributed& d);

// --lr-mult NODE=F and --weight-decay-mult NODE=F, each repeatable: a node's own training
// setting (graph/node_settings.h) for this run.
void apply_node_options(const Args& args, graph::Graph& g) {
  for (const auto& [option, setting] : {std::pair<std::string, std::string>{"--lr-mult", "lr_mult"},
                                        {"--weight-decay-mult", "weight_decay_mult"}}) {
    for (const std::string& value : args.all(option)) {
      const size_t eq = value.find('=');
      const std::optional<double> factor =
          eq == std::string::npos ? std::nullopt : non_negative_number(value.substr(eq + 1));
      if (eq == 0 || !factor)
        throw UsageError{option + " needs NODE=F (a node id, a number >= 0), got '" + value + "'"};
      const std::string id = value.substr(0, eq);
      graph::Node* node = g.find(id);
      if (!node) throw UsageError{option + " " + value + ": the project has no node '" + id + "'"};
      if (!graph::node_settings_apply(*node))
        throw UsageError{option + " " + value + ": " + node->label() + " learns nothing"};
      try {
        graph::set_node_setting(*node, setting, *factor);
      } catch (const ValueError& e) {
        throw UsageError{option + " " + value + ": " + e.what()};
      }
    }
  }
}

int cmd_train_project(const Args& args, const std::string& file) {
  args.allow({"--epochs", "--batch-size", "--lr", "--optimizer", "--seed", "--data", "--train-subset", "--metrics",
              "--save", "--resume", "--quiet", "--threads", "--device", "--save-run", "--run-dir", "--continue",
              "--precision", "--no-cuda-graphs", "--init-from", "--warmup-steps", "--lr-mult", "--weight-decay-mult",
              "--accumulate-steps", "--rank-timeout"});
  if (int(args.has("--continue")) + int(args.has("--resume")) + int(args.has("--init-from")) > 1)
    throw UsageError{"--continue, --resume and --init-from each start from a checkpoint; give one of them"};
  graph::Graph g = graph::load_project(file);
  graph::TrainingSettings& s = g.training;
  s.epochs = args.integer("--epochs", s.epochs, 1);
  s.batch_size = args.integer("--batch-size", s.batch_size, 1);
  if (args.has("--lr")) s.lr = args.number("--lr", s.lr);
  s.optimizer = args.str("--optimizer", s.optimizer);
  s.seed = uint64_t(args.integer("--seed", int64_t(s.seed), 0));
  s.precision = args.str("--precision", s.precision);
  if (args.has("--no-cuda-graphs")) s.cuda_graphs = false;
  s.accumulate_steps = args.integer("--accumulate-steps", s.accumulate_steps, 1);
  s.warmup_steps = args.integer("--warmup-steps", s.warmup_steps, 0);
  apply_node_options(args, g);
  apply_machine_options(args, g);

  session::RunOptions ro;
  ro.project_dir = project_dir(file);
  ro.train_subset = args.integer("--train-subset", 0, 1);
  const Distributed d = join_job(args, g);
  if (d.on()) {
    ro.shard = d.rank();
    ro.shards = d.size();
  }
  try {
    return train_project(args, file, g, ro, d);
  } catch (const dist::RankMismatch&) {
    throw;  // found alike by every rank: each stops on its own
  } catch (const std::exception& e) {
    // One rank failing alone (its dataset missing, a timeout) would leave the others waiting.
    if (d.on()) d.world.comm->abort(e.what(), 1);
    throw;
  }
}

int train_project(const Args& args, const std::string& file, graph::Graph& g, const session::RunOptions& ro,
                  const Distributed& d) {
  graph::TrainingSettings& s = g.training;
  std::optional<session::RunRecord> from;
  if (args.has("--continue")) from = session::read_run(args.str("--continue", ""));
  session::TrainingRun run = from ? session::make_continued_run(*from, g, ro) : session::make_training_run(g, ro);
  nn::Module& model = *run.compiled.model;
  if (d.on()) {
    graph::Graph same = g;
    same.training.device = parse_device(g.training.device).is_cuda() ? "cuda" : "cpu";  // each rank its own GPU
    same.dataset.path.clear();  // the dataset's own fact says whether the data agree
    dist::check_same(*d.world.comm,
                     {{"build", std::string("plexus-cli ") + PLEXUS_VERSION + " built " + __DATE__ + " " + __TIME__},
                      {"project", graph::serialize_project(same)},
                      {"dataset", dataset_fact(run)}});
    run.trainer_options.comm = d.world.comm;
  }
  for (const graph::Problem& p : run.compiled.validation.problems) std::printf("%s\n", graph::to_string(p).c_str());

  if (args.has("--resume")) {
    train::load_checkpoint(args.str("--resume", ""), model, run.optimizer.get());
    std::printf("resumed from %s\n", args.str("--resume", "").c_str());
  }
  std::string initialised;  // the account of --init-from, for the run log too
  if (args.has("--init-from")) {
    initialised = train::init_from(args.str("--init-from", ""), model, run.optimizer.get());
    std::printf("%s\n", initialised.c_str());
  }
  if (from)
    std::printf("continuing the run in %s (%s after epoch %d) with epochs %d to %lld\n", from->folder.c_str(),
                session::to_string(from->status).c_str(), from->epochs_completed, run.trainer_options.first_epoch,
                (long long)s.epochs);
  std::printf("project %s (%lld parameters), %s from %s: %lld train / %lld validation / %lld test examples, %s lr %g, "
              "batch %lld, on %s\n",
              file.c_str(), (long long)model.num_parameters(), run.dataset.kind.c_str(), run.dataset.path.c_str(),
              (long long)run.data.train->size(), (long long)(run.data.validation ? run.data.validation->size() : 0),
              (long long)(run.data.test ? run.data.test->size() : 0), s.optimizer.c_str(), s.lr, (long long)s.batch_size,
              session::device_text(parse_device(s.device)).c_str());
  if (d.on())
    std::printf("data-parallel over %d process%s (gradients summed with %s; %s): each takes about %lld of every "
                "batch of %lld, with %d thread%s\n",
                d.size(), d.size() == 1 ? "" : "es", d.world.comm->backend().c_str(), dist::backends().c_str(),
                (long long)((s.batch_size + d.size() - 1) / d.size()), (long long)s.batch_size, num_threads(),
                num_threads() == 1 ? "" : "s");
  if (d.on() && !d.world.note.empty()) std::printf("%s\n", d.world.note.c_str());
  if (s.accumulate_steps > 1)
    std::printf("gradient accumulation: one optimizer step per %lld batches (%lld examples)\n",
                (long long)s.accumulate_steps, (long long)(s.accumulate_steps * s.batch_size));
  std::printf("a training step computes %.3g MFLOP per example (its products, counted: docs/performance.md)\n",
              run.trainer_options.flops_per_example / 1e6);
  run.trainer_options.peak_gflops = machine_peak(parse_device(s.device), run.trainer_options.precision);
  const size_t skipped_at_start = run.data.skipped().size();
  print_skipped(run.data.skipped(), 0, "left out");
  // A continued run is kept too: its folder is where the continuation lives.
  std::optional<session::RunLog> log;
  std::optional<session::RunCheckpoints> checkpoints;
  if ((args.has("--save-run") || args.has("--run-dir") || from) && d.rank() == 0) {
    const fs::path folder = args.has("--run-dir") ? fs::path(args.str("--run-dir", "")) : session::new_run_folder(file, {});
    session::RunHeader header = session::run_header(run, file, ro, from ? &*from : nullptr);
    if (args.has("--init-from")) header.init_from = fs::absolute(args.str("--init-from", "")).lexically_normal().string();
    log.emplace(folder, g, std::move(header));
    if (!initialised.empty()) log->record(train::Notice{initialised});
    checkpoints.emplace(folder, g, run);
    std::printf("the run goes to %s\n", folder.c_str());
  }
  std::fflush(stdout);

  train::Trainer trainer(model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  trainer.set_scheduler(run.scheduler.get());
  trainer.set_test_loader(run.test_loader.get());
  Reporting r;
  r.quiet = args.has("--quiet");
  r.classification = run.compiled.classification;
  r.held_out = "val";
  r.metrics_path = d.rank() == 0 ? args.str("--metrics", "") : "";
  r.log = log ? &*log : nullptr;
  r.nodes = run.trainer_options.nodes;
  r.comm = d.on() ? d.world.comm.get() : nullptr;
  const std::string save = d.rank() == 0 ? args.str("--save", "") : "";
  r.after_epoch = [&](const train::EpochEnd& e) {
    if (!save.empty())
      train::save_checkpoint(save, model, run.optimizer.get(), {{"project", fs::path(file).filename().string()}});
    if (checkpoints) checkpoints->epoch_ended(e);
  };
  r.after_run = [&](const train::RunResult& result) {
    print_skipped(run.data.skipped(), skipped_at_start, "while training, could not decode and left out");
    if (!checkpoints) return;
    session::finish_run(*checkpoints, *log, result);
    std::vector<std::string> kept;
    for (const char* name : {"best.safetensors", "final.safetensors", session::kRunLogFile, session::kRunProjectFile})
      if (fs::exists(checkpoints->folder() / name)) kept.push_back(name);
    std::printf("saved the run in %s: %s\n", checkpoints->folder().c_str(), join(kept).c_str());
  };
  return run_and_report(trainer, r);
}

// One past run for `runs --json`: what read_run found, or why it could not.
nlohmann::json run_json(const fs::path& folder) {
  nlohmann::json j{{"folder", folder.string()}};
  session::RunRecord r;
  try {
    r = session::read_run(folder);
  } catch (const std::exception& e) {
    j["error"] = e.what();
    return j;
  }
  const auto optional = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  j["started"] = r.header.started;
  j["status"] = session::to_string(r.status);
  j["message"] = r.message;
  j["first_epoch"] = r.header.first_epoch;
  j["epochs_completed"] = r.epochs_completed;
  j["best_eval_accuracy"] = optional(r.best_eval_accuracy);
  j["best_eval_loss"] = optional(r.best_eval_loss);
  nlohmann::json test;
  if (r.test) {
    test = train::to_json(train::TestEnd{*r.test}, r.header.classification);
    test.erase("event");
  }
  j["test"] = test;
  j["continued_from"] = r.header.continued_from.empty() ? nlohmann::json() : nlohmann::json(r.header.continued_from);
  j["checkpoints"] = nlohmann::json::array();
  if (r.has_best) j["checkpoints"].push_back("best");
  if (r.has_final) j["checkpoints"].push_back("final");
  return j;
}

// The same as one line a person reads.
std::string run_line(const nlohmann::json& j) {
  std::string line = fs::path(j["folder"].get<std::string>()).filename().string() + "  ";
  if (j.contains("error")) return line + "unreadable: " + j["error"].get<std::string>();
  std::string status = j["status"].get<std::string>();
  if (!j["message"].get<std::string>().empty() && status != "completed" && status != "stopped")
    status += " (" + j["message"].get<std::string>() + ")";
  std::string started = j["started"].get<std::string>().substr(0, 19);  // to the second, local time
  if (started.size() > 10) started[10] = ' ';
  line += started + "  " + status;
  const int first = j["first_epoch"], last = j["epochs_completed"];
  line += last < first ? "  no epoch" : "  epochs " + std::to_string(first) + "-" + std::to_string(last);
  char buf[96];
  if (!j["best_eval_accuracy"].is_null()) {
    std::snprintf(buf, sizeof buf, "  best val. acc %.2f%%", 100 * j["best_eval_accuracy"].get<double>());
    line += buf;
  } else if (!j["best_eval_loss"].is_null()) {
    std::snprintf(buf, sizeof buf, "  best val. loss %.4g", j["best_eval_loss"].get<double>());
    line += buf;
  }
  if (const nlohmann::json& t = j["test"]; !t.is_null()) {
    if (t.contains("eval_accuracy")) std::snprintf(buf, sizeof buf, "  test acc %.2f%%", 100 * t["eval_accuracy"].get<double>());
    else std::snprintf(buf, sizeof buf, "  test loss %.4g", t["eval_loss"].get<double>());
    line += buf;
  }
  if (!j["continued_from"].is_null())
    line += "  continues " + fs::path(j["continued_from"].get<std::string>()).filename().string();
  return line;
}

int cmd_runs(const Args& args) {
  args.allow({"--json"});
  if (args.positional().empty()) throw UsageError{"runs needs a project FILE"};
  const fs::path file = args.positional()[0];
  if (!fs::is_regular_file(file)) throw IoError("project " + file.string() + " not found");
  nlohmann::json runs = nlohmann::json::array();
  for (const fs::path& folder : session::list_runs(file)) runs.push_back(run_json(folder));
  if (args.has("--json")) {
    std::printf("%s\n", runs.dump().c_str());
    return 0;
  }
  const fs::path where = session::runs_folder(file);
  if (runs.empty()) std::printf("no runs of %s in %s\n", file.c_str(), where.c_str());
  else std::printf("%zu run%s of %s in %s, newest first:\n", runs.size(), runs.size() == 1 ? "" : "s", file.c_str(), where.c_str());
  for (const nlohmann::json& j : runs) std::printf("%s\n", run_line(j).c_str());
  return 0;
}

// A project file, or a run folder's project.plexus.
graph::Graph load_compared(const std::string& path) {
  const fs::path p = path;
  if (!fs::is_directory(p)) return graph::load_project(p);
  if (!fs::is_regular_file(p / session::kRunProjectFile))
    throw IoError(path + " is not a run folder: it holds no " + session::kRunProjectFile);
  return graph::load_project(p / session::kRunProjectFile);
}

nlohmann::json changes_json(const std::vector<graph::ParamChange>& changes) {
  nlohmann::json out = nlohmann::json::array();
  for (const graph::ParamChange& c : changes) out.push_back({{"name", c.name}, {"before", c.before}, {"after", c.after}});
  return out;
}

nlohmann::json edges_json(const std::vector<graph::Edge>& edges) {
  nlohmann::json out = nlohmann::json::array();
  for (const graph::Edge& e : edges)
    out.push_back({{"from", {e.from.node, e.from.port}}, {"to", {e.to.node, e.to.port}}});
  return out;
}

nlohmann::json nodes_json(const std::vector<std::string>& ids, const graph::Graph& g) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& id : ids) {
    const graph::Node& n = *g.find(id);
    out.push_back({{"id", n.id}, {"type", n.type}, {"name", n.name}});
  }
  return out;
}

int cmd_diff(const Args& args) {
  args.allow({"--json"});
  if (args.positional().size() != 2) throw UsageError{"diff needs two projects or run folders, A and B"};
  const graph::Graph a = load_compared(args.positional()[0]), b = load_compared(args.positional()[1]);
  const graph::GraphDiff d = graph::diff(a, b);
  if (args.has("--json")) {
    nlohmann::json changed = nlohmann::json::array();
    for (const graph::NodeChange& c : d.changed)
      changed.push_back({{"id", c.id},
                         {"type_before", c.type_before},
                         {"type_after", c.type_after},
                         {"name_before", c.name_before},
                         {"name_after", c.name_after},
                         {"params", changes_json(c.params)},
                         {"settings", changes_json(c.settings)}});
    const nlohmann::json j{{"summary", graph::summary(d)},
                           {"same_structure", d.same_structure()},
                           {"added", nodes_json(d.added, b)},
                           {"removed", nodes_json(d.removed, a)},
                           {"changed", changed},
                           {"edges_added", edges_json(d.edges_added)},
                           {"edges_removed", edges_json(d.edges_removed)},
                           {"settings", changes_json(d.settings)}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  const std::vector<std::string> lines = graph::describe(d, a, b);
  if (lines.empty()) std::printf("no differences\n");
  for (const std::string& line : lines) std::printf("%s\n", line.c_str());
  return 0;
}

int cmd_init(const Args& args) {
  args.allow({"--project", "--seed", "--out"});
  args.require("init", {"--project", "--out"});
  const std::string file = args.str("--project", ""), out = args.str("--out", "");
  const graph::Graph g = graph::load_project(file);
  const uint64_t seed = uint64_t(args.integer("--seed", int64_t(g.training.seed), 0));
  const layers::CompiledGraph c = layers::compile(g, describe_project_dataset(g, file), seed);
  train::save_weights(out, *c.model, {{"project", fs::path(file).filename().string()}, {"seed", std::to_string(seed)}});
  std::printf("wrote %zu tensors (%lld parameters) initialised with seed %llu to %s\n", c.model->state().size(),
              (long long)c.model->num_parameters(), (unsigned long long)seed, out.c_str());
  return 0;
}

// Tensor `name` of the batch file, with `what` for the message when it is missing.
const Tensor& batch_tensor(const io::SafetensorsFile& f, const std::string& path, const char* name, const std::string& what) {
  const Tensor* t = f.find(name);
  if (!t) throw IoError("input " + path + ": tensor '" + name + "' is missing (" + what + ")");
  return *t;
}

int cmd_grad(const Args& args) {
  args.allow({"--project", "--weights", "--input", "--out", "--threads"});
  args.require("grad", {"--project", "--weights", "--input", "--out"});
  const std::string file = args.str("--project", ""), input = args.str("--input", "");
  if (args.has("--threads")) set_num_threads(int(args.integer("--threads", 1, 1)));
  const graph::Graph g = graph::load_project(file);
  const graph::DatasetInfo info = describe_project_dataset(g, file);
  const layers::CompiledGraph c = layers::compile(g, info, g.training.seed);
  train::load_weights(args.str("--weights", ""), *c.model);

  const io::SafetensorsFile batch = io::load_safetensors(input);
  const Tensor& x = batch_tensor(batch, input, "x", "the inputs " + shape_text(info.input_shape));
  const Tensor& y = batch_tensor(batch, input, "y", "the labels " + shape_text(info.label_shape));
  auto check = [&](const Tensor& t, const Shape& example, const char* name) {  // t: [N, example...]
    const Shape& s = t.shape();
    if (s.empty() || s[0] < 1 || Shape(s.begin() + 1, s.end()) != example)
      throw ShapeError("input " + input + ": tensor '" + name + "' has shape " + to_string(s) +
                       ", the project expects " + shape_text(example));
  };
  check(x, info.input_shape, "x");
  check(y, info.label_shape, "y");
  if (x.shape()[0] != y.shape()[0])
    throw ShapeError("input " + input + ": 'x' holds " + std::to_string(x.shape()[0]) + " examples but 'y' holds " +
                     std::to_string(y.shape()[0]));

  // Training mode: batch statistics, and dropout drawing from the seeded default generator.
  manual_seed(g.training.seed);
  nn::Module& model = *c.model;
  model.train();
  model.zero_grad();
  const Tensor loss = c.loss(model(x), y);
  loss.backward();

  io::NamedTensors out{{"loss", loss.detach().reshape({})}};
  for (const auto& [name, p] : model.named_parameters())
    out.emplace_back(name, p.grad().defined() ? p.grad() : zeros(p.shape()));
  io::save_safetensors(args.str("--out", ""), out, {{"project", fs::path(file).filename().string()}});
  std::printf("loss %.6g; wrote the gradients of %zu parameters to %s\n", double(loss.item()), out.size() - 1,
              args.str("--out", "").c_str());
  return 0;
}

int cmd_export(const Args& args) {
  args.allow({"--checkpoint", "--onnx"});
  if (args.positional().empty()) throw UsageError{"export needs a project FILE"};
  args.require("export", {"--checkpoint", "--onnx"});
  const std::string file = args.positional()[0], out = args.str("--onnx", "");
  const session::TrainedModel model =
      session::load_trained_model(graph::load_project(file), args.str("--checkpoint", ""), {project_dir(file)});
  const exporter::OnnxSummary s = exporter::export_onnx(model, out, {fs::path(file).stem().string()});
  std::printf("wrote %s: ONNX opset %lld, %zu nodes, %zu initializers, %zu bytes\n", out.c_str(), (long long)s.opset,
              s.nodes, s.initializers, s.bytes);
  std::printf("  input  %s (raw units; the model standardises them)\n  output %s\n", s.input.c_str(), s.output.c_str());
  return 0;
}

int cmd_layers(const Args& args) {
  args.allow({"--markdown"});
  const std::string text = args.has("--markdown") ? graph::layers_markdown() : graph::layers_text();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int cmd_devices(const Args& args) {
  args.allow({});
  std::printf("cpu     %d threads\n", num_threads());
  for (int i = 0; i < cuda::device_count(); ++i) {
    const cuda::DeviceProperties p = cuda::properties(i);
    std::printf("cuda:%d  %s, %.1f GiB, compute capability %d.%d, %d multiprocessors; convolutions: %s\n", i,
                p.name.c_str(), double(p.total_memory) / double(int64_t(1) << 30), p.compute_major, p.compute_minor,
                p.multiprocessors, cuda::convolution_engine(i).c_str());
  }
  if (cuda::device_count() == 0) std::printf("%s\n", cuda::status().c_str());
  return 0;
}

// ---- built-in models -------------------------------------------------------------------------

int cmd_train(const Args& args) {
  if (!args.positional().empty()) {
    for (const char* o : {"--model", "--dataset"})
      if (args.has(o))
        throw UsageError{std::string(o) + " is for the built-in models; a project file names its own " +
                         (std::string(o) == "--model" ? "graph" : "dataset (use --data to point elsewhere)")};
    return cmd_train_project(args, args.positional()[0]);
  }
  std::vector<std::string> known = kCommonOptions;
  for (const char* o : {"--epochs", "--optimizer", "--lr", "--momentum", "--nesterov", "--weight-decay", "--schedule",
                        "--step-size", "--gamma", "--warmup-steps", "--clip-norm", "--shift", "--train-subset",
                        "--seed", "--metrics", "--save", "--resume", "--quiet", "--precision", "--no-cuda-graphs"})
    known.push_back(o);
  args.allow(known);
  const std::string model_name = args.str("--model", "mlp"), dataset = args.str("--dataset", "mnist");
  const std::string folder = args.str("--data", default_folder(dataset));
  const int64_t batch = args.integer("--batch-size", 100, 1), epochs = args.integer("--epochs", 5, 1);
  const uint64_t seed = uint64_t(args.integer("--seed", 1, 0));
  const optim::ScheduleConfig schedule{.schedule = args.str("--schedule", "none"),
                                       .step_size = args.integer("--step-size", 1, 1),
                                       .gamma = args.number("--gamma", 0.1)};
  const auto& schedules = optim::schedule_names();
  if (std::find(schedules.begin(), schedules.end(), schedule.schedule) == schedules.end())
    throw UsageError{"--schedule must be " + join(schedules, ", ", " or ") + ", got '" + schedule.schedule + "'"};
  if (args.has("--threads")) set_num_threads(int(args.integer("--threads", 1, 1)));

  const Device device = device_option(args);
  Generator init_gen(seed);
  auto model = train::make_builtin_model(model_name, &init_gen);
  model->to(device);
  optim::OptimizerConfig oc;
  oc.optimizer = args.str("--optimizer", "sgd");
  oc.lr = args.number("--lr", 0.1);
  oc.momentum = args.number("--momentum", 0);
  oc.nesterov = args.has("--nesterov");
  oc.weight_decay = args.number("--weight-decay", optim::default_weight_decay(oc.optimizer));
  auto optimizer = optim::make_optimizer(oc, model->parameters());

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
  const bool pin = !device.is_cpu();  // asynchronous copies to the GPU
  data::DataLoaderOptions lo{.batch_size = batch, .shuffle = true, .seed = seed, .transform = normalize, .pin_memory = pin};
  if (const int64_t k = args.integer("--shift", 0, 0)) lo.transform = data::compose({data::random_shift(k), normalize});
  data::DataLoader train_loader(train_set, lo);
  data::DataLoader test_loader(test_set, {.batch_size = 1000, .transform = normalize, .pin_memory = pin});

  const std::unique_ptr<optim::LRScheduler> scheduler = optim::make_scheduler(schedule, *optimizer, epochs);

  if (args.has("--resume")) {
    train::load_checkpoint(args.str("--resume", ""), *model, optimizer.get());
    std::printf("resumed from %s\n", args.str("--resume", "").c_str());
  }

  std::printf("model %s (%lld parameters), %s from %s: %lld train / %lld test images, %s lr %g, batch %lld, on %s\n",
              model_name.c_str(), (long long)model->num_parameters(), dataset.c_str(), folder.c_str(),
              (long long)train_set->size(), (long long)test_set->size(), oc.optimizer.c_str(), oc.lr, (long long)batch,
              session::device_text(device).c_str());
  std::fflush(stdout);

  train::TrainerOptions to;
  to.epochs = int(epochs);
  to.clip_grad_norm = float(args.number("--clip-norm", 0));
  to.warmup.steps = args.integer("--warmup-steps", 0, 0);
  to.seed = seed;
  try {
    to.precision = parse_precision(args.str("--precision", "fp32"));
  } catch (const ValueError& e) {
    throw UsageError{std::string("--precision: ") + e.what()};
  }
  to.cuda_graphs = !args.has("--no-cuda-graphs");
  to.peak_gflops = machine_peak(device, to.precision);  // a built-in model has no graph: its FLOPs are not counted
  train::Trainer trainer(*model, *optimizer, train_loader, &test_loader, to);
  trainer.set_scheduler(scheduler.get());
  Reporting r;
  r.quiet = args.has("--quiet");
  r.metrics_path = args.str("--metrics", "");
  if (const std::string save = args.str("--save", ""); !save.empty())
    r.after_epoch = [&, save](const train::EpochEnd&) {
      train::save_checkpoint(save, *model, optimizer.get(), {{"model", model_name}});
    };
  return run_and_report(trainer, r);
}

// ---- trained models: eval and predict ----------------------------------------------------------

// What an evaluation was of, for its report: `what` for people ("mnist_mlp.plexus on 10000 mnist
// test examples"), `ids` the JSON object's first keys (the model or project, the checkpoint, the
// number of examples), and the class names (empty for a regression).
struct EvalSubject {
  std::string what;
  nlohmann::json ids;
  std::vector<std::string> class_names;
};

// The result of `eval`: one JSON object (printed with --json, written to --metrics F), or lines a
// person reads.
int report_evaluation(const Args& args, const train::EpochEnd& r, bool classification, const EvalSubject& s) {
  // The figures under the keys of a metrics file's "test" line.
  nlohmann::json j = train::to_json(train::TestEnd{r}, classification);
  j.update(s.ids);
  j["event"] = "eval";
  if (classification) j["class_names"] = s.class_names;
  if (args.has("--metrics")) io::write_file_atomically(args.str("--metrics", ""), j.dump() + "\n");
  if (args.has("--json")) {
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s: loss %.4f", s.what.c_str(), r.eval_loss);
  if (!classification) {
    std::printf("\n");
    return 0;
  }
  std::printf(", accuracy %.2f%%, top-5 %.2f%%\n", 100 * r.eval_accuracy, 100 * r.eval_top5);
  std::printf("per-class accuracy:");
  for (size_t c = 0; c < r.per_class_accuracy.size(); ++c)
    std::printf(" %s:%.1f%%", s.class_names[c].c_str(), 100 * r.per_class_accuracy[c]);
  std::printf("\nconfusion matrix (rows: true class, columns: predicted):\n");
  for (int64_t i = 0; i < r.classes; ++i) {
    for (int64_t j = 0; j < r.classes; ++j) std::printf("%6lld", (long long)r.confusion[size_t(i * r.classes + j)]);
    std::printf("\n");
  }
  return 0;
}

// The shortest text that reads back as the same float.
std::string float_text(float v) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return std::string(buf, end);
}

// The whole split's targets, in order.
std::vector<float> targets_of(const data::Dataset& split) {
  std::vector<int64_t> all(size_t(split.size()));
  std::iota(all.begin(), all.end(), int64_t(0));
  return split.get_batch(all).target.to_vector();
}

// --predictions F of a classification: the predicted class and its probability that the
// evaluation recorded for each example of `test` (loader order = dataset order).
void write_class_predictions(const std::string& path, const train::EpochEnd& r, const data::Dataset& test) {
  const std::vector<float> labels = targets_of(test);
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << "index,label,predicted,probability\n";
    for (size_t i = 0; i < labels.size(); ++i)
      out << i << ',' << int64_t(labels[i]) << ',' << r.predicted[i] << ',' << float_text(r.confidence[i]) << '\n';
  });
}

// --predictions F of a regression: the model's output for each example of `test`, in batches.
void write_value_predictions(const std::string& path, const session::TrainedModel& m, const data::Dataset& test,
                             int64_t batch_size) {
  const std::vector<float> targets = targets_of(test);
  std::vector<float> outputs;
  for (int64_t start = 0; start < test.size(); start += batch_size) {
    std::vector<int64_t> idx(size_t(std::min(batch_size, test.size() - start)));
    std::iota(idx.begin(), idx.end(), start);
    const std::vector<float> out = m.forward(test.get_batch(idx).input).to_vector();
    outputs.insert(outputs.end(), out.begin(), out.end());
  }
  const size_t n = size_t(test.size());
  const size_t per_target = n ? targets.size() / n : 1, per_output = n ? outputs.size() / n : 1;
  auto columns = [](const char* name, size_t k) {
    if (k == 1) return std::string(",") + name;
    std::string s;
    for (size_t j = 0; j < k; ++j) s += std::string(",") + name + "_" + std::to_string(j);
    return s;
  };
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << "index" << columns("target", per_target) << columns("prediction", per_output) << '\n';
    for (size_t i = 0; i < n; ++i) {
      out << i;
      for (size_t j = 0; j < per_target; ++j) out << ',' << float_text(targets[i * per_target + j]);
      for (size_t j = 0; j < per_output; ++j) out << ',' << float_text(outputs[i * per_output + j]);
      out << '\n';
    }
  });
}

// The project of `eval` and `predict`: FILE, else the one a run checkpoint holds. `dir` is where
// its relative dataset path is looked up first.
struct ProjectSource {
  graph::Graph graph;
  fs::path dir;
  std::string name;                 // for people
  std::optional<std::string> file;  // FILE, when given
};

// A run's checkpoint lies in <project folder>/<name>.runs/<run>/ (session/run_folder.h): that
// project folder; "" (the current directory) for a checkpoint elsewhere.
fs::path run_project_folder(const fs::path& checkpoint) {
  const fs::path runs = checkpoint.parent_path().parent_path();
  return runs.filename().string().ends_with(".runs") ? runs.parent_path() : fs::path();
}

std::optional<ProjectSource> find_project(const std::optional<std::string>& file, const std::string& checkpoint) {
  if (file) return ProjectSource{graph::load_project(*file), project_dir(*file), *file, file};
  if (std::optional<graph::Graph> g = session::project_in_checkpoint(checkpoint))
    return ProjectSource{std::move(*g), run_project_folder(checkpoint), "the project in " + checkpoint, std::nullopt};
  return std::nullopt;
}

const std::vector<std::string> kEvalOutputOptions{"--checkpoint", "--json", "--metrics", "--predictions"};

int cmd_eval_project(const Args& args, ProjectSource p) {
  std::vector<std::string> known = kEvalOutputOptions;
  for (const char* o : {"--data", "--batch-size", "--threads", "--device"}) known.push_back(o);
  args.allow(known);
  if (!args.has("--checkpoint")) throw UsageError{"eval needs --checkpoint FILE"};
  const std::string checkpoint = args.str("--checkpoint", "");
  graph::Graph& g = p.graph;
  apply_machine_options(args, g);
  session::TrainedModel m = session::load_trained_model(g, checkpoint, {p.dir});
  const bool predictions = args.has("--predictions");
  const session::TestEvaluation t = session::evaluate_on_test(m, {p.dir}, args.integer("--batch-size", 1000, 1),
                                                               parse_device(g.training.device), predictions);
  const train::EpochEnd& r = t.figures;
  // The evaluation recorded a classification's predictions from its own forward pass; a
  // regression's outputs come from the model itself, on the CPU where TrainedModel works.
  if (predictions && m.classification()) write_class_predictions(args.str("--predictions", ""), r, *t.split);
  if (predictions && !m.classification()) {
    m.compiled.model->to(Device::cpu());
    write_value_predictions(args.str("--predictions", ""), m, *t.split, args.integer("--batch-size", 1000, 1));
  }
  const int64_t n = t.split->size();
  nlohmann::json ids{{"checkpoint", checkpoint}, {"examples", n}};
  if (p.file) ids["project"] = *p.file;  // else the checkpoint's own
  return report_evaluation(args, r, m.classification(),
                           {p.name + " on " + std::to_string(n) + " " + t.dataset_kind + " test examples", ids,
                            m.class_names});
}

int cmd_eval(const Args& args) {
  std::optional<std::string> file;
  if (!args.positional().empty()) {
    for (const char* o : {"--model", "--dataset"})
      if (args.has(o)) throw UsageError{std::string(o) + " is for the built-in models; a project file names its own"};
    file = args.positional()[0];
  }
  std::vector<std::string> known = kCommonOptions;
  known.insert(known.end(), kEvalOutputOptions.begin(), kEvalOutputOptions.end());
  if (!file) args.allow(known);  // before the checkpoint is read: usage errors first
  if (!args.has("--checkpoint")) throw UsageError{"eval needs --checkpoint FILE"};
  const std::string checkpoint = args.str("--checkpoint", "");
  // Without FILE or --model: the checkpoint says what it is of (a project, or a built-in model).
  const bool builtin = args.has("--model") || args.has("--dataset");
  if (file || !builtin)
    if (std::optional<ProjectSource> p = find_project(file, checkpoint)) return cmd_eval_project(args, std::move(*p));
  const io::SafetensorsMetadata meta = io::read_safetensors_header(checkpoint).metadata;
  const auto stored_model = meta.find("model");
  if (!builtin && stored_model == meta.end())
    throw IoError(checkpoint + " holds no project (and is no built-in model's checkpoint): pass the project FILE it "
                  "belongs to, as in: plexus-cli eval FILE --checkpoint " + checkpoint);

  const std::string model_name = args.str("--model", stored_model != meta.end() ? stored_model->second : "mlp");
  const std::string dataset = args.str("--dataset", "mnist");
  const std::string folder = args.str("--data", default_folder(dataset));
  if (args.has("--threads")) set_num_threads(int(args.integer("--threads", 1, 1)));
  const Device device = device_option(args);
  auto model = train::make_builtin_model(model_name);
  train::load_checkpoint(checkpoint, *model);
  model->to(device);
  const auto test_set = train::open_image_dataset(dataset, folder, false);
  const auto train_set = train::open_image_dataset(dataset, folder, true);
  data::DataLoader loader(test_set, {.batch_size = args.integer("--batch-size", 1000, 1),
                                     .transform = train::standardize_images(*train_set)});
  train::TrainerOptions options;
  options.record_predictions = args.has("--predictions");
  const train::EpochEnd r = train::evaluate(*model, loader, options);
  if (options.record_predictions) write_class_predictions(args.str("--predictions", ""), r, *test_set);
  return report_evaluation(args, r, true,
                           {model_name + " on " + std::to_string(test_set->size()) + " " + dataset + " test images",
                            {{"model", model_name}, {"checkpoint", checkpoint}, {"examples", test_set->size()}},
                            test_set->class_names()});
}

// The examples predict reads from its INPUTs, in raw units, with what identifies each in the output.
struct PredictInputs {
  std::vector<float> values;         // example after example
  std::vector<nlohmann::json> ids;   // {"input": FILE} or {"input": FILE, "row": R}
};

// Pictures prepared as the project's training pictures were (session::picture_input).
void read_images(const std::vector<std::string>& files, const graph::DatasetBinding& binding, const Shape& chw,
                 PredictInputs& in) {
  for (const std::string& f : files) {
    const data::Image image = data::read_image(f);
    Tensor x;
    try {
      x = session::picture_input(image, binding, chw);
    } catch (const ShapeError& e) {
      throw ShapeError(f + ": " + e.what());
    }
    const std::vector<float> v = x.to_vector();
    in.values.insert(in.values.end(), v.begin(), v.end());
    in.ids.push_back({{"input", f}});
  }
}

// CSV rows: the model's feature columns by name (a run's checkpoint names them; for a weights
// file without them, the project's data file's header minus the target), else every column of
// the input but the target, in order (a warning says so: columns in another order than in
// training would go unnoticed).
void read_rows(const std::vector<std::string>& files, const ProjectSource& p, const session::TrainedModel& model,
               int64_t features, PredictInputs& in) {
  const std::string& target = p.graph.dataset.target;
  auto without_target = [&](std::vector<std::string> names) {
    names.erase(std::remove(names.begin(), names.end(), target), names.end());
    return names;
  };
  std::optional<std::vector<std::string>> known;
  if (!model.feature_names.empty()) known = model.feature_names;
  else
    std::fprintf(stderr, "plexus-cli: warning: the checkpoint does not name the feature columns and the project's "
                 "data file '%s' is not at hand, so they cannot be matched by name: every column but the target '%s' "
                 "is taken, in order\n",
                 p.graph.dataset.path.c_str(), target.c_str());
  for (const std::string& f : files) {
    char head[8] = {};
    std::ifstream(f, std::ios::binary).read(head, sizeof head);
    if (data::is_image_data(reinterpret_cast<const uint8_t*>(head), sizeof head))
      throw DataError(f + ": an image, but the model takes rows of a CSV file (its dataset is a CSV file)");
    const std::vector<std::string> names = known ? *known : without_target(data::read_csv_header(f));
    if (int64_t(names.size()) != features)
      throw ShapeError(f + ": " + std::to_string(names.size()) + " feature columns (" + join(names, ", ") +
                       ") besides the target '" + target + "', but the model takes " + std::to_string(features));
    const Tensor x = data::read_csv_features(f, names);
    const std::vector<float> v = x.to_vector();
    in.values.insert(in.values.end(), v.begin(), v.end());
    for (int64_t r = 1; r <= x.size(0); ++r) in.ids.push_back({{"input", f}, {"row", r}});
  }
}

// One example's line for people: "digit.png: 7 (98.12%), 2 (1.10%)" or "rows.csv row 2: 3.967".
std::string prediction_text(const nlohmann::json& id, const nlohmann::json& result) {
  std::string s = id["input"].get<std::string>();
  if (id.contains("row")) s += " row " + std::to_string(id["row"].get<int64_t>());
  s += ":";
  char buf[64];
  if (result.contains("classes")) {
    for (const auto& c : result["classes"]) {
      std::snprintf(buf, sizeof buf, " (%.2f%%),", 100 * c["probability"].get<double>());
      s += " " + c["name"].get<std::string>() + buf;
    }
    s.pop_back();
  } else {
    for (const auto& v : result["value"].is_array() ? result["value"] : nlohmann::json::array({result["value"]})) {
      std::snprintf(buf, sizeof buf, " %.6g", v.get<double>());
      s += buf;
    }
  }
  return s;
}

// One example's result: its `top` classes, ranked by score as eval's argmax counts them (ties keep
// the lower class first), with their probabilities; or a regression's `k` output values.
void add_prediction(nlohmann::json& result, const session::TrainedModel& m, const float* scores, const float* probs,
                    size_t k, size_t top) {
  if (!m.classification()) {
    result["value"] = k == 1 ? nlohmann::json(scores[0]) : nlohmann::json(std::vector<float>(scores, scores + k));
    return;
  }
  std::vector<size_t> order(k);
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  nlohmann::json classes = nlohmann::json::array();
  for (size_t c : std::span(order).first(std::min(k, top)))
    classes.push_back({{"class", c}, {"name", m.class_names[c]}, {"probability", probs[c]}});
  result["classes"] = std::move(classes);
}

int cmd_predict(const Args& args) {
  args.allow({"--checkpoint", "--top", "--json", "--batch-size", "--threads"});
  std::vector<std::string> inputs = args.positional();
  std::optional<std::string> file;
  if (!inputs.empty() && inputs[0].ends_with(".plexus")) {
    file = inputs[0];
    inputs.erase(inputs.begin());
  }
  if (!args.has("--checkpoint")) throw UsageError{"predict needs --checkpoint FILE"};
  if (inputs.empty()) throw UsageError{"predict needs at least one INPUT: an image (PNG, JPEG, BMP) or a CSV file of rows"};
  const int64_t top = args.integer("--top", 3, 1), batch_size = args.integer("--batch-size", 100, 1);
  if (args.has("--threads")) set_num_threads(int(args.integer("--threads", 1, 1)));
  const std::string checkpoint = args.str("--checkpoint", "");
  const std::optional<ProjectSource> p = find_project(file, checkpoint);
  if (!p)
    throw IoError(checkpoint + " holds no project: pass the project FILE it belongs to, as in: plexus-cli predict "
                  "FILE --checkpoint " + checkpoint + " INPUT...");
  const session::TrainedModel m = session::load_trained_model(p->graph, checkpoint, {p->dir});

  PredictInputs in;
  const Shape& shape = m.info.input_shape;
  if (p->graph.dataset.kind == "csv") read_rows(inputs, *p, m, shape.at(0), in);
  else read_images(inputs, p->graph.dataset, shape, in);
  Shape batch_shape{int64_t(in.ids.size())};
  batch_shape.insert(batch_shape.end(), shape.begin(), shape.end());
  const Tensor x = from_vector(in.values, batch_shape);

  for (int64_t start = 0; start < x.size(0); start += batch_size) {
    const int64_t n = std::min(batch_size, x.size(0) - start);
    const Tensor out = m.forward(x.narrow(0, start, n));
    const std::vector<float> scores = out.to_vector();
    const std::vector<float> probs = m.classification() ? softmax(out, 1).to_vector() : scores;
    const size_t k = scores.size() / size_t(n);
    for (int64_t i = 0; i < n; ++i) {
      const nlohmann::json& id = in.ids[size_t(start + i)];
      nlohmann::json result = id;
      add_prediction(result, m, scores.data() + size_t(i) * k, probs.data() + size_t(i) * k, k, size_t(top));
      std::printf("%s\n", args.has("--json") ? result.dump().c_str() : prediction_text(id, result).c_str());
    }
  }
  return 0;
}

int cmd_sample(const Args& args) {
  args.allow({"--checkpoint", "--count", "--temperature", "--prime", "--max-length", "--seed", "--json", "--threads"});
  std::optional<std::string> file;
  if (!args.positional().empty()) file = args.positional()[0];
  if (!args.has("--checkpoint")) throw UsageError{"sample needs --checkpoint FILE"};
  if (args.has("--threads")) set_num_threads(int(args.integer("--threads", 1, 1)));
  session::SampleOptions o;
  o.count = args.integer("--count", o.count, 1);
  o.temperature = args.number("--temperature", o.temperature);
  o.prime = args.str("--prime", "");
  o.max_length = args.integer("--max-length", o.max_length, 1);
  o.seed = uint64_t(args.integer("--seed", int64_t(o.seed), 0));
  const std::string checkpoint = args.str("--checkpoint", "");
  const std::optional<ProjectSource> p = find_project(file, checkpoint);
  if (!p)
    throw IoError(checkpoint + " holds no project: pass the project FILE it belongs to, as in: plexus-cli sample "
                  "FILE --checkpoint " + checkpoint);
  session::check_text_project(p->graph, checkpoint);  // before loading: another kind may need its data
  const session::TrainedModel m = session::load_trained_model(p->graph, checkpoint, {p->dir});
  const std::vector<std::string> samples = session::sample_text(m, o, checkpoint);
  for (size_t i = 0; i < samples.size(); ++i) {
    if (args.has("--json")) std::printf("%s\n", nlohmann::json{{"sample", i + 1}, {"text", samples[i]}}.dump().c_str());
    else std::printf("%s\n", samples[i].c_str());
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
    if (cmd == "train")
      return cmd_train(
          Args(argc, argv, 2, {"--nesterov", "--quiet", "--save-run"}, 1, {"--lr-mult", "--weight-decay-mult"}));
    if (cmd == "eval") return cmd_eval(Args(argc, argv, 2, {"--json"}, 1));
    if (cmd == "predict") return cmd_predict(Args(argc, argv, 2, {"--json"}, size_t(argc)));
    if (cmd == "sample") return cmd_sample(Args(argc, argv, 2, {"--json"}, 1));
    if (cmd == "check") return cmd_check(Args(argc, argv, 2, {"--quiet"}, 1));
    if (cmd == "runs") return cmd_runs(Args(argc, argv, 2, {"--json"}, 1));
    if (cmd == "diff") return cmd_diff(Args(argc, argv, 2, {"--json"}, 2));
    if (cmd == "init") return cmd_init(Args(argc, argv, 2, {}));
    if (cmd == "grad") return cmd_grad(Args(argc, argv, 2, {}));
    if (cmd == "export") return cmd_export(Args(argc, argv, 2, {}, 1));
    if (cmd == "layers") return cmd_layers(Args(argc, argv, 2, {"--markdown"}));
    if (cmd == "devices") return cmd_devices(Args(argc, argv, 2, {}));
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
