#pragma once
// PyTorch code export of a trained model (`plexus-cli export FILE --checkpoint C --pytorch
// OUT.py`, File > Export > PyTorch code): one self-contained Python file that needs only the
// standard library and torch (1.13 or later):
//   - INPUT_SHAPE, CLASS_NAMES, INPUT_MEAN, INPUT_STD and standardise(x): the run's input
//     standardisation, (x - mean) / std per channel (dim 1) or one pair for all;
//   - class <Project>(nn.Module): each node with weights or a torch.nn equivalent a submodule
//     named after its id, made in __init__; forward(x) takes raw inputs [N, INPUT_SHAPE...]
//     (what the dataset reader yields: images pixel / 255; a table's rows prepared as
//     `predict --prepared-csv` writes them), standardises them, then computes every node the
//     loss nodes' predictions need in topological order, each by its layer type's PyTorch rule
//     (layers/code_rules.h), and returns the tensor that feeds the loss (with several loss
//     nodes a tuple, one per loss in graph order);
//   - read_safetensors(path) and load_weights(model, path): a run checkpoint or weights file
//     read with the standard library, its "<node id>.<param>" tensors (a checkpoint's
//     "model."-prefixed ones) loaded into the submodules; any tensor left over or missing is an
//     error naming it;
//   - run as a script, `python3 OUT.py WEIGHTS`, it loads the weights and prints the model's
//     output for a batch of zeros.
// A node without a rule, or one its rule cannot express exactly, throws ValueError naming the
// node and why; nothing is written then.
#include <cstddef>
#include <filesystem>
#include <string>

#include "session/trained_model.h"

namespace plexus::exporter {

struct CodeOptions {
  std::string name;  // the project's name: the class is its CamelCase ("mnist_mlp" -> MnistMlp); "" = Model
};

struct CodeSummary {
  std::string class_name;
  size_t submodules = 0, lines = 0, bytes = 0;
};

// The file's text.
std::string pytorch_code(const session::TrainedModel& model, const CodeOptions& options = {},
                         CodeSummary* summary = nullptr);

// pytorch_code written atomically to `out` (an existing file stays as it was on failure).
CodeSummary export_pytorch(const session::TrainedModel& model, const std::filesystem::path& out,
                           const CodeOptions& options = {});

}  // namespace plexus::exporter
