#include "session/trained_model.h"

#include <nlohmann/json.hpp>

#include "autograd/grad_mode.h"
#include "data/csv.h"
#include "data/dataloader.h"
#include "data/vocabulary.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "ops/ops.h"
#include "session/data_pipeline.h"
#include "session/run.h"
#include "train/trainer.h"
#include "util/error.h"

namespace plexus::session {
namespace fs = std::filesystem;
namespace {

constexpr const char* kMean = "input_mean";
constexpr const char* kStd = "input_std";
constexpr const char* kClasses = "class_names";
constexpr const char* kInputShape = "input_shape";
constexpr const char* kLabelShape = "label_shape";
constexpr const char* kClassCount = "classes";
constexpr const char* kFeatures = "feature_names";
constexpr const char* kVocabulary = "vocabulary";
constexpr const char* kPreparation = "table_preparation";

// A metadata value that holds a JSON array of T; nullopt when the key is absent.
template <class T>
std::optional<std::vector<T>> json_array(const io::SafetensorsMetadata& meta, const char* key, const std::string& where) {
  const auto it = meta.find(key);
  if (it == meta.end()) return std::nullopt;
  try {
    return nlohmann::json::parse(it->second).get<std::vector<T>>();
  } catch (const nlohmann::json::exception&) {
    throw IoError(where + ": metadata '" + key + "' is not a JSON array of " +
                  (std::is_same_v<T, std::string> ? "strings" : "numbers") + ": " + it->second);
  }
}

// The normalisation and class names of the file's metadata, checked against the model's input.
struct StoredInputs {
  std::optional<Shape> input_shape;
  Shape label_shape;  // absent: [] (a class or a value)
  std::optional<int64_t> classes;
  std::optional<InputNormalization> normalization;
  std::optional<std::vector<std::string>> class_names, feature_names, vocabulary;
  std::shared_ptr<const data::TablePreparation> preparation;
};

StoredInputs stored_inputs(const io::SafetensorsMetadata& meta, const std::string& where) {
  StoredInputs s;
  if (auto shape = json_array<int64_t>(meta, kInputShape, where)) s.input_shape = Shape(shape->begin(), shape->end());
  if (auto shape = json_array<int64_t>(meta, kLabelShape, where)) s.label_shape = Shape(shape->begin(), shape->end());
  if (const auto it = meta.find(kClassCount); it != meta.end()) {
    size_t used = 0;
    try {
      s.classes = std::stoll(it->second, &used);
    } catch (const std::exception&) {
    }
    if (!s.classes || used != it->second.size() || *s.classes < 0)
      throw IoError(where + ": metadata '" + kClassCount + "' is not a whole number >= 0: " + it->second);
  }
  auto mean = json_array<float>(meta, kMean, where), stdev = json_array<float>(meta, kStd, where);
  if (mean.has_value() != stdev.has_value())
    throw IoError(where + ": metadata has '" + (mean ? kMean : kStd) + "' without '" + (mean ? kStd : kMean) + "'");
  if (mean) {
    // Both empty: inputs the model takes as they are (a text dataset's character ids).
    if (mean->size() != stdev->size())
      throw IoError(where + ": metadata '" + kMean + "' and '" + kStd + "' must hold as many values; got " +
                    std::to_string(mean->size()) + " and " + std::to_string(stdev->size()));
    for (float v : *stdev)
      if (!(v > 0)) throw IoError(where + ": metadata '" + std::string(kStd) + "' holds a value that is not positive");
    s.normalization = InputNormalization{std::move(*mean), std::move(*stdev)};
  }
  s.class_names = json_array<std::string>(meta, kClasses, where);
  s.feature_names = json_array<std::string>(meta, kFeatures, where);
  s.vocabulary = json_array<std::string>(meta, kVocabulary, where);
  if (const auto it = meta.find(kPreparation); it != meta.end())
    s.preparation =
        std::make_shared<const data::TablePreparation>(data::TablePreparation::from_json(it->second, where));
  return s;
}

}  // namespace

data::TransformPtr InputNormalization::transform() const { return empty() ? nullptr : data::normalize(mean, std); }

Tensor InputNormalization::apply(const Tensor& raw) const {
  if (empty()) return raw;
  if (raw.dim() < 2) throw ShapeError("InputNormalization: expected a batch [N, ...], got shape " + plexus::to_string(raw.shape()));
  // The loaders' own transform, so a model used outside training sees the very same numbers.
  Generator unused(0);
  return transform()->apply({raw, Tensor()}, unused).input;
}

Tensor InputNormalization::unapply(const Tensor& standardised) const {
  if (empty()) return standardised;
  if (standardised.dim() < 2)
    throw ShapeError("InputNormalization: expected a batch [N, ...], got shape " + plexus::to_string(standardised.shape()));
  Shape per_channel(size_t(standardised.dim()), 1);  // [1, C, 1, 1]: one mean and std per channel (dim 1)
  if (mean.size() > 1) per_channel[1] = int64_t(mean.size());
  NoGradGuard no_grad;
  return standardised * from_vector(std, per_channel) + from_vector(mean, per_channel);
}

void write_model_metadata(train::Metadata& meta, const graph::DatasetInfo& info, const InputNormalization& norm,
                          const std::vector<std::string>& class_names, const std::vector<std::string>& feature_names,
                          const std::vector<std::string>& vocabulary, const data::TablePreparation* preparation) {
  if (!feature_names.empty()) meta[kFeatures] = nlohmann::json(feature_names).dump();
  meta[kInputShape] = nlohmann::json(info.input_shape).dump();
  if (!info.label_shape.empty()) meta[kLabelShape] = nlohmann::json(info.label_shape).dump();
  meta[kClassCount] = std::to_string(info.classes);
  meta[kMean] = nlohmann::json(norm.mean).dump();
  meta[kStd] = nlohmann::json(norm.std).dump();
  if (!class_names.empty()) meta[kClasses] = nlohmann::json(class_names).dump();
  if (!vocabulary.empty()) meta[kVocabulary] = nlohmann::json(vocabulary).dump();
  if (preparation) meta[kPreparation] = preparation->to_json();
}

Tensor TrainedModel::forward(const Tensor& raw) const {
  NoGradGuard no_grad;
  return (*compiled.model)(model_input(raw));
}

std::vector<Tensor> TrainedModel::predictions(const Tensor& raw) const {
  NoGradGuard no_grad;
  return compiled.model->predictions(model_input(raw));
}

Tensor TrainedModel::model_input(const Tensor& raw) const {
  Shape expected{-1};
  expected.insert(expected.end(), info.input_shape.begin(), info.input_shape.end());
  const Shape& got = raw.shape();
  if (got.size() != expected.size() || !std::equal(got.begin() + 1, got.end(), expected.begin() + 1))
    throw ShapeError("the model takes inputs [N, " + plexus::to_string(info.input_shape).substr(1) + ", got shape " +
                     plexus::to_string(got));
  return normalization.apply(raw);
}

TrainedModel load_trained_model(const graph::Graph& project, const fs::path& weights, const LoadOptions& options) {
  const io::SafetensorsHeader header = io::read_safetensors_header(weights);
  const std::string where = weights.string();
  TrainedModel m;
  m.project = project;
  const auto fmt = header.metadata.find("plexus.format");
  m.kind = fmt != header.metadata.end() ? WeightsKind::Checkpoint : WeightsKind::Weights;
  StoredInputs stored = stored_inputs(header.metadata, where);

  // The dataset is opened only for what the file does not say: the shapes of a CSV file, the
  // normalisation and class names of a weights file that lacks them.
  std::optional<graph::DatasetSplits> splits;
  graph::DatasetBinding binding = project.dataset;
  auto open = [&](const char* why) -> const graph::DatasetSplits& {
    if (!splits) {
      try {
        binding = graph::resolve_dataset(project.dataset, options.project_dir);
      } catch (const Error& e) {
        throw IoError(std::string(e.what()) + "; it is needed for " + why + ", which " + where + " does not hold");
      }
      splits = graph::open_dataset(binding, project.training.seed, project.training.validation_fraction,
                                   stored.preparation);
    }
    return *splits;
  };
  // The project's dataset describes the inputs where that is cheap (image folders are described
  // without reading them) or the data is at hand; the file's own description must agree with it.
  const graph::DatasetLocation located = graph::locate_dataset(project.dataset.path, options.project_dir);
  const bool stored_info = stored.input_shape && stored.classes;
  if (graph::is_idx_dataset(project.dataset.kind) || located.found || !stored_info)
    m.info = graph::is_idx_dataset(project.dataset.kind) ? graph::describe_dataset(project.dataset)
                                                           : open("the shape of the model's inputs").info;
  else
    m.info = {*stored.input_shape, stored.label_shape, *stored.classes, 0,
              stored.feature_names.value_or(std::vector<std::string>{})};
  auto described = [](const Shape& shape, int64_t classes) {
    return "inputs " + plexus::to_string(shape) + " and " +
           (classes ? std::to_string(classes) + " classes" : std::string("regression targets"));
  };
  if (stored_info && (*stored.input_shape != m.info.input_shape || *stored.classes != m.info.classes))
    throw IoError(where + " was trained for " + described(*stored.input_shape, *stored.classes) +
                  ", but the project's dataset has " + described(m.info.input_shape, m.info.classes));

  m.compiled = layers::compile(project, m.info, project.training.seed);
  m.metadata = m.kind == WeightsKind::Checkpoint ? train::load_checkpoint(weights, *m.compiled.model)
                                                 : train::load_weights(weights, *m.compiled.model);
  m.compiled.model->eval();

  if (stored.normalization) m.normalization = std::move(*stored.normalization);
  else
    m.normalization = input_normalization(project, binding, *open("the input normalisation").train, project.training.seed);
  // A text dataset's vocabulary is its class names whatever the loss: sampling needs it.
  if (m.compiled.classification || project.dataset.kind == "text") {
    if (stored.class_names) m.class_names = std::move(*stored.class_names);
    else m.class_names = class_names(*open("the class names").train, m.info.classes);
  }
  if (stored.vocabulary) m.vocabulary = std::move(*stored.vocabulary);
  else if (project.dataset.kind == "text_classes") m.vocabulary = input_vocabulary(*open("the input vocabulary").train);
  try {
    (void)data::Vocabulary(m.vocabulary);  // one distinct character each, or typed text could not be encoded
  } catch (const Error& e) {
    throw IoError(where + ": metadata '" + kVocabulary + "': " + e.what());
  }
  if (stored.feature_names) {
    m.feature_names = std::move(*stored.feature_names);
  } else if (project.dataset.kind == "csv" && (splits || located.found)) {  // optional: names check the columns
    const auto* csv = dynamic_cast<const data::CsvDataset*>(open("the feature columns' names").train.get());
    if (csv) m.feature_names = csv->feature_names();
  }
  // How raw rows become inputs: stored, else fitted again as the run fitted it, else (a file from
  // before preparations, its data gone) its columns taken as plain numbers.
  if (stored.preparation) {
    m.preparation = std::move(stored.preparation);
  } else if (project.dataset.kind == "csv" && (splits || located.found)) {
    const auto* csv = dynamic_cast<const data::CsvDataset*>(open("how rows become inputs").train.get());
    if (csv) m.preparation = csv->shared_preparation();
  } else if (project.dataset.kind == "csv" && !m.feature_names.empty()) {
    m.preparation = std::make_shared<const data::TablePreparation>(data::TablePreparation::numbers(m.feature_names));
  }
  if (m.preparation && !m.feature_names.empty() && m.preparation->input_names() != m.feature_names)
    throw IoError(where + ": the stored preparation of rows does not give the feature names it lists");
  const Shape& in = m.info.input_shape;
  if (!m.feature_names.empty() && (in.size() != 1 || int64_t(m.feature_names.size()) != in[0]))
    throw IoError(where + ": names " + std::to_string(m.feature_names.size()) + " feature columns, the model's input is " +
                  plexus::to_string(in));
  const int64_t channels = in.empty() ? 0 : in[0];
  if (!m.normalization.empty() && m.normalization.mean.size() != 1 && int64_t(m.normalization.mean.size()) != channels)
    throw IoError(where + ": the input normalisation has " + std::to_string(m.normalization.mean.size()) +
                  " values, the model's input " + plexus::to_string(in) + " needs 1 or " + std::to_string(channels));
  if ((m.compiled.classification || !m.class_names.empty()) && int64_t(m.class_names.size()) != m.info.classes)
    throw IoError(where + ": names " + std::to_string(m.class_names.size()) + " classes, the model has " +
                  std::to_string(m.info.classes));
  return m;
}

TestEvaluation evaluate_on_test(TrainedModel& model, const LoadOptions& options, int64_t batch_size, Device device,
                                bool predictions, const std::atomic<bool>* cancelled) {
  const graph::Graph& g = model.project;
  const graph::DatasetBinding dataset = graph::resolve_dataset(g.dataset, options.project_dir);
  TestEvaluation out;
  graph::DatasetSplits splits =
      graph::open_dataset(dataset, g.training.seed, g.training.validation_fraction, model.preparation);
  out.split = std::move(splits.test);
  out.train = std::move(splits.train);
  if (!out.split) throw ValueError("a '" + dataset.kind + "' dataset has no test split (see docs/training.md)");
  out.dataset_kind = dataset.kind;
  model.compiled.model->to(device);
  data::DataLoader loader(out.split, {.batch_size = batch_size,
                                      .workers = loader_workers(dataset),
                                      .transform = model.normalization.transform(),
                                      .pin_memory = !device.is_cpu()});
  train::TrainerOptions to;
  set_loss(to, model.compiled);
  to.record_predictions = predictions;
  out.figures = train::evaluate(*model.compiled.model, loader, to, cancelled);
  return out;
}

TrainedModel clone_trained_model(const TrainedModel& model) {
  TrainedModel copy = model;  // everything but the model itself, which would be shared
  copy.compiled = layers::compile(model.project, model.info, model.project.training.seed);
  copy.compiled.model->eval();
  const nn::NamedTensors from = model.compiled.model->state(), to = copy.compiled.model->state();
  if (from.size() != to.size()) throw Error("cloning a model: its graph compiled again has other tensors");
  NoGradGuard no_grad;
  for (size_t i = 0; i < to.size(); ++i) {
    Tensor target = to[i].second;
    target.copy_(from[i].second);
  }
  return copy;
}

std::optional<graph::Graph> project_in_checkpoint(const fs::path& file) {
  const io::SafetensorsHeader header = io::read_safetensors_header(file);
  const auto it = header.metadata.find("project");
  if (it == header.metadata.end()) return std::nullopt;
  // Built-in models and `init` store a name, not a project's text.
  if (it->second.empty() || it->second.front() != '{') return std::nullopt;
  try {
    return graph::parse_project(it->second, file.string() + " (its project)");
  } catch (const Error& e) {
    throw IoError(e.what());
  }
}

}  // namespace plexus::session
