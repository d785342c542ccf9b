#include "cli/command.h"

#include <cstdio>

#include "graph/layer_docs.h"

namespace plexus::cli {
namespace {

constexpr const char* kLayersHelp = R"(  Every layer type of the registry: ports, parameters, defaults, ranges; --markdown writes
  docs/layers.md's format.
)";

int cmd_layers(const Args& args) {
  const std::string text = args.has("--markdown") ? graph::layers_markdown() : graph::layers_text();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

Command layers_command() {
  return {"layers", "layers [--markdown]",
          "list every layer type: ports, parameters, defaults, ranges",
          [] { return std::string(kLayersHelp); }, {{"--markdown"}}, cmd_layers};
}

}  // namespace plexus::cli
