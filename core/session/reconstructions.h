#pragma once
// A model scored against its own input (an autoencoder, or a multi-task model's decoder) shows
// what it makes of its input: after every epoch, kReconstructionExamples validation examples
// beside the model's output for each, both in raw units (train::Reconstructions), for the
// dashboard's pictures and metrics.jsonl.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "session/run.h"

namespace plexus::session {

inline constexpr int64_t kReconstructionExamples = 8;

// The loss (its index in compiled.terms) scored against the input whose prediction can be
// drawn: an image [C, H, W], C 1 or 3, the input's own shape. nullopt when none is.
std::optional<size_t> drawn_reconstruction(const layers::CompiledGraph& compiled, const graph::DatasetInfo& info);

// TrainerOptions::on_epoch_end for such a run: EpochEnd::reconstructions of the first examples
// of its validation split (else its test or training split), from the run's model. Null for a
// run without a drawn reconstruction.
std::function<std::string(train::EpochEnd&)> epoch_reconstructions(const TrainingRun& run);

}  // namespace plexus::session
