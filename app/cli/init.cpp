#include "cli/command.h"

#include <cstdio>
#include <filesystem>

#include "cli/project_files.h"
#include "layers/compiler.h"
#include "graph/project.h"
#include "train/checkpoint.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kInitHelp = R"(  Compiles the project with seed S (default: the project's seed) and writes its initial
  parameters and buffers, each under its name "<node id>.<param>" (e.g. "fc1.weight").
)";

int cmd_init(const Args& args) {
  args.require("init", {"--project", "--out"});
  const std::string file = args.str("--project", ""), out = args.str("--out", "");
  const graph::Graph g = graph::load_project(file);
  const uint64_t seed = uint64_t(args.integer("--seed", int64_t(g.training.seed), 0));
  const layers::CompiledGraph c = layers::compile(g, describe_project_dataset(g, file), seed);
  train::save_weights(out, *c.model, {{"project", fs::path(file).filename().string()}, {"seed", std::to_string(seed)}});
  std::printf("wrote %zu tensors (%lld parameters) initialised with seed %llu to %s\n", c.model->state().size(),
              (long long)c.model->num_parameters(), (unsigned long long)seed, out.c_str());
  return 0;
}

}  // namespace

Command init_command() {
  return {"init", "init --project FILE --out W.safetensors [--seed S]",
          "write a project's freshly initialised weights (safetensors)",
          [] { return std::string(kInitHelp); },
          {{}, {{"--project", Takes::Path}, {"--out", Takes::Path}, {"--seed"}}}, cmd_init};
}

}  // namespace plexus::cli
