#pragma once
// The command table plexus-cli dispatches through: each command's name, the line that lists it
// in `plexus-cli --help`, its own help (`plexus-cli NAME --help`), the shape of its arguments
// and the function that runs it. Each command lives in a file of its own (check.cpp, train.cpp,
// ...) that defines its entry; commands.cpp puts them in order.
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"

namespace plexus::cli {

struct Command {
  std::string name;
  std::string synopsis;       // "check FILE [--quiet]"; lines of their own for each form
  std::string summary;        // one line, for the list of commands
  std::string (*help)();      // the rest of `NAME --help`: what it does, its options
  ArgsShape args;
  int (*run)(const Args&);
};

Command check_command();
Command train_command();
Command eval_command();
Command predict_command();
Command sample_command();
Command export_command();
Command runs_command();
Command diff_command();
Command init_command();
Command grad_command();
Command layers_command();
Command devices_command();

// Every command, in the order --help lists them.
const std::vector<Command>& commands();
const Command* find_command(std::string_view name);

// `plexus-cli --help`: how to call it, then every command's synopsis and summary.
std::string usage();
// `plexus-cli NAME --help`.
std::string command_help(const Command& c);

}  // namespace plexus::cli
