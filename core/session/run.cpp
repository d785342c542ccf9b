#include "session/run.h"

#include <numeric>

#include "cuda/cuda.h"
#include "graph/training_params.h"
#include "optim/factory.h"
#include "train/builtin.h"
#include "util/error.h"
#include "util/threads.h"

namespace plexus::session {
namespace {

// The dataset, opened and split as the graph's settings say, and the loaders' common
// preprocessing (set once the graph has compiled, so a graph with errors fails at once).
struct OpenedData {
  graph::DatasetBinding dataset;
  graph::DatasetSplits data;
  data::TransformPtr normalize;
};

OpenedData open_data(const graph::Graph& graph, const RunOptions& options) {
  OpenedData d;
  d.dataset = graph::resolve_dataset(graph.dataset, options.project_dir);
  d.data = graph::open_dataset(d.dataset, graph.training.seed);
  if (options.train_subset > 0 && options.train_subset < d.data.train->size()) {
    std::vector<int64_t> idx(size_t(options.train_subset));
    std::iota(idx.begin(), idx.end(), int64_t(0));
    d.data.train = std::make_shared<data::Subset>(d.data.train, std::move(idx));
  }
  return d;
}

// Images are standardised with the mean and std of the training images used (as `plexus-cli
// train --model` does); CSV features come standardised from open_dataset.
void set_normalization(OpenedData& d) {
  if (graph::is_image_dataset(d.dataset.kind)) d.normalize = train::standardize_images(*d.data.train);
}

graph::CompiledGraph compile_on_device(const graph::Graph& graph, const graph::DatasetInfo& info, Device device) {
  graph::CompiledGraph compiled = graph::compile(graph, info, graph.training.seed);
  compiled.model->to(device);
  return compiled;
}

std::unique_ptr<data::DataLoader> eval_loader(const OpenedData& d, const RunOptions& options, Device device) {
  return std::make_unique<data::DataLoader>(
      d.data.test, data::DataLoaderOptions{.batch_size = options.eval_batch_size, .transform = d.normalize,
                                           .pin_memory = !device.is_cpu()});
}

}  // namespace

void check_training_settings(const graph::TrainingSettings& s) {
  graph::check_training_values(s);
  Device device;
  try {
    device = parse_device(s.device);
  } catch (const ValueError&) {
    throw ValueError("training: device must be cpu, cuda or cuda:N, got '" + s.device + "'");
  }
  cuda::check_available(device);  // DeviceError: no such GPU here
}

std::string device_text(Device d) {
  if (d.is_cpu()) return "cpu, " + std::to_string(num_threads()) + " threads";
  return d.str() + " (" + cuda::properties(d.index).name + ")";
}

TrainingRun make_training_run(const graph::Graph& graph, const RunOptions& options) {
  TrainingRun run;
  run.settings = graph.training;
  const graph::TrainingSettings& s = run.settings;
  check_training_settings(s);
  const Device device = parse_device(s.device);

  OpenedData opened = open_data(graph, options);
  run.compiled = compile_on_device(graph, opened.data.info, device);
  run.optimizer = optim::make_optimizer(s, run.compiled.model->parameters());
  run.scheduler = optim::make_scheduler(s, *run.optimizer, s.epochs);
  set_normalization(opened);

  run.train_loader = std::make_unique<data::DataLoader>(
      opened.data.train, data::DataLoaderOptions{.batch_size = s.batch_size, .shuffle = true, .seed = s.seed,
                                                 .transform = opened.normalize, .pin_memory = !device.is_cpu()});
  run.eval_loader = eval_loader(opened, options, device);
  run.dataset = std::move(opened.dataset);
  run.data = std::move(opened.data);

  run.trainer_options.epochs = int(s.epochs);
  run.trainer_options.loss = run.compiled.loss;
  run.trainer_options.classification = run.compiled.classification;
  run.trainer_options.seed = s.seed;
  return run;
}

EvaluationRun make_evaluation_run(const graph::Graph& graph, const RunOptions& options) {
  check_training_settings(graph.training);
  const Device device = parse_device(graph.training.device);
  OpenedData opened = open_data(graph, options);
  EvaluationRun run;
  run.compiled = compile_on_device(graph, opened.data.info, device);
  set_normalization(opened);
  run.eval_loader = eval_loader(opened, options, device);
  run.dataset = std::move(opened.dataset);
  run.data = std::move(opened.data);
  run.trainer_options.loss = run.compiled.loss;
  run.trainer_options.classification = run.compiled.classification;
  return run;
}

}  // namespace plexus::session
