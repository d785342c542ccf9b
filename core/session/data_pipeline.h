#pragma once
// How a project's dataset binding becomes what loaders and a trained model's users need: the
// picture format of an image folder, the augmentation of training batches, the input
// standardisation, the loader threads, and one picture prepared exactly as a run prepares its
// training pictures (plexus-cli predict, the Try It tab).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/image_file.h"
#include "data/text_classes.h"
#include "data/transforms.h"
#include "graph/graph.h"
#include "session/trained_model.h"
#include "tensor/shape.h"

namespace plexus::session {

// The augmentation of training batches the binding asks for (rotation, shift, flip, jitter; see
// data/augment.h), drawing from the loader's per-batch generator mixed with the binding's
// augment seed; null when it asks for none or the kind has no pictures.
data::TransformPtr training_augmentation(const graph::DatasetBinding& binding);

// How a run standardises inputs, computed on its training split: IDX images one mean and std
// over all values; an image folder each channel's over a seeded sample of stats_sample
// pictures; a CSV file each feature's own; a text file or labelled texts none (empty). What
// `graph`'s Inputs read unstandardised (standardize off) keeps its units: none for a whole
// example, mean 0 and std 1 for a table's column.
InputNormalization input_normalization(const graph::Graph& graph, const graph::DatasetBinding& binding,
                                       const data::Dataset& train, uint64_t seed);

// The characters a dataset's input ids stand for, where they are not its classes: a labelled-text
// split's vocabulary (id k + 1 is symbol k, 0 pads; data/text_classes.h). Empty for other
// datasets (a text file's vocabulary is its class names).
std::vector<std::string> input_vocabulary(const data::Dataset& dataset);

// Loader threads assembling batches: an image folder's loader_threads (decoding is the work),
// one for data already in memory.
int64_t loader_workers(const graph::DatasetBinding& binding);

// Batches of `batch_size` assembled ahead of the trainer. For data in memory a deep queue, about
// kInMemoryPrefetchRows examples (at least 2 batches): its loader thread shares the cores with
// the training threads and runs in bursts, when the scheduler gives it a turn (every few
// milliseconds on a busy machine), while a small model's step takes a fraction of one. For an
// image folder 2, its workers decoding on cores of their own.
int64_t loader_prefetch(const graph::DatasetBinding& binding, int64_t batch_size);
inline constexpr int64_t kInMemoryPrefetchRows = 4096;

// One picture as a model input [C, H, W] in raw units, prepared as the binding's training
// pictures are: an image folder's format (size, color, fit, whole pixel levels), or for the
// IDX kinds data::image_to_input to `chw`.
Tensor picture_input(const data::Image& picture, const graph::DatasetBinding& binding, const Shape& chw);

// How typed text becomes `model`'s input (data::encode_typed_text), as its training encoded its
// examples: its vocabulary, its input length and its project's lowercase setting. nullopt for a
// model of another dataset kind than labelled texts.
std::optional<data::TextEncoding> text_encoding(const TrainedModel& model);

}  // namespace plexus::session
