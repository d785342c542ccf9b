// plexus-cli: headless front end for Plexus. Links plexus_core only (no Qt): it parses the
// command line and wires core pieces together; training itself is core::train::Trainer, every
// run is built by core::session::make_training_run (session/run.h) and saved by
// session::RunCheckpoints, exactly as the GUI's Train button does. main dispatches through the
// command table (cli/command.h); each command is a file of app/cli/.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"

using namespace plexus;
using namespace plexus::cli;

namespace {

void print(const std::string& text, std::FILE* to) { std::fwrite(text.data(), 1, text.size(), to); }

}  // namespace

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "";
  const std::vector<std::string> rest(argv + std::min(argc, 2), argv + argc);
  const Command* command = find_command(name);
  try {
    if (name == "-h" || name == "--help" || name == "--man" || name == "-V" || name == "--version") {
      if (!rest.empty()) throw UsageError{"unexpected argument '" + rest[0] + "'"};
      if (name == "-V" || name == "--version") std::printf("plexus-cli %s\n", PLEXUS_VERSION);
      else print(name == "--man" ? man_page() : usage(), stdout);
      return 0;
    }
    if (name.empty()) throw UsageError{"no command given"};
    if (!command)
      throw UsageError{name.starts_with("-") ? "unknown option " + name : "unknown command '" + name + "'"};
    const Args args(rest, shape_of(*command));
    if (args.has("--help")) {
      print(command_help(*command), stdout);
      return 0;
    }
    return command->run(args);
  } catch (const UsageError& e) {
    // One line, as a shell user expects: what was wrong, and where the usage is.
    std::fprintf(stderr, "plexus-cli: %s; see plexus-cli %s--help\n", e.message.c_str(),
                 command ? (command->name + " ").c_str() : "");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plexus-cli: %s\n", e.what());
    return 1;
  }
}
