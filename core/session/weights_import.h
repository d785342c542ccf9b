#pragma once
// Importing foreign weights (a PyTorch state_dict saved as safetensors) into a project whose
// node ids and names differ from the file's tensor names: every tensor is matched, and the
// whole account (matched, shape-mismatched, left out, missing) is known before anything is
// changed (`plexus-cli import-weights`, the GUI's Run ▸ Load Weights…).
//
// Matching, in three passes over the project's tensors ("<node id>.<param>", node by node in
// graph order (expected_tensors), each node's parameters then buffers, as PyTorch's
// state_dict orders a module's)
// and the file's (in the order its header lists them: a state_dict's, module registration
// order, when written from it in order):
//   1. exact: the file has the project's name;
//   2. by name: the file's module path ends with the node's id or its name (compared
//      ignoring case, with '.', '-' and ' ' as '_') and the parameter path is the same:
//      "encoder.fc1.weight" or "model.fc1.weight" → fc1.weight; "features.conv_1.bias" →
//      the node named "features.conv 1"; the longest such id or name wins;
//   3. by order: what is left on both sides is aligned in order, most pairs of equal shape
//      (those with the same parameter name preferred), keeping both orders — the module
//      paths of an nn.Sequential ("features.0.weight") meet the project's nodes this way.
//      A header sorted by name (as the `safetensors` package writes it) has lost the
//      state_dict's order; it is ordered back as far as names tell: module paths segment by
//      segment with numbers as numbers, then weight, bias, running statistics, recurrent
//      tensors by layer (named modules stay in alphabetical order, which may not be theirs).
// A name found in passes 1-2 with another shape, and a left-over project tensor facing a
// left-over file tensor of its parameter name and rank between the same order matches, is
// shape-mismatched: nothing is copied into it.
//
// No conversion is needed for PyTorch's tensors: Plexus's layers keep PyTorch's parameter
// names, layouts ([out, in] Linear, [out, in/groups, kh, kw] Conv2d) and gate orders (LSTM
// i, f, g, o; GRU r, z, n in weight_ih_l0 / weight_hh_l0 / bias_ih_l0 / bias_hh_l0), so
// a matched tensor is copied as it is. A tensor the file holds in a dtype that is not
// loaded (PyTorch's I64 num_batches_tracked) is listed as left out; the project's
// num_batches_tracked counts batches, not weights, and is optional: without one from the
// file it stays as initialised.
#include <filesystem>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "io/safetensors.h"
#include "layers/compiler.h"
#include "nn/module.h"
#include "tensor/tensor.h"
#include "train/checkpoint.h"

namespace plexus::session {

// A tensor the project expects: "<node id>.<param path>", with its node's name.
struct ExpectedTensor {
  std::string name;
  Shape shape;
  std::string node_name;  // the node's display name; "" for none
};

// A tensor of the file, in its header's order.
struct FileTensor {
  std::string name;
  Shape shape;
  std::string dtype;     // as stored
  bool loadable = true;  // false: a dtype that is not read (integers, bool)
};

enum class ImportStatus { Matched, ShapeMismatch, LeftOut, Missing };
enum class MatchedBy { None, Exact, Name, Order };

// One row of the account: a project tensor (matched, shape-mismatched or missing) or a file
// tensor nothing took (left out).
struct ImportRow {
  ImportStatus status = ImportStatus::Missing;
  MatchedBy by = MatchedBy::None;
  std::string file_tensor;     // "" for a missing one
  std::string project_tensor;  // "" for a left-out one
  Shape expected;              // the project's shape (not for left out)
  Shape got;                   // the file's shape (not for missing)
  std::string note;            // why, where there is more to say ("dtype I64 is not loaded")
  bool optional = false;       // a missing tensor that can stay as initialised (num_batches_tracked)
};

struct WeightsImportPlan {
  std::vector<ImportRow> rows;  // the project's tensors in its order, then the left-out file tensors in file order

  int64_t count(ImportStatus s) const;
  // Every project tensor matched (or an optional one missing): nothing of the project is left as initialised.
  bool complete() const;
  // One line a tensor: "matched     by name   encoder.fc1.weight -> fc1.weight  [500, 800]", and a summary.
  std::string text() const;
  // {"complete": bool, "matched": n, ..., "tensors": [{"status", "by", "file", "project", "expected", "got", "note"}]}
  std::string json() const;
};

const char* to_text(ImportStatus s);  // "matched", "shape-mismatched", "left out", "missing"
const char* to_text(MatchedBy b);     // "exact", "name", "order", ""

// The matching described above, of names and shapes only.
WeightsImportPlan match_weights(const std::vector<ExpectedTensor>& project, const std::vector<FileTensor>& file);

// The tensors of `project`'s compiled model (its children are its nodes), node by node in the
// order code would build them: depth first, each node's first consumer (by edge order)
// followed before the next, a merge once all its inputs are there. A residual block comes out
// as PyTorch registers one (conv1, bn1, conv2, bn2, then the shortcut's downsample), where the
// compiler's breadth-first order would interleave the branches.
std::vector<ExpectedTensor> expected_tensors(const nn::Module& model, const graph::Graph& project);

// A foreign weights file read for importing: its tensors in header order, those of other
// dtypes listed but not loaded. IoError for a file that is not safetensors.
struct ForeignWeights {
  std::vector<FileTensor> tensors;
  io::SafetensorsFile data;
};
ForeignWeights read_foreign_weights(const std::filesystem::path& file);

// Copies every matched tensor of `plan` from `weights` into `model` (whose state() names the
// project's tensors); the rest stay as they are. Returns how many were copied.
int64_t apply_import(const WeightsImportPlan& plan, const ForeignWeights& weights, nn::Module& model);

// All of the above for a project: compiled with `seed` (its dataset, for the input shapes,
// looked up from `project_dir`, not read), the file read, the plan made; nothing written.
// `plexus-cli import-weights` and Run ▸ Load Weights… both start here.
struct ProjectImport {
  layers::CompiledGraph compiled;  // as initialised
  ForeignWeights foreign;
  WeightsImportPlan plan;
  uint64_t seed = 0;  // of the initialisation the tensors the file does not give keep
};
ProjectImport plan_import(const graph::Graph& project, const std::filesystem::path& project_dir,
                          const std::filesystem::path& weights, uint64_t seed);

// Copies the plan's matched tensors into the compiled model and writes all of its tensors as
// a Plexus weights file (train::save_weights) with `metadata`, "imported_from" (the file's
// name) and "seed" added. Returns how many tensors came from the file.
int64_t save_imported(ProjectImport& import, const std::filesystem::path& weights, const std::filesystem::path& out,
                      train::Metadata metadata = {});

}  // namespace plexus::session
