#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "cli/project_files.h"
#include "graph/project.h"
#include "session/weights_import.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kImportWeightsHelp =
    R"(  Loads weights whose names differ from the project's, such as a PyTorch state_dict saved
  as safetensors, and writes them as a Plexus weights file, usable by `train --init-from`,
  `eval --checkpoint` and `predict --checkpoint`. Every tensor of the file and of the project
  is matched first: by exact name; by name, where the file's module path ends with a node's
  id or name and the parameter names agree ("model.fc1.weight" -> fc1.weight); then what is
  left by order and shape ("features.0.weight" -> conv1.weight). The report lists every
  tensor as matched (how, from -> to), shape-mismatched (expected vs got), left out (in the
  file, unused) or missing (the project's, not in the file) before anything is written.
  PyTorch's layouts and LSTM/GRU gate orders are Plexus's own: tensors are copied as they are.
  Without --partial nothing is written (exit status 1) when a project tensor is missing or
  shape-mismatched; BatchNorm's num_batches_tracked may be missing (PyTorch stores it as
  I64, which is listed as left out).
  --out W              the Plexus weights file to write (not needed with --dry-run)
  --partial            write even when some project tensors are missing or mismatched:
                       those keep their initialisation (seeded with --seed)
  --seed S             the seed of that initialisation          [the project's seed]
  --dry-run            report only; write nothing
  --json               the report as JSON ({"complete", counts, "tensors": [...]})
)";

int cmd_import_weights(const Args& args) {
  if (args.positional().size() != 2)
    throw UsageError{"import-weights needs the project and the weights file: import-weights FILE WEIGHTS --out W"};
  const bool dry_run = args.has("--dry-run");
  if (!dry_run) args.require("import-weights", {"--out"});
  const std::string file = args.positional()[0], weights = args.positional()[1];
  const graph::Graph g = graph::load_project(file);
  const uint64_t seed = uint64_t(args.integer("--seed", int64_t(g.training.seed), 0));
  session::ProjectImport import = session::plan_import(g, project_dir(file), weights, seed);
  const session::WeightsImportPlan& plan = import.plan;
  const bool writes = !dry_run && (plan.complete() || args.has("--partial"));
  std::fputs((args.has("--json") ? plan.json() : plan.text()).c_str(), stdout);
  if (writes) {
    const std::string out = args.str("--out", "");
    const int64_t copied =
        session::save_imported(import, weights, out, {{"project", fs::path(file).filename().string()}});
    if (!args.has("--json")) std::printf("wrote %lld imported tensors to %s\n", (long long)copied, out.c_str());
  } else if (!dry_run) {
    std::fprintf(stderr,
                 "plexus-cli: nothing written: %s does not hold every tensor of %s with its shape (--partial "
                 "writes what matched, the rest as initialised)\n",
                 weights.c_str(), file.c_str());
  }
  return plan.complete() || args.has("--partial") ? 0 : 1;
}

}  // namespace

Command import_weights_command() {
  return {"import-weights",
          "import-weights FILE WEIGHTS --out W.safetensors [--partial] [--seed S] [--dry-run] [--json]",
          "load weights named otherwise (a PyTorch state_dict) into a project's weights file",
          [] { return std::string(kImportWeightsHelp); },
          {{"--partial", "--dry-run", "--json"}, {{"--out", Takes::Path}, {"--seed"}}, 2},
          cmd_import_weights};
}

}  // namespace plexus::cli
