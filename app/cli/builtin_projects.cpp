#include "cli/builtin_projects.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>  // mkdtemp

#include "data/mnist.h"
#include "graph/dataset_params.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

// A tensor of the old built-ins' Sequential ("model.1.weight") under its project node's name
// ("model.fc1.weight"): position i is the node after the i-th, between the Input (the first
// node) and the loss (the last). Other names stay.
std::string legacy_name(const graph::Graph& project, const std::string& name) {
  static const std::string kModel = "model.";
  const size_t dot = name.find('.', kModel.size());
  if (!name.starts_with(kModel) || dot == std::string::npos) return name;
  const std::string digits = name.substr(kModel.size(), dot - kModel.size());
  if (digits.empty() || digits.size() > 4 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return name;
  const size_t node = std::stoul(digits) + 1;
  if (node + 1 >= project.nodes.size()) return name;
  return kModel + project.nodes[node].id + name.substr(dot);
}

// A folder of its own in the system's temporary folder, removed with everything in it.
struct TempFolder {
  fs::path path;
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "plexus-cli-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw IoError("cannot create a temporary folder in " + fs::temp_directory_path().string());
    path = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
};

}  // namespace

ValueOption builtin_model_option() {
  ValueOption o{"--model"};
  for (const BuiltinProjectText& p : builtin_project_texts()) o.choices.emplace_back(p.name);
  return o;
}

ValueOption builtin_dataset_option() { return {"--dataset", Takes::Text, {"mnist", "fashion-mnist"}}; }

graph::Graph builtin_project(const std::string& name, const Args& args) {
  std::vector<std::string> names;
  for (const BuiltinProjectText& p : builtin_project_texts()) {
    if (p.name != name) {
      names.emplace_back(p.name);
      continue;
    }
    graph::Graph g = graph::parse_project(std::string(p.text), "the built-in model '" + name + "'");
    const std::string kind = args.str("--dataset", "mnist");
    if (!graph::is_idx_dataset(kind))
      throw ValueError("unknown dataset '" + kind + "' (known: " + join(builtin_dataset_option().choices) + ")");
    if (kind != g.dataset.kind) {
      g.dataset = graph::for_kind(g.dataset, kind);
      g.dataset.path = data::MnistDataset::kDebianFashionDir;
    }
    return g;
  }
  throw ValueError("unknown model '" + name + "' (built-in models: " + join(names) + ")");
}

session::TrainedModel load_builtin_model(const graph::Graph& project, const fs::path& checkpoint) {
  bool legacy = false;
  for (const io::SafetensorsEntry& e : io::read_safetensors_header(checkpoint).entries)
    legacy = legacy || legacy_name(project, e.name) != e.name;
  if (!legacy) return session::load_trained_model(project, checkpoint);
  // A copy with the tensors renamed, under the same file name (for messages), loaded as any.
  io::SafetensorsFile file = io::load_safetensors(checkpoint);
  io::NamedTensors renamed;
  for (auto& [name, tensor] : file.tensors)
    if (name.starts_with("model.")) renamed.emplace_back(legacy_name(project, name), tensor);
  const TempFolder folder;
  io::save_safetensors(folder.path / checkpoint.filename(), renamed, file.metadata);
  return session::load_trained_model(project, folder.path / checkpoint.filename());
}

}  // namespace plexus::cli
