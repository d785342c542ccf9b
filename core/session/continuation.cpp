#include "session/continuation.h"

#include <algorithm>

#include "graph/project.h"
#include "graph/registry.h"
#include "train/checkpoint.h"
#include "util/error.h"

namespace plexus::session {
namespace fs = std::filesystem;

namespace {

std::string edge_text(const graph::Edge& e) {
  return e.from.node + "." + e.from.port + " -> " + e.to.node + "." + e.to.port;
}

// The first parameter whose value differs, with the type's defaults filled in; "" when none.
std::string parameter_difference(const graph::Node& here, const graph::Node& there) {
  const graph::LayerType* type = graph::Registry::instance().find(here.type);
  if (!type) return here.params == there.params ? "" : "its parameters differ";
  const graph::Params a(here, type->params), b(there, type->params);
  for (const graph::ParamSpec& spec : type->params)
    if (a.value(spec.name) != b.value(spec.name))
      return spec.name + " is " + graph::to_string(a.value(spec.name)) + " here, " + graph::to_string(b.value(spec.name)) +
             " in the run";
  return "";
}

}  // namespace

std::string structure_difference(const graph::Graph& graph, const graph::Graph& trained) {
  for (const graph::Node& n : trained.nodes)
    if (!graph.find(n.id)) return "the run has node '" + n.id + "' (" + n.type + "), this project does not";
  for (const graph::Node& n : graph.nodes) {
    const graph::Node* t = trained.find(n.id);
    if (!t) return "this project has node '" + n.id + "' (" + n.type + "), the run does not";
    if (t->type != n.type) return "node '" + n.id + "' is a " + n.type + " here, a " + t->type + " in the run";
    if (const std::string d = parameter_difference(n, *t); !d.empty()) return "node '" + n.id + "' (" + n.type + "): " + d;
  }
  const auto missing_from = [](const std::vector<graph::Edge>& edges, const graph::Edge& e) {
    return std::find(edges.begin(), edges.end(), e) == edges.end();
  };
  for (const graph::Edge& e : trained.edges)
    if (missing_from(graph.edges, e)) return "the run has the edge " + edge_text(e) + ", this project does not";
  for (const graph::Edge& e : graph.edges)
    if (missing_from(trained.edges, e)) return "this project has the edge " + edge_text(e) + ", the run does not";
  return "";
}

TrainingRun make_continued_run(const RunRecord& from, graph::Graph& graph, const RunOptions& options) {
  const fs::path final_checkpoint = from.folder / "final.safetensors";
  if (!from.has_final)
    throw ValueError("cannot continue the run in " + from.folder.string() + ": it has no final checkpoint (" +
                     (from.status == RunStatus::Failed ? "it failed: " + from.message
                                                       : "the run " + to_string(from.status)) +
                     ")");
  const graph::Graph trained = graph::load_project(from.folder / kRunProjectFile);
  if (const std::string d = structure_difference(graph, trained); !d.empty())
    throw ValueError("cannot continue the run in " + from.folder.string() + " with this project: " + d);

  const int done = from.epochs_completed;
  graph.training.epochs += done;
  TrainingRun run = make_training_run(graph, options);
  train::load_checkpoint(final_checkpoint, *run.compiled.model, run.optimizer.get());
  // The checkpoint brought back the old run's learning rate; the project's settings decide it.
  if (run.scheduler) run.scheduler->set_epoch(done);
  else
    for (optim::ParamGroup& g : run.optimizer->param_groups()) g.lr = graph.training.lr;
  run.trainer_options.first_epoch = done + 1;
  return run;
}

}  // namespace plexus::session
