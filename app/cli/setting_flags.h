#pragma once
// The training settings (graph/training_params.h) as options of `train`: every row of the table
// is --its-name (underscores as dashes: --warmup-start-factor), its value checked against the
// row's type and range or choices; a yes/no setting is --name or --no-name. The options, their
// help and their checks all come from the table, so a new setting has its option with no line
// here.
#include <string>
#include <vector>

#include "cli/args.h"
#include "graph/graph.h"

namespace plexus::cli {

struct SettingOptions {
  std::vector<ValueOption> with_value;  // --lr, --epochs, ..., with their choices
  std::vector<std::string> switches;    // --nesterov, --no-nesterov, ...
};
const SettingOptions& setting_options();

// The settings given on the command line, over `s`. UsageError for a value that is not of the
// setting's type or out of its range, and for a switch given both ways.
void apply_setting_options(const Args& args, graph::TrainingSettings& s);

// One line (or a few, wrapped) per setting: the option, its doc, its choices or range and its
// default.
std::string setting_options_help();

}  // namespace plexus::cli
