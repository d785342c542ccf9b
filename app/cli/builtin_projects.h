#pragma once
// The built-in models of `train --model` and `eval --model` are built-in projects: project files
// like those of examples/ (mlp and lenet are examples/mnist_mlp.plexus and mnist_lenet.plexus,
// the others lie in resources/projects/), compiled into plexus-cli (app/CMakeLists.txt) and read
// by the project reader, so that they train through session::make_training_run as any project
// file does.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"
#include "graph/graph.h"
#include "session/trained_model.h"

namespace plexus::cli {

struct BuiltinProjectText {
  std::string_view name, text;
};
// Generated from the project files at build time (embed_projects.cmake).
const std::vector<BuiltinProjectText>& builtin_project_texts();

// --model NAME and --dataset KIND of train and eval, offering the built-in projects' names and
// the datasets they train on.
ValueOption builtin_model_option();
ValueOption builtin_dataset_option();

// The built-in project `name` on the dataset --dataset names: mnist (the file's, in data/mnist)
// or fashion-mnist (in /usr/share/datasets/fashion-mnist); --data applies as to any project.
// ValueError for an unknown model or dataset.
graph::Graph builtin_project(const std::string& name, const Args& args);

// `checkpoint` (its metadata "model" names the built-in project) loaded into `project`. The
// built-in models wrote their checkpoints before they were projects with each tensor named by
// its layer's position ("model.1.weight"); such a file loads too: the built-in projects list
// the same layers in the same order between their Input and their loss.
session::TrainedModel load_builtin_model(const graph::Graph& project, const std::filesystem::path& checkpoint);

}  // namespace plexus::cli
