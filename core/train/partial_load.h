#pragma once
// Partial loading: a model (and its optimizer) takes, from a source, every tensor whose name
// and shape match, and keeps its own initialisation for the rest. One function behind three
// uses: an edit made while training was paused (the source is the live model and optimizer
// of the run so far), `plexus-cli train FILE --init-from C` and the GUI's "Train from
// Checkpoint (Matching Nodes)…" (the source is a checkpoint or a weights file).
//
// Tensors are matched by state name, "<node id>.<parameter>", so by node id: a node that kept
// its id and its parameter shapes keeps its weights bit for bit, whatever else changed.
//
// Optimizer state is per parameter (optim::ParamState: moments, momentum buffers and the step
// count Adam's bias corrections use). A kept parameter takes the source's state when the
// source has some from an optimizer of the same kind; a reset parameter, or one the source
// never updated, starts fresh (step 0, no moments). There is no optimizer-wide step counter to
// reconcile: the learning-rate schedule and the epoch numbering belong to the run, not to
// this function, and the destination's group hyper-parameters (learning rate, betas, ...)
// stay its own.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nn/module.h"
#include "optim/optimizer.h"

namespace plexus::train {

// What a partial load copies from. The tensors are handles: a live source must not change
// until carry_over has returned.
struct SourceState {
  std::string label;        // where, for reports: "in the checkpoint", "in the weights file", "before the edit"
  nn::NamedTensors tensors; // model state by name, in the source's order
  std::string optimizer;    // the optimizer's kind ("Adam"); "" when the source has no optimizer state
  std::map<std::string, optim::ParamState> optimizer_state;  // by parameter name; those never updated absent
  std::string optimizer_note;  // why a source's optimizer state cannot be used; "" when it can or there is none
};

// The model's state and, with an optimizer over its parameters, that optimizer's state.
SourceState live_state(const nn::Module& model, const optim::Optimizer* optimizer, std::string label);

// A checkpoint (train::save_checkpoint: "model.*" tensors, optimizer state when saved with
// one) or a weights file (train::save_weights). A checkpoint's optimizer state is matched to
// the model tensors it was saved with by order (parameters come first, in the optimizer's
// order, in every Plexus checkpoint); when the shapes say otherwise the state is not used and
// optimizer_note says why. IoError for a file that cannot be read.
SourceState read_state(const std::filesystem::path& file);

struct ResetTensor {
  std::string name;
  Shape shape;                        // here
  std::optional<Shape> source_shape;  // in the source; none when the source has no such tensor
};

struct IgnoredTensor {
  std::string name;
  bool node_here = false;  // the node exists here (it lost or renamed the tensor), else it does not
};

struct CarryReport {
  std::string source;                // SourceState::label
  std::vector<std::string> kept;     // destination tensors copied from the source, in its order
  std::vector<ResetTensor> reset;    // destination tensors left as initialised
  std::vector<IgnoredTensor> ignored;  // source tensors nothing here took
  // Parameters that also took the source's optimizer state; "" in optimizer_note when that
  // was every kept parameter the source had updated.
  int64_t optimizer_carried = 0;
  std::string optimizer_note;

  // For people: "kept 6 tensors (optimizer state of 4); reset fc2.weight ([64, 784] here,
  // [128, 784] in the checkpoint), fc3.bias ([10] here, none in the checkpoint); ignored
  // fc4.weight (no such node here)".
  std::string text() const;
};

// Copies every tensor of `source` whose name and shape match one of model.state() into it
// (bit for bit, onto the model's device), and with `optimizer` (freshly built over the
// model's parameters) the source's optimizer state of the kept parameters. Checks everything
// before changing anything; nothing in it fails once copying has begun.
CarryReport carry_over(const SourceState& source, nn::Module& model, optim::Optimizer* optimizer);

// A new run starting from the matching tensors of a checkpoint or weights file (`plexus-cli
// train --init-from FILE`, the GUI's "Train from Checkpoint (Matching Nodes)…"): read_state,
// then carry_over. Returns the account for people, "initialised from FILE: kept 4 tensors; ...".
std::string init_from(const std::filesystem::path& file, nn::Module& model, optim::Optimizer* optimizer);

}  // namespace plexus::train
