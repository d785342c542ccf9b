#pragma once
// Checkpoints: a model's parameters and buffers, and optionally its optimizer's state, in
// one safetensors file that Python's `safetensors` can read. Tensors are named
// "model.<state name>" (e.g. "model.0.weight") and "optim.<state name>"; the optimizer's
// metadata is stored under "optim.<key>", next to "plexus.format" and any caller metadata.
// A model with frozen parameters (nn::Module::freeze) lists them, comma-separated, under
// "plexus.frozen": the optimizer holds the others, in the model's order (train/partial_load.h
// matches its state to them so).
//
// A checkpoint taken between two batches of a run that carries recurrent state (a run's `last`,
// session/resume.h) also holds that state, as "carried.<name>" (nn::Module::carried_state).
//
// Saving is atomic (temp file, fsync, rename). Loading checks everything first — every model
// tensor present with the expected shape, no unknown model tensors, the optimizer state
// accepted — and changes nothing unless all of it fits; errors name the tensor and the
// expected versus found shape.
#include <filesystem>
#include <map>
#include <string>

#include "nn/module.h"
#include "optim/optimizer.h"

namespace plexus::train {

using Metadata = std::map<std::string, std::string>;

// The names' prefixes in a checkpoint file (above).
inline const std::string kCheckpointModelPrefix = "model.", kCheckpointOptimPrefix = "optim.";
inline const std::string kCheckpointFrozenKey = "plexus.frozen";
inline const std::string kCheckpointCarriedPrefix = "carried.";

void save_checkpoint(const std::filesystem::path& path, const nn::Module& model,
                     const optim::Optimizer* optimizer = nullptr, const Metadata& metadata = {},
                     const nn::NamedTensors& carried = {});

// Returns the caller metadata stored with the checkpoint (keys not starting with "optim."
// or "plexus."). The carried state goes to `carried` when given, else it is left unread.
Metadata load_checkpoint(const std::filesystem::path& path, nn::Module& model, optim::Optimizer* optimizer = nullptr,
                         nn::NamedTensors* carried = nullptr);

// Weights files: a model's parameters and buffers alone, named by their state names with no
// prefix ("fc1.weight"), as `plexus-cli init` writes them and as PyTorch's safetensors
// `save_file(model.state_dict())` would. Loading checks the same way as load_checkpoint —
// every tensor present with the expected shape, nothing unknown, nothing changed unless all
// of it fits — and errors name the file, the tensor and the expected versus found shape.
void save_weights(const std::filesystem::path& path, const nn::Module& model, const Metadata& metadata = {});
Metadata load_weights(const std::filesystem::path& path, nn::Module& model);

}  // namespace plexus::train
