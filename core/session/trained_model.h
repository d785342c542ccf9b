#pragma once
// A trained model of a project, ready to use outside training (`plexus-cli eval`, `predict`,
// `export`, the GUI's Try-it panel): the compiled graph with weights loaded from a run
// checkpoint or a weights file, and the input preprocessing the run trained with.
//
// Raw units. An example's "raw" input is what the dataset reader yields before
// standardisation: MNIST-style images as pixel / 255 in [0, 1], [C, H, W]; CSV features as
// written in the file, [F]. The model itself sees (raw - mean) / std (InputNormalization).
// A run stores its normalisation and class names in every checkpoint's metadata, so a
// checkpoint is usable without its dataset; a weights file without them has them recomputed
// from the project's dataset exactly as a run computes them (same split, same seed).
#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/table_prep.h"
#include "data/transforms.h"
#include "graph/graph.h"
#include "layers/compiler.h"
#include "tensor/tensor.h"
#include "train/checkpoint.h"
#include "train/events.h"

namespace plexus::session {

// input = (raw - mean[c]) / std[c], c the channel (dim 1 of [N, C, H, W]) or the feature
// (dim 1 of [N, F]); a single pair applies to every value (MNIST's one mean for all pixels).
// Empty: inputs are used as they are (a text dataset's character ids); transform() is then null.
struct InputNormalization {
  std::vector<float> mean, std;

  bool empty() const { return mean.empty(); }
  data::TransformPtr transform() const;  // a data::Normalize for loaders
  Tensor apply(const Tensor& raw) const;  // raw [N, ...] -> model input, no autograd history
  // Model units [N, ...] (a reconstruction of the input) -> raw units: x · std + mean per channel.
  Tensor unapply(const Tensor& standardised) const;
  bool operator==(const InputNormalization&) const = default;
};

// What a checkpoint or weights file needs to be used without its dataset, as metadata (run
// checkpoints, Export Weights): "input_shape" (per example), "label_shape" (per example, where it
// is not [], as a text dataset's [seq_len]), "input_mean", "input_std" (both [] for inputs used as
// they are), "class_names", for a CSV file "feature_names" (its feature columns, in the model's order)
// and for labelled texts "vocabulary" (the characters of input ids 1, 2, ...: typed text is
// encoded with it, data::padded_ids) as JSON arrays, "classes" as a number (0 for regression),
// and for a CSV file "table_preparation" (data::TablePreparation::to_json: how raw rows become
// inputs, fitted on the training split).
void write_model_metadata(train::Metadata& meta, const graph::DatasetInfo& info, const InputNormalization& norm,
                          const std::vector<std::string>& class_names,
                          const std::vector<std::string>& feature_names = {},
                          const std::vector<std::string>& vocabulary = {},
                          const data::TablePreparation* preparation = nullptr);

// What kind of file holds the weights: a run checkpoint ("plexus.format" metadata, tensors
// "model.<node>.<param>" and "optim.*") or a weights file (tensors "<node>.<param>").
enum class WeightsKind { Checkpoint, Weights };

struct TrainedModel {
  graph::Graph project;                  // the graph the weights belong to
  graph::DatasetInfo info;               // per-example input shape, classes
  std::vector<std::string> class_names;  // one per class (a text's vocabulary); empty for regression
  std::vector<std::string> feature_names; // a CSV dataset's model inputs, in order; else empty
  // A CSV dataset's: how raw rows become inputs (plexus-cli predict, Try It, evaluation); else null.
  std::shared_ptr<const data::TablePreparation> preparation;
  std::vector<std::string> vocabulary;    // labelled texts' input characters (session::input_vocabulary); else empty
  layers::CompiledGraph compiled;         // weights loaded, in eval mode, on the CPU
  InputNormalization normalization;
  WeightsKind kind = WeightsKind::Checkpoint;
  train::Metadata metadata;              // the file's own metadata (a run's epoch, figures, ...)

  bool classification() const { return compiled.classification; }
  // Raw inputs [N, input shape...] -> the tensor that feeds the loss (class scores / logits, or
  // the regression output), without gradients. Throws ShapeError naming expected vs got.
  Tensor forward(const Tensor& raw) const;
  // The same pass's prediction for every loss node, in compiled.terms order (the primary one at
  // compiled.primary): a reconstruction beside the class scores, from one pass.
  std::vector<Tensor> predictions(const Tensor& raw) const;

 private:
  Tensor model_input(const Tensor& raw) const;  // checked, standardised
};

// An independent copy of `model`: its graph compiled again with a copy of the weights, so another
// thread can run it (the embedding projector) while the original goes on changing.
TrainedModel clone_trained_model(const TrainedModel& model);

struct LoadOptions {
  std::filesystem::path project_dir;  // for the project's relative dataset path
};

// Loads `weights` (either kind) into `project`'s compiled model. Every tensor of the model
// must be in the file with its shape and nothing else: IoError/ShapeError name the file and
// the tensor, and expected versus found shape. The normalisation and class names come from
// the file's metadata, else from the project's dataset (IoError when it cannot be found then,
// saying why it is needed).
TrainedModel load_trained_model(const graph::Graph& project, const std::filesystem::path& weights,
                                const LoadOptions& options = {});

// The model's figures on its project's test split (opened as a run opens it: same seed, same
// split): loss and, for classification, accuracy, top-5, per-class accuracy and the confusion
// matrix, with each example's prediction (a regression's output) when `predictions`. On
// `device`; stops early once `cancelled` is true. IoError/DataError when the dataset cannot be read; ValueError for a
// dataset without a test split (text).
struct TestEvaluation {
  train::EpochEnd figures;                      // eval_* fields
  std::shared_ptr<const data::Dataset> split;   // the test examples, in the order of figures.predicted
  std::shared_ptr<const data::Dataset> train;   // the training split (baselines learn from it)
  std::string dataset_kind;
};
TestEvaluation evaluate_on_test(TrainedModel& model, const LoadOptions& options, int64_t batch_size = 1000,
                                Device device = Device::cpu(), bool predictions = false,
                                const std::atomic<bool>* cancelled = nullptr);

// The project a run checkpoint holds (metadata "project"), parsed; nullopt for a file without
// one (a weights file). Throws IoError for a file that is not safetensors or whose project text
// does not parse.
std::optional<graph::Graph> project_in_checkpoint(const std::filesystem::path& file);

}  // namespace plexus::session
