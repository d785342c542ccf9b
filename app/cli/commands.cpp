#include "cli/command.h"

namespace plexus::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table{check_command(),  train_command(),  lr_find_command(), eval_command(),   predict_command(),
                                          explain_command(),
                                          sample_command(), export_command(), import_command(), import_weights_command(),
                                          runs_command(),   diff_command(),   init_command(),   grad_command(),
                                          layers_command(), devices_command(), sweep_command(), completion_command()};
  return table;
}

const Command* find_command(std::string_view name) {
  for (const Command& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

ArgsShape shape_of(const Command& c) {
  ArgsShape shape = c.args;
  shape.flags.push_back("--help");
  return shape;
}

const char* const kCallForms = "plexus-cli <command> [options]\n"
                               "plexus-cli <command> --help\n"
                               "plexus-cli --help | --man | --version\n";
const char* const kDescription =
    "Headless front end for Plexus, a tool for designing and training neural networks.\n";
const char* const kExitStatus = "0 success, 1 a problem with the input or the run, 2 bad usage.\n";

namespace {

// `text` with every line but the first indented by `indent`.
std::string indented(const std::string& text, const std::string& indent) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size()) out += indent;
  }
  return out;
}

}  // namespace

std::string usage() {
  std::string text = "Usage: " + indented(kCallForms, "       ") + "\n" + kDescription +
                     "\nCommands (plexus-cli <command> --help tells more):\n";
  for (const Command& c : commands()) text += "  " + indented(c.synopsis, "  ") + "\n      " + c.summary + "\n";
  return text + "\nExit status: " + kExitStatus;
}

std::string command_help(const Command& c) { return c.synopsis + "\n" + c.help(); }

}  // namespace plexus::cli
