#include "cli/command.h"

namespace plexus::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table{check_command(),  train_command(), eval_command(),   predict_command(),
                                          sample_command(), export_command(), runs_command(),  diff_command(),
                                          init_command(),   grad_command(),   layers_command(), devices_command()};
  return table;
}

const Command* find_command(std::string_view name) {
  for (const Command& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

std::string usage() {
  std::string text = R"(Usage: plexus-cli <command> [options]
       plexus-cli <command> --help
       plexus-cli --help | --version

Headless front end for Plexus, a tool for designing and training neural networks.

Commands (plexus-cli <command> --help tells more):
)";
  for (const Command& c : commands()) {
    std::string synopsis = c.synopsis;
    for (size_t at = 0; (at = synopsis.find('\n', at)) != std::string::npos; at += 3) synopsis.replace(at, 1, "\n  ");
    text += "  " + synopsis + "\n      " + c.summary + "\n";
  }
  return text + "\nExit status: 0 success, 1 a problem with the input or the run, 2 bad usage.\n";
}

std::string command_help(const Command& c) { return c.synopsis + "\n" + c.help(); }

}  // namespace plexus::cli
