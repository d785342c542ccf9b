#pragma once
// What the commands share about project files: where a project's relative dataset path is
// looked up, its dataset's shapes, this machine's options (--device, --data, --threads), and the
// project of a trained model (FILE, or the one a run checkpoint holds).
#include <filesystem>
#include <optional>
#include <string>

#include "cli/args.h"
#include "graph/dataset_info.h"
#include "graph/graph.h"

namespace plexus::cli {

// The folder relative dataset paths are looked up in first.
std::filesystem::path project_dir(const std::string& file);

// The project's dataset description, for commands that need its shapes (init, grad). A
// folder dataset is described without reading it; a CSV file is read.
graph::DatasetInfo describe_project_dataset(const graph::Graph& g, const std::string& file);

// "[N, 1, 28, 28]", or "?" for a shape not known.
std::string shape_text(const std::optional<Shape>& s);

// --device, --data and --threads of train and eval: where this machine runs the project.
void apply_machine_options(const Args& args, graph::Graph& g);

// The project of `eval`, `predict` and `sample`: FILE, else the one a run checkpoint holds.
// `dir` is where its relative dataset path is looked up first.
struct ProjectSource {
  graph::Graph graph;
  std::filesystem::path dir;
  std::string name;                 // for people
  std::optional<std::string> file;  // FILE, when given
  std::string stem;                 // FILE's stem, or <name> of the <name>.runs folder; "" when unknown
};

// FILE when given, else the project `checkpoint` holds; nullopt when it holds none.
std::optional<ProjectSource> find_project(const std::optional<std::string>& file, const std::string& checkpoint);

}  // namespace plexus::cli
