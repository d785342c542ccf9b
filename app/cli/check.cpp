#include "cli/command.h"

#include <algorithm>
#include <cstdio>

#include "cli/project_files.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "graph/sweep_settings.h"
#include "graph/validate.h"
#include "session/run.h"
#include "util/error.h"
#include "util/system_memory.h"

namespace plexus::cli {
namespace {

constexpr const char* kCheckHelp = R"(  Loads the project, describes its dataset (a dataset that cannot be read is a warning:
  the graph is then validated without it), validates the graph (training that would not
  fit in this machine's memory included) and the training settings, and prints every
  problem, one per line ("error fc2.input: ..."), then the shape of every edge
  ("fc1.output -> act.input  [N, 128]") and the memory training needs. --quiet prints the
  problems only.
  Exit status 1 when there is any error (warnings are fine).
)";

int cmd_check(const Args& args) {
  if (args.positional().empty()) throw UsageError{"check needs a project FILE"};
  const std::string file = args.positional()[0];
  const bool quiet = args.has("--quiet");
  const graph::Graph g = graph::load_project(file);

  // The dataset: described when it can be; otherwise a warning, and validation goes on
  // without it (shapes that depend on it stay unknown).
  std::vector<graph::Problem> problems;
  auto warn = [&](std::string m) { problems.push_back({graph::Severity::Warning, "", "", std::move(m)}); };
  std::optional<graph::DatasetInfo> info;
  std::string dataset_line;
  if (g.dataset.kind.empty()) {
    warn("no dataset is bound: shapes that depend on it are unknown");
  } else {
    const bool folder_kind = graph::is_idx_dataset(g.dataset.kind);
    const std::string consequence = folder_kind ? "; training needs it" : ": shapes that depend on it are unknown";
    try {
      graph::check_dataset_values(g.dataset);  // a known kind, settings within range
      const graph::DatasetLocation loc = graph::locate_dataset(g.dataset.path, project_dir(file));
      if (g.dataset.path.empty()) warn("dataset: no path is set (the folder or file with the data)" + consequence);
      else if (!loc.found) warn("dataset '" + g.dataset.path + "' not found (looked in " + loc.looked + ")" + consequence);
      if (loc.found || folder_kind) {  // image datasets are described without reading them
        graph::DatasetBinding b = g.dataset;
        b.path = loc.path.string();
        info = graph::describe_dataset(b, g.training.seed, g.training.validation_fraction);
        dataset_line = g.dataset.kind + " at " + b.path + ": inputs " + shape_text(info->input_shape) + ", " +
                       (info->classes ? std::to_string(info->classes) + " classes" : std::string("regression targets"));
        if (!info->note.empty()) dataset_line += "; " + info->note;
      }
    } catch (const std::exception& e) {
      std::string m = e.what();
      if (!m.starts_with("dataset")) m = "dataset: " + m;
      warn(m + " (shapes that depend on it are unknown)");
    }
  }
  try {
    session::check_training_settings(g.training);
  } catch (const DeviceError& e) {
    warn(std::string("training: ") + e.what());
  } catch (const std::exception& e) {
    problems.push_back({graph::Severity::Error, "", "", e.what()});
  }
  try {
    graph::check_sweep(g);
  } catch (const ValueError& e) {
    problems.push_back({graph::Severity::Error, "", "", e.what()});
  }

  const graph::Validation v = graph::validate(g, info ? &*info : nullptr);
  problems.insert(problems.begin(), v.problems.begin(), v.problems.end());
  std::stable_sort(problems.begin(), problems.end(), [](const graph::Problem& a, const graph::Problem& b) {
    return a.severity == graph::Severity::Error && b.severity != graph::Severity::Error;
  });
  size_t errors = 0, warnings = 0;
  for (const graph::Problem& p : problems) {
    (p.severity == graph::Severity::Error ? errors : warnings) += 1;
    std::printf("%s\n", graph::to_string(p).c_str());
  }
  if (!quiet) {
    if (!dataset_line.empty()) std::printf("dataset: %s\n", dataset_line.c_str());
    std::printf("edges:\n");
    for (size_t i = 0; i < g.edges.size(); ++i) {
      const graph::Edge& e = g.edges[i];
      std::printf("  %s.%s -> %s.%s  %s\n", e.from.node.c_str(), e.from.port.c_str(), e.to.node.c_str(),
                  e.to.port.c_str(), shape_text(v.shapes.edge_shapes[i]).c_str());
    }
    // From the registry's counts, not by compiling: checking a large graph allocates nothing.
    if (v.ok() && info) {
      const uint64_t machine = machine_memory();
      std::printf("memory: about %s to train with batch size %lld%s\n", memory_text(v.memory.bytes).c_str(),
                  (long long)v.memory.batch_size,
                  machine ? (" (this machine has " + memory_text(double(machine)) + ")").c_str() : "");
    }
    std::string summary = std::to_string(g.nodes.size()) + " nodes, " + std::to_string(g.edges.size()) + " edges";
    if (v.ok() && info) summary += ", " + std::to_string(int64_t(v.memory.parameters)) + " trainable parameters";
    std::printf("%s: %s; %zu error%s, %zu warning%s\n", errors ? "FAILED" : "OK", summary.c_str(), errors,
                errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  }
  return errors ? 1 : 0;
}

}  // namespace

Command check_command() {
  return {"check", "check FILE [--quiet]",
          "validate a project file (.plexus): every problem, the shape on every edge",
          [] { return std::string(kCheckHelp); }, {{"--quiet"}, {}, 1}, cmd_check};
}

}  // namespace plexus::cli
