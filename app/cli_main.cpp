// plexus-cli: headless front end for Plexus. Links plexus_core only (no Qt).
// The subcommands arrive with later issues; for now only --help and --version work.
#include <cstdio>
#include <string_view>

namespace {

constexpr std::string_view kUsage =
    "Usage: plexus-cli <command> [options]\n"
    "       plexus-cli --help | --version\n"
    "\n"
    "Headless front end for Plexus, a tool for designing and training neural networks.\n"
    "\n"
    "Commands (coming soon, not implemented yet):\n"
    "  check   validate a saved network graph\n"
    "  train   train a network on a dataset\n"
    "  eval    evaluate a trained network on a dataset\n"
    "  grad    check analytic gradients against finite differences\n"
    "\n"
    "Options:\n"
    "  -h, --help     print this help and exit\n"
    "  -V, --version  print the version and exit\n";

constexpr std::string_view kCommands[] = {"check", "train", "eval", "grad"};

void print(std::FILE* out, std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), out);
}

int usage_error(std::string_view message, std::string_view arg) {
    std::fprintf(stderr, "plexus-cli: %.*s '%.*s'\n\n", static_cast<int>(message.size()),
                 message.data(), static_cast<int>(arg.size()), arg.data());
    print(stderr, kUsage);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        print(stderr, kUsage);
        return 2;
    }
    const std::string_view arg = argv[1];
    if (arg == "-h" || arg == "--help") {
        if (argc != 2) return usage_error("unexpected argument", argv[2]);
        print(stdout, kUsage);
        return 0;
    }
    if (arg == "-V" || arg == "--version") {
        if (argc != 2) return usage_error("unexpected argument", argv[2]);
        std::printf("plexus-cli %s\n", PLEXUS_VERSION);
        return 0;
    }
    for (std::string_view command : kCommands) {
        if (arg == command) {
            std::fprintf(stderr, "plexus-cli: '%.*s' is not implemented yet\n",
                         static_cast<int>(arg.size()), arg.data());
            return 1;
        }
    }
    if (arg.starts_with('-')) return usage_error("unknown option", arg);
    return usage_error("unknown command", arg);
}
