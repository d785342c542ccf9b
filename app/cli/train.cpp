#include "cli/command.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/builtin_projects.h"
#include "cli/data_parallel.h"
#include "cli/project_files.h"
#include "cli/setting_flags.h"
#include "cli/training_report.h"
#include "graph/dataset_params.h"
#include "graph/node_settings.h"
#include "graph/project.h"
#include "optim/factory.h"
#include "session/class_balance.h"
#include "session/continuation.h"
#include "session/optimizer_groups.h"
#include "session/resume.h"
#include "session/run.h"
#include "session/run_folder.h"
#include "session/run_log.h"
#include "session/text_sampling.h"
#include "train/checkpoint.h"
#include "train/partial_load.h"
#include "util/error.h"
#include "util/text.h"
#include "util/threads.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTrainHelp = R"(  Trains a project's graph on its dataset with its training settings, the options below
  overriding the project's: FILE, a project file, or --model NAME, a built-in project (the
  same graphs as the project files of examples/, trained the same way). Relative dataset
  paths are looked up next to the project file first, then in the current directory. The
  project's validation_fraction of the training data (seeded) is evaluated after every epoch
  and chooses the best checkpoint; the test split is evaluated once, with the final model,
  when the run completes. Inputs are standardised with the training split's mean and std. A
  regression loss (MSE, BCEWithLogits) reports loss only.

What to train on:
  --model NAME         mlp (784-128-10, examples/mnist_mlp.plexus), mlp64 (784-64-10),  [mlp]
                       mlp1024 (784-1024-1024-10) or lenet (examples/mnist_lenet.plexus)
  --dataset KIND       a built-in model's dataset: mnist or fashion-mnist          [mnist]
  --data PATH          use this dataset folder or file instead of the project's  [mnist:
                       data/mnist; fashion-mnist: /usr/share/datasets/fashion-mnist]
  --train-subset N     train on the first N training examples only
  --shift K            augment: shift training pictures by up to K pixels each way (the
                       dataset's augment.shift)
  --threads N          CPU threads for the math                  [all hardware threads]

Training settings (a project's "training" object, docs/project-format.md; the defaults are a
new project's, a project file or built-in model has its own):
%SETTINGS%  --lr-mult NODE=F     train the node with id NODE at F times the learning rate (0 freezes its
                       weights); repeatable, for other nodes (the node's lr_mult)
  --weight-decay-mult NODE=F   the same for the weight decay (the node's weight_decay_mult)
  --freeze NODE        fine-tuning: the node with id NODE keeps its weights (no gradient, no
                       optimizer state; BatchNorm keeps its running statistics); repeatable
                       (the node's frozen)

What to keep and where to start:
  --metrics FILE       append every event as a JSON line to FILE
  --save FILE          save a checkpoint (model + optimizer) after every epoch
  --resume FILE        start from a checkpoint saved with --save
  --resume RUN_DIR     go on with the interrupted run in RUN_DIR (killed, stopped, or failed on a
                       full disk) from its last.safetensors, in the same folder, as if it had never
                       stopped: its own project and settings (options that change them are
                       refused), metrics.jsonl cut back to where last
                       was saved and appended to. A completed run is refused (--continue it)
  --quiet              print only the epoch summaries
  --save-run           keep the run as the GUI does, in <project folder>/<name>.runs/<date-time>/:
                       best.safetensors whenever the validation score improves and
                       final.safetensors at the end, each with the project inside;
                       last.safetensors, where an interrupted run resumes (--resume RUN_DIR),
                       at every epoch's end and every --checkpoint-minutes; project.plexus;
                       metrics.jsonl (a header line, then every event)
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
  --rank-timeout S     data-parallel: seconds a rank waits for the others before it stops
                       the job (default 120)

  Ctrl-C (SIGINT) or SIGTERM stops after the current batch, keeping final.safetensors (and
  last.safetensors, to resume the run).
  Data-parallel: mpirun -np N plexus-cli train FILE ... trains one model on N processes
  (docs/distributed.md). batch_size is the global batch: each rank takes its share of every
  batch, the gradients are summed over the ranks during backward, and rank 0 alone prints,
  writes --metrics, --save and the run folder. With --device cuda each rank uses the GPU of
  its local rank; without --threads the ranks on a machine share its cores.
)";

std::string help() {
  std::string text = kTrainHelp;
  text.replace(text.find("%SETTINGS%"), 10, setting_options_help());
  return text;
}

// What is trained: a project file, or a built-in project (train --model).
struct Subject {
  std::string file;     // "" for a built-in project
  std::string builtin;  // its name
  std::string text() const { return file.empty() ? "model " + builtin : "project " + file; }
};

// The node `id` of an option's `value` (NODE=F or NODE), one that learns values.
graph::Node& learning_node(graph::Graph& g, const std::string& option, const std::string& value,
                           const std::string& id) {
  graph::Node* node = g.find(id);
  if (!node) throw UsageError{option + " " + value + ": the project has no node '" + id + "'"};
  if (!graph::node_settings_apply(*node)) throw UsageError{option + " " + value + ": " + node->label() + " learns nothing"};
  return *node;
}

// --lr-mult NODE=F and --weight-decay-mult NODE=F, each repeatable, and --freeze NODE,
// repeatable: a node's own training setting (graph/node_settings.h) for this run.
void apply_node_options(const Args& args, graph::Graph& g) {
  for (const auto& [option, setting] : {std::pair<std::string, std::string>{"--lr-mult", "lr_mult"},
                                        {"--weight-decay-mult", "weight_decay_mult"}}) {
    for (const std::string& value : args.all(option)) {
      const size_t eq = value.find('=');
      const std::optional<double> factor =
          eq == std::string::npos ? std::nullopt : non_negative_number(value.substr(eq + 1));
      if (eq == 0 || !factor)
        throw UsageError{option + " needs NODE=F (a node id, a number >= 0), got '" + value + "'"};
      graph::Node& node = learning_node(g, option, value, value.substr(0, eq));
      try {
        graph::set_node_setting(node, setting, *factor);
      } catch (const ValueError& e) {
        throw UsageError{option + " " + value + ": " + e.what()};
      }
    }
  }
  for (const std::string& id : args.all("--freeze")) learning_node(g, "--freeze", id, id).frozen = true;
}

// --shift K: the dataset's augment.shift.
void apply_shift_option(const Args& args, graph::Graph& g) {
  if (!args.has("--shift")) return;
  try {
    graph::set_dataset_value(g.dataset, "augment.shift", args.integer("--shift", 0, 0));
  } catch (const ValueError& e) {
    throw UsageError{std::string("--shift: ") + e.what()};
  }
}

// `resumed`: the run of a folder that --resume goes on with (g is its project), else null.
int train_project(const Args& args, const Subject& subject, graph::Graph& g, const session::RunOptions& ro,
                  const Distributed& d, session::ResumedRun* resumed) {
  graph::TrainingSettings& s = g.training;
  std::optional<session::RunRecord> from;
  if (args.has("--continue")) from = session::read_run(args.str("--continue", ""));
  std::optional<session::TrainingRun> built;
  if (!resumed) built.emplace(from ? session::make_continued_run(*from, g, ro) : session::make_training_run(g, ro));
  session::TrainingRun& run = resumed ? resumed->run : *built;
  nn::Module& model = *run.compiled.model;
  if (d.on()) check_ranks_agree(d, g, run);
  for (const graph::Problem& p : run.compiled.validation.problems) std::printf("%s\n", graph::to_string(p).c_str());

  if (args.has("--resume") && !resumed) {
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
  std::printf("%s (%s), %s from %s: %lld train / %lld validation / %lld test examples, %s lr %g, "
              "batch %lld, on %s\n",
              subject.text().c_str(), session::trained_parameters_text(model).c_str(), run.dataset.kind.c_str(),
              run.dataset.path.c_str(), (long long)run.data.train->size(),
              (long long)(run.data.validation ? run.data.validation->size() : 0),
              (long long)(run.data.test ? run.data.test->size() : 0), s.optimizer.c_str(), s.lr, (long long)s.batch_size,
              session::device_text(parse_device(s.device), run.trainer_options.precision).c_str());
  if (!run.data.info.note.empty()) std::printf("%s\n", run.data.info.note.c_str());
  if (d.on())
    std::printf("data-parallel over %d process%s (gradients summed with %s; %s): each takes about %lld of every "
                "batch of %lld, with %d thread%s\n",
                d.size(), d.size() == 1 ? "" : "es", d.world.comm->backend().c_str(), dist::backends().c_str(),
                (long long)((s.batch_size + d.size() - 1) / d.size()), (long long)s.batch_size, num_threads(),
                num_threads() == 1 ? "" : "s");
  if (d.on() && !d.world.note.empty()) std::printf("%s\n", d.world.note.c_str());
  if (s.class_balance != "none")
    std::printf("class balance %s\n",
                session::class_balance_text(s.class_balance, run.class_counts, run.class_names).c_str());
  if (s.accumulate_steps > 1)
    std::printf("gradient accumulation: one optimizer step per %lld batches (%lld examples)\n",
                (long long)s.accumulate_steps, (long long)(s.accumulate_steps * s.batch_size));
  std::printf("a training step computes %.3g MFLOP per example (its products, counted: docs/performance.md)\n",
              run.trainer_options.flops_per_example / 1e6);
  const train::MachinePeak peak = machine_peak(parse_device(s.device), run.trainer_options.precision);
  run.trainer_options.peak_gflops = peak.gflops;
  const size_t skipped_at_start = run.data.skipped().size();
  print_skipped(run.data.skipped(), 0, "left out");
  // A continued run is kept too: its folder is where the continuation lives.
  std::optional<session::RunLog> log;
  std::optional<session::RunCheckpoints> checkpoints;
  if (resumed && d.rank() == 0) {
    session::reopen_run_folder(*resumed, log, checkpoints);
    std::printf("resuming the run in %s (%s, saved %s)\n", resumed->point.folder.c_str(),
                session::resume_point_text(resumed->point).c_str(), resumed->point.saved.c_str());
  } else if ((args.has("--save-run") || args.has("--run-dir") || from) && d.rank() == 0) {
    const fs::path folder =
        args.has("--run-dir") ? fs::path(args.str("--run-dir", "")) : session::new_run_folder(subject.file, {});
    session::RunHeader header = session::run_header(run, subject.file, ro, from ? &*from : nullptr);
    if (args.has("--init-from")) header.init_from = fs::absolute(args.str("--init-from", "")).lexically_normal().string();
    log.emplace(folder, g, std::move(header));
    if (!initialised.empty()) log->record(train::Notice{initialised});
    checkpoints.emplace(folder, g, run);
    session::keep_last_checkpoint(run, *checkpoints, *log);
    std::printf("the run goes to %s\n", folder.c_str());
  }
  std::fflush(stdout);

  train::Trainer trainer(model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  trainer.set_scheduler(run.scheduler.get());
  trainer.set_test_loader(run.test_loader.get());
  Reporting r;
  r.quiet = args.has("--quiet");
  r.classification = run.compiled.classification;
  r.text = session::is_text_project(g);
  r.metrics_path = d.rank() == 0 ? args.str("--metrics", "") : "";
  r.log = log ? &*log : nullptr;
  r.nodes = run.trainer_options.nodes;
  r.comm = d.on() ? d.world.comm.get() : nullptr;
  const std::string save = d.rank() == 0 ? args.str("--save", "") : "";
  // A built-in model's checkpoint names it, so that eval finds its project.
  const train::Metadata saved_meta = subject.file.empty()
                                         ? train::Metadata{{"model", subject.builtin}}
                                         : train::Metadata{{"project", fs::path(subject.file).filename().string()}};
  r.after_epoch = [&](const train::EpochEnd& e) {
    if (!save.empty()) train::save_checkpoint(save, model, run.optimizer.get(), saved_meta);
    if (checkpoints) checkpoints->epoch_ended(e);
  };
  r.after_run = [&](const train::RunResult& result) {
    train::remember_faster_run(peak, result, train::default_peak_cache());
    print_skipped(run.data.skipped(), skipped_at_start, "while training, could not decode and left out");
    if (!checkpoints) return;
    session::finish_run(*checkpoints, *log, result);
    std::vector<std::string> kept;
    for (const char* name : {"best.safetensors", "final.safetensors", session::kLastCheckpointFile, session::kRunLogFile,
                             session::kRunProjectFile})
      if (fs::exists(checkpoints->folder() / name)) kept.push_back(name);
    std::printf("saved the run in %s: %s\n", checkpoints->folder().c_str(), join(kept).c_str());
  };
  return run_and_report(trainer, r);
}

// --resume RUN_DIR: the run goes on with the project and settings it has, so options that would
// change them are refused.
void check_resume_options(const Args& args, const fs::path& folder) {
  std::vector<std::string> changing = {"--save-run", "--run-dir", "--model", "--dataset", "--data", "--train-subset",
                                       "--shift", "--lr-mult", "--weight-decay-mult", "--freeze", "--device"};
  for (const ValueOption& o : setting_options().with_value) changing.push_back(o.name);
  changing.insert(changing.end(), setting_options().switches.begin(), setting_options().switches.end());
  for (const std::string& o : changing)
    if (args.has(o))
      throw UsageError{"--resume " + folder.string() + " goes on with the run's own project and settings: " + o +
                       " cannot change them (start a new run, or --continue the run once it has ended)"};
}

int cmd_train(const Args& args) {
  if (int(args.has("--continue")) + int(args.has("--resume")) + int(args.has("--init-from")) > 1)
    throw UsageError{"--continue, --resume and --init-from each start from a checkpoint: give one of them"};
  Subject subject;
  graph::Graph g;
  // --resume with a run folder: the run in it goes on (a checkpoint file starts a new run).
  std::error_code ec;
  if (args.has("--resume") && !fs::exists(args.str("--resume", ""), ec))
    throw UsageError{"--resume " + args.str("--resume", "") + ": no such run folder or checkpoint file"};
  const fs::path resume_folder = args.has("--resume") && fs::is_directory(args.str("--resume", ""), ec)
                                     ? fs::path(args.str("--resume", ""))
                                     : fs::path();
  if (!resume_folder.empty()) {
    check_resume_options(args, resume_folder);
    const session::RunHeader header = session::read_run_header(resume_folder);
    subject.file = header.project;
    if (header.project.empty()) subject.builtin = "of " + resume_folder.string();
    g = graph::load_project(resume_folder / session::kRunProjectFile);
    g.training = header.settings;
    apply_threads_option(args);
  } else if (!args.positional().empty()) {
    for (const char* o : {"--model", "--dataset"})
      if (args.has(o))
        throw UsageError{std::string(o) + " is for the built-in models: a project file names its own " +
                         (std::string(o) == "--model" ? "graph" : "dataset (use --data to point elsewhere)")};
    subject.file = args.positional()[0];
    g = graph::load_project(subject.file);
  } else {
    // A built-in project's run folder has no project file to lie next to.
    if (args.has("--save-run") || (args.has("--continue") && !args.has("--run-dir")))
      throw UsageError{"a built-in model has no project folder to keep its run in: give --run-dir DIR"};
    subject.builtin = args.str("--model", "mlp");
    g = builtin_project(subject.builtin, args);
    // As before they were projects: AdamW's weight decay defaults to its decoupled 0.01.
    if (args.has("--optimizer") && !args.has("--weight-decay"))
      g.training.weight_decay = optim::default_weight_decay(args.str("--optimizer", ""));
  }
  if (resume_folder.empty()) {
    apply_setting_options(args, g.training);
    apply_node_options(args, g);
    apply_shift_option(args, g);
    apply_machine_options(args, g);
  }

  session::RunOptions ro;
  ro.project_dir = project_dir(subject.file);
  ro.train_subset = args.integer("--train-subset", 0, 1);
  const Distributed d = join_job(args, g);
  if (d.on()) {
    ro.shard = d.rank();
    ro.shards = d.size();
  }
  try {
    if (resume_folder.empty()) return train_project(args, subject, g, ro, d, nullptr);
    session::ResumedRun resumed = session::make_resumed_run(resume_folder, ro);
    return train_project(args, subject, resumed.project, ro, d, &resumed);
  } catch (const dist::RankMismatch&) {
    throw;  // found alike by every rank: each stops on its own
  } catch (const std::exception& e) {
    // One rank failing alone (its dataset missing, a timeout) would leave the others waiting.
    if (d.on()) d.world.comm->abort(e.what(), 1);
    throw;
  }
}

}  // namespace

Command train_command() {
  // Its own options, then the training settings' (setting_flags.h).
  ArgsShape shape{{"--quiet", "--save-run"},
                  {builtin_model_option(), builtin_dataset_option(), {"--data", Takes::Path}, {"--train-subset"},
                   {"--shift"}, kThreadsOption, {"--lr-mult"}, {"--weight-decay-mult"}, {"--freeze"},
                   {"--metrics", Takes::Path}, {"--save", Takes::Path}, {"--resume", Takes::Path},
                   {"--run-dir", Takes::Path}, {"--init-from", Takes::Path}, {"--continue", Takes::Path},
                   {"--rank-timeout"}},
                  1,
                  {"--lr-mult", "--weight-decay-mult", "--freeze"}};
  shape.flags.insert(shape.flags.end(), setting_options().switches.begin(), setting_options().switches.end());
  shape.options.insert(shape.options.end(), setting_options().with_value.begin(), setting_options().with_value.end());
  return {"train", "train FILE [options]\ntrain --model NAME [options]",
          "train a project file's model, or a built-in model (mlp, lenet, ...), with its settings", help, shape,
          cmd_train};
}

}  // namespace plexus::cli
