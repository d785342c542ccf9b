#include "graph/run.h"

#include <algorithm>
#include <numeric>

#include "cuda/cuda.h"
#include "graph/training_params.h"
#include "ops/backend.h"
#include "train/builtin.h"
#include "util/error.h"

namespace plexus::graph {
namespace fs = std::filesystem;

namespace {

bool image_kind(const std::string& kind) { return kind == "mnist" || kind == "fashion-mnist"; }

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

}  // namespace

DatasetLocation locate_dataset(const std::string& path, const fs::path& project_dir) {
  DatasetLocation loc;
  if (path.empty()) return {fs::path(), false, "(no path is set)"};
  const fs::path p(path);
  if (p.is_absolute() || project_dir.empty()) {
    loc.path = p;
    loc.found = path_exists(p);
    loc.looked = p.string();
    return loc;
  }
  const fs::path near_project = project_dir / p;
  if (path_exists(near_project)) return {near_project, true, near_project.string()};
  const fs::path here = fs::path(".") / p;
  loc.looked = near_project.string() + " or " + here.string();
  if (path_exists(p)) {
    loc.path = p;
    loc.found = true;
  } else {
    loc.path = near_project;
  }
  return loc;
}

DatasetBinding resolve_dataset(const DatasetBinding& binding, const fs::path& project_dir, bool must_exist) {
  if (binding.path.empty()) throw ValueError("dataset: no path is set (the folder or file with the data)");
  const DatasetLocation loc = locate_dataset(binding.path, project_dir);
  if (!loc.found && must_exist)
    throw IoError("dataset '" + binding.path + "' not found (looked in " + loc.looked + ")" +
                  (binding.kind == "mnist" ? "; run scripts/fetch-mnist to download MNIST into data/mnist" : ""));
  DatasetBinding out = binding;
  out.path = loc.path.string();
  return out;
}

void check_training_settings(const TrainingSettings& s) {
  // Numbers against the ranges the settings form enforces (a project file may hold anything),
  // where they matter for these settings. The seed takes any unsigned 64-bit value.
  for (const ParamSpec& spec : training_param_specs()) {
    if ((spec.type != ParamType::Int && spec.type != ParamType::Float) || spec.name == "seed" ||
        !training_value_applies(s, spec.name))
      continue;
    const ParamValue value = *training_value(s, spec.name);
    if (const std::string reason = check_param_value(spec, value); !reason.empty())
      throw ValueError("training: " + spec.name + " " + reason + ", got " + to_string(value));
  }
  const auto& known = train::optimizer_names();
  if (std::find(known.begin(), known.end(), s.optimizer) == known.end()) {
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    throw ValueError("training: unknown optimizer '" + s.optimizer + "' (known: " + list + ")");
  }
  if (s.schedule != "none" && s.schedule != "step" && s.schedule != "cosine")
    throw ValueError("training: schedule must be none, step or cosine, got '" + s.schedule + "'");
  Device device;
  try {
    device = parse_device(s.device);
  } catch (const ValueError&) {
    throw ValueError("training: device must be cpu, cuda or cuda:N, got '" + s.device + "'");
  }
  cuda::check_available(device);  // DeviceError: no such GPU here
}

TrainingRun make_training_run(const Graph& graph, const RunOptions& options) {
  TrainingRun run;
  run.settings = graph.training;
  const TrainingSettings& s = run.settings;
  check_training_settings(s);

  run.dataset = resolve_dataset(graph.dataset, options.project_dir);
  run.data = open_dataset(run.dataset, s.seed);
  if (options.train_subset > 0 && options.train_subset < run.data.train->size()) {
    std::vector<int64_t> idx(size_t(options.train_subset));
    std::iota(idx.begin(), idx.end(), int64_t(0));
    run.data.train = std::make_shared<data::Subset>(run.data.train, std::move(idx));
  }

  run.compiled = compile(graph, run.data.info, s.seed);
  const Device device = parse_device(s.device);
  run.compiled.model->to(device);

  train::OptimizerConfig oc;
  oc.kind = s.optimizer;
  oc.lr = s.lr;
  oc.momentum = s.momentum;
  oc.nesterov = s.nesterov;
  oc.weight_decay = s.weight_decay;
  oc.weight_decay_set = true;  // the project states it, 0 included
  run.optimizer = train::make_optimizer(oc, run.compiled.model->parameters());
  if (s.schedule == "cosine") run.scheduler = std::make_unique<optim::CosineAnnealingLR>(*run.optimizer, s.epochs);
  if (s.schedule == "step") run.scheduler = std::make_unique<optim::StepLR>(*run.optimizer, s.step_size, s.gamma);

  // Images are standardised with the mean and std of the training images used (as
  // `plexus-cli train --model` does); CSV features come standardised from open_dataset.
  data::TransformPtr normalize;
  if (image_kind(run.dataset.kind)) normalize = train::standardize_images(*run.data.train);
  run.train_loader = std::make_unique<data::DataLoader>(
      run.data.train, data::DataLoaderOptions{.batch_size = s.batch_size, .shuffle = true, .seed = s.seed,
                                              .transform = normalize, .pin_memory = !device.is_cpu()});
  run.eval_loader = std::make_unique<data::DataLoader>(
      run.data.test, data::DataLoaderOptions{.batch_size = options.eval_batch_size, .transform = normalize,
                                             .pin_memory = !device.is_cpu()});

  run.trainer_options.epochs = int(s.epochs);
  run.trainer_options.loss = run.compiled.loss;
  run.trainer_options.classification = run.compiled.classification;
  run.trainer_options.seed = s.seed;
  return run;
}

}  // namespace plexus::graph
