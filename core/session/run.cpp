#include "session/run.h"

#include <memory>
#include <numeric>

#include "cuda/cuda.h"
#include "data/csv.h"
#include "data/sampling.h"
#include "ops/cpu/sbgemm.h"
#include "graph/compute.h"
#include "session/class_balance.h"
#include "session/data_pipeline.h"
#include "session/evaluation_report.h"
#include "session/optimizer_groups.h"
#include "session/reconstructions.h"
#include "session/text_sampling.h"
#include "graph/training_params.h"
#include "optim/factory.h"
#include "train/builtin.h"
#include "util/error.h"
#include "util/threads.h"

namespace plexus::session {

std::vector<std::string> class_names(const data::Dataset& dataset, int64_t classes) {
  std::vector<std::string> names = dataset.class_names();
  names.resize(size_t(std::max<int64_t>(classes, 0)));
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i].empty()) names[i] = std::to_string(i);
  return names;
}

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

std::string device_text(Device d, Precision precision) {
  if (precision_on(d, precision) != Precision::BF16) return device_text(d) + ", fp32";
  // On the CPU, which kernel multiplies: AMX tiles run several times faster than vdpbf16ps.
  return device_text(d) + ", bf16 products" + (d.is_cpu() ? " (" + std::string(cpu::bf16_kernel()) + ")" : "");
}

std::function<std::string(train::EpochEnd&)> epoch_samples(const TrainingRun& run) {
  // The model, not the TrainingRun: a run may be moved, its model stays where it is.
  nn::Module* model = run.compiled.model.get();
  const data::Vocabulary vocabulary(run.class_names);
  const int64_t context = run.data.info.input_shape.empty() ? 0 : run.data.info.input_shape[0];
  const uint64_t seed = run.settings.seed;
  // A model that cannot continue shorter texts (one that flattens whole windows, say) still
  // trains: it says once why it writes no samples and stops trying.
  auto refused = std::make_shared<bool>(false);
  return [=](train::EpochEnd& e) -> std::string {
    if (*refused) return "";
    SampleOptions o;
    o.count = kEpochSamples;
    o.temperature = 0.8;
    o.context = context;
    o.seed = data::mix_seed(seed, uint64_t(e.epoch), 0x73616d);
    try {
      e.samples = sample_text(*model, vocabulary, o);
    } catch (const Error& error) {
      *refused = true;
      return std::string("no samples from this model: ") + error.what();
    }
    return "";
  };
}

void set_epoch_end(TrainingRun& run, const graph::Graph& graph) {
  run.trainer_options.on_epoch_end = is_text_project(graph) ? epoch_samples(run) : epoch_reconstructions(run);
}

void build_optimizer(TrainingRun& run, const graph::Graph& graph, int64_t batches) {
  const graph::TrainingSettings& s = run.settings;
  run.optimizer = optim::make_optimizer(s, parameter_groups(graph, *run.compiled.model));
  const int64_t steps_per_epoch = (batches + s.accumulate_steps - 1) / s.accumulate_steps;
  run.scheduler = optim::make_scheduler(s, *run.optimizer, s.epochs, steps_per_epoch);
  run.plateau = optim::make_plateau(s, *run.optimizer, early_stopping(s).monitor.maximize());
  run.trainer_options.plateau = run.plateau.get();
}

train::EarlyStopping early_stopping(const graph::TrainingSettings& s) {
  return {.monitor = {s.monitor, s.monitor_mode},
          .patience = s.early_stopping_patience,
          .min_delta = s.early_stopping_min_delta};
}

void set_loss(train::TrainerOptions& options, const layers::CompiledGraph& compiled) {
  options.loss = compiled.loss;
  options.classification = compiled.classification;
  options.loss_parts = {};
  if (compiled.loss_parts) {
    for (const layers::LossTerm& t : compiled.terms) options.loss_parts.names.push_back(t.node);
    options.loss_parts.values = compiled.loss_parts;
  }
}

void observe_nodes(TrainingRun& run, const graph::Graph& graph) {
  run.trainer_options.observe_outputs = [model = run.compiled.model.get()](train::OutputObserver observer) {
    model->set_observer(std::move(observer));
  };
  run.trainer_options.nodes.clear();
  for (const graph::Node& n : graph.nodes) run.trainer_options.nodes[n.id] = {n.type, n.label(), n.lr_mult == 0};
}

TrainingRun make_training_run(const graph::Graph& graph, const RunOptions& options) {
  TrainingRun run;
  run.settings = graph.training;
  const graph::TrainingSettings& s = run.settings;
  check_training_settings(s);
  const Device device = parse_device(s.device);

  run.dataset = graph::resolve_dataset(graph.dataset, options.project_dir);
  if (s.carry_state && run.dataset.kind != "text")
    throw ValueError("training: carry_state needs a text dataset (consecutive windows of one text); this project's "
                     "dataset is '" + run.dataset.kind + "'");
  run.data = graph::open_dataset(run.dataset, s.seed, s.validation_fraction);
  check_class_balance(s.class_balance, run.dataset, run.data.info.classes);
  std::shared_ptr<const data::Dataset> train = run.data.train;  // what the loader trains on
  if (options.train_subset > 0 && options.train_subset < train->size()) {
    std::vector<int64_t> idx(size_t(options.train_subset));
    std::iota(idx.begin(), idx.end(), int64_t(0));
    train = std::make_shared<data::Subset>(train, std::move(idx));
  }
  if (s.class_balance != "none") run.class_counts = training_class_counts(*train, run.data.info.classes);
  // Before the slower parts: a bad graph fails at once.
  run.compiled = layers::compile(balanced_graph(graph, s, run.class_counts), run.data.info, s.seed);
  run.compiled.model->to(device);

  // Standardised with the whole training split, so a checkpoint's inputs can be prepared again
  // from the dataset alone, whatever subset this run trained on.
  run.normalization = input_normalization(graph, run.dataset, *run.data.train, s.seed);
  if (run.compiled.classification || run.dataset.kind == "text")  // a text's vocabulary, for sampling
    run.class_names = class_names(*run.data.train, run.data.info.classes);
  if (const auto* csv = dynamic_cast<const data::CsvDataset*>(run.data.train.get())) {
    run.feature_names = csv->feature_names();
    run.preparation = csv->shared_preparation();
  }
  run.vocabulary = input_vocabulary(*run.data.train);
  run.data.train = train;

  const data::TransformPtr normalize = run.normalization.transform();
  // Augmentation works on raw pixels, before they are standardised; training batches only.
  const data::TransformPtr augment = training_augmentation(run.dataset);
  const bool pin = !device.is_cpu();  // asynchronous copies to the GPU
  const int64_t workers = loader_workers(run.dataset);
  run.train_loader = std::make_unique<data::DataLoader>(
      run.data.train, data::DataLoaderOptions{.batch_size = s.batch_size,
                                              .shuffle = !s.carry_state,
                                              .streams = s.carry_state,
                                              .seed = s.seed,
                                              .sample_weights = s.class_balance == "sampler"
                                                                    ? balanced_sample_weights(split_targets(*train),
                                                                                              run.class_counts)
                                                                    : std::vector<double>(),
                                              .prefetch = loader_prefetch(run.dataset, s.batch_size),
                                              .workers = workers,
                                              .transform = augment ? data::compose({augment, normalize}) : normalize,
                                              .pin_memory = pin,
                                              .shard = options.shard,
                                              .shards = options.shards});
  const data::DataLoaderOptions held_out{.batch_size = options.eval_batch_size,
                                         .prefetch = loader_prefetch(run.dataset, options.eval_batch_size),
                                         .workers = workers,
                                         .transform = normalize,
                                         .pin_memory = pin,
                                         .shard = options.shard,
                                         .shards = options.shards};
  if (run.data.validation) run.eval_loader = std::make_unique<data::DataLoader>(run.data.validation, held_out);
  if (run.data.test) run.test_loader = std::make_unique<data::DataLoader>(run.data.test, held_out);

  build_optimizer(run, graph, run.train_loader->size());  // per-step schedules count its batches

  run.trainer_options.epochs = int(s.epochs);
  set_loss(run.trainer_options, run.compiled);
  run.trainer_options.seed = s.seed;
  run.trainer_options.precision = parse_precision(s.precision);
  run.trainer_options.cuda_graphs = s.cuda_graphs;
  run.trainer_options.carry_state = s.carry_state;
  run.trainer_options.stats_every = s.stats_every;
  run.trainer_options.accumulate_steps = int(s.accumulate_steps);
  run.trainer_options.sync_batchnorm = s.sync_batchnorm;
  // warmup_linear's warm-up is its first part, not a factor on top.
  if (s.schedule != "warmup_linear")
    run.trainer_options.warmup = {.steps = s.warmup_steps, .start_factor = s.warmup_start_factor};
  run.trainer_options.clip_grad_norm = float(s.clip_norm);
  run.trainer_options.clip_grad_value = float(s.clip_value);
  run.trainer_options.early_stopping = early_stopping(s);
  run.trainer_options.base_lr = s.lr;
  observe_nodes(run, graph);
  run.trainer_options.flops_per_example =
      graph::estimate_compute(graph::GraphIndex(graph), run.compiled.validation.shapes).training_flops;
  set_epoch_end(run, graph);
  return run;
}

}  // namespace plexus::session
