#include "cli/project_files.h"

#include "graph/project.h"
#include "session/trained_model.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

// A run's checkpoint lies in <project folder>/<name>.runs/<run>/ (session/run_folder.h): that
// <name>.runs folder; "" for a checkpoint elsewhere.
fs::path runs_folder(const fs::path& checkpoint) {
  const fs::path runs = checkpoint.parent_path().parent_path();
  return runs.filename().string().ends_with(".runs") ? runs : fs::path();
}

}  // namespace

fs::path project_dir(const std::string& file) { return fs::path(file).parent_path(); }

graph::DatasetInfo describe_project_dataset(const graph::Graph& g, const std::string& file) {
  return graph::describe_dataset(graph::resolve_dataset(g.dataset, project_dir(file), /*must_exist=*/false),
                                 g.training.seed, g.training.validation_fraction);
}

std::string shape_text(const std::optional<Shape>& s) {
  if (!s) return "?";
  std::string out = "[N";
  for (int64_t d : *s) out += ", " + std::to_string(d);
  return out + "]";
}

void apply_machine_options(const Args& args, graph::Graph& g) {
  if (args.has("--device")) g.training.device = device_option(args).str();
  // A --data path comes from the command line: it is relative to the current directory.
  if (args.has("--data")) g.dataset.path = fs::absolute(args.str("--data", "")).lexically_normal().string();
  apply_threads_option(args);
}

std::optional<ProjectSource> find_project(const std::optional<std::string>& file, const std::string& checkpoint) {
  if (file) return ProjectSource{graph::load_project(*file), project_dir(*file), *file, file, fs::path(*file).stem()};
  if (std::optional<graph::Graph> g = session::project_in_checkpoint(checkpoint)) {
    // Outside a project's runs, relative dataset paths are looked up in the current directory.
    const fs::path runs = runs_folder(checkpoint);
    return ProjectSource{std::move(*g), runs.parent_path(), "the project in " + checkpoint, std::nullopt,
                         runs.stem().string()};
  }
  return std::nullopt;
}

}  // namespace plexus::cli
