#pragma once
// The command table plexus-cli dispatches through: each command's name, the line that lists it
// in `plexus-cli --help`, its own help (`plexus-cli NAME --help`), the shape of its arguments
// and the function that runs it. The man page (`plexus-cli --man`) and the shell completion
// (`plexus-cli completion bash`) are written from this table too. Each command lives in a file of its own (check.cpp, train.cpp,
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
Command lr_find_command();
Command eval_command();
Command predict_command();
Command explain_command();
Command sample_command();
Command export_command();
Command import_command();
Command runs_command();
Command diff_command();
Command init_command();
Command import_weights_command();
Command grad_command();
Command layers_command();
Command devices_command();
Command sweep_command();
Command completion_command();

// Every command, in the order --help lists them.
const std::vector<Command>& commands();
const Command* find_command(std::string_view name);

// The options of the command line as main parses it: the command's own, and --help.
ArgsShape shape_of(const Command& c);

// What --help and the man page say of plexus-cli as a whole: how it is called (one form a
// line), what it is, what its exit status means.
extern const char* const kCallForms;
extern const char* const kDescription;
extern const char* const kExitStatus;

// `plexus-cli --help`: how to call it, then every command's synopsis and summary.
std::string usage();
// `plexus-cli NAME --help`.
std::string command_help(const Command& c);
// `plexus-cli --man`: the manual page, roff for man(1): the same texts as --help and NAME --help.
std::string man_page();

}  // namespace plexus::cli
