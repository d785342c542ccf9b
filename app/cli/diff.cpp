#include "cli/command.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "graph/diff.h"
#include "graph/project.h"
#include "session/run_log.h"
#include "util/error.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kDiffHelp = R"(  Compares two projects: A and B are project files, or run folders (their project.plexus, the
  project as it trained). Prints one line per difference, B against A: nodes added, removed,
  retyped or renamed ("Linear 'fc1': out_features 128 → 64"; parameters with the type's
  defaults filled in, so one set to its default is no change) or trained otherwise
  ("Linear 'fc1': lr_mult 1 → 0"), wires added and removed, and dataset and training
  settings ("training.lr 0.1 → 0.01"); or "no differences". Positions and the editor's view
  are not compared. --json prints one JSON object: "summary", "added", "removed", "changed"
  (each with its "params" and "settings"), "edges_added", "edges_removed", "settings" and
  "same_structure" (the nodes, their types and parameters and the wires are the same).
  Exit status 0 whether or not they differ, 1 when A or B cannot be read.
)";

// A project file, or a run folder's project.plexus.
graph::Graph load_compared(const std::string& path) {
  const fs::path p = path;
  if (!fs::is_directory(p)) return graph::load_project(p);
  if (!fs::is_regular_file(p / session::kRunProjectFile))
    throw IoError(path + " is not a run folder: it holds no " + session::kRunProjectFile);
  return graph::load_project(p / session::kRunProjectFile);
}

nlohmann::json changes_json(const std::vector<graph::ParamChange>& changes) {
  nlohmann::json out = nlohmann::json::array();
  for (const graph::ParamChange& c : changes) out.push_back({{"name", c.name}, {"before", c.before}, {"after", c.after}});
  return out;
}

nlohmann::json edges_json(const std::vector<graph::Edge>& edges) {
  nlohmann::json out = nlohmann::json::array();
  for (const graph::Edge& e : edges)
    out.push_back({{"from", {e.from.node, e.from.port}}, {"to", {e.to.node, e.to.port}}});
  return out;
}

nlohmann::json nodes_json(const std::vector<std::string>& ids, const graph::Graph& g) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& id : ids) {
    const graph::Node& n = *g.find(id);
    out.push_back({{"id", n.id}, {"type", n.type}, {"name", n.name}});
  }
  return out;
}

int cmd_diff(const Args& args) {
  if (args.positional().size() != 2) throw UsageError{"diff needs two projects or run folders, A and B"};
  const graph::Graph a = load_compared(args.positional()[0]), b = load_compared(args.positional()[1]);
  const graph::GraphDiff d = graph::diff(a, b);
  if (args.has("--json")) {
    nlohmann::json changed = nlohmann::json::array();
    for (const graph::NodeChange& c : d.changed)
      changed.push_back({{"id", c.id},
                         {"type_before", c.type_before},
                         {"type_after", c.type_after},
                         {"name_before", c.name_before},
                         {"name_after", c.name_after},
                         {"params", changes_json(c.params)},
                         {"settings", changes_json(c.settings)}});
    const nlohmann::json j{{"summary", graph::summary(d)},
                           {"same_structure", d.same_structure()},
                           {"added", nodes_json(d.added, b)},
                           {"removed", nodes_json(d.removed, a)},
                           {"changed", changed},
                           {"edges_added", edges_json(d.edges_added)},
                           {"edges_removed", edges_json(d.edges_removed)},
                           {"settings", changes_json(d.settings)}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  const std::vector<std::string> lines = graph::describe(d, a, b);
  if (lines.empty()) std::printf("no differences\n");
  for (const std::string& line : lines) std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace

Command diff_command() {
  return {"diff", "diff A B [--json]",
          "what changed from project or run A to B: nodes, parameters, wires, settings",
          [] { return std::string(kDiffHelp); }, {{"--json"}, {}, 2}, cmd_diff};
}

}  // namespace plexus::cli
