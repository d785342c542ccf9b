#include "session/continuation.h"

#include "graph/diff.h"
#include "graph/project.h"
#include "train/checkpoint.h"
#include "util/error.h"

namespace plexus::session {
namespace fs = std::filesystem;

namespace {

std::string edge_text(const graph::Edge& e) {
  return e.from.node + "." + e.from.port + " -> " + e.to.node + "." + e.to.port;
}

}  // namespace

std::string structure_difference(const graph::Graph& graph, const graph::Graph& trained) {
  const graph::GraphDiff d = graph::diff(trained, graph);
  if (!d.removed.empty()) return "the run has node '" + d.removed[0] + "' (" + trained.find(d.removed[0])->type + "), this project does not";
  if (!d.added.empty()) return "this project has node '" + d.added[0] + "' (" + graph.find(d.added[0])->type + "), the run does not";
  for (const graph::NodeChange& c : d.changed) {
    if (c.retyped()) return "node '" + c.id + "' is a " + c.type_after + " here, a " + c.type_before + " in the run";
    if (!c.params.empty())
      return "node '" + c.id + "' (" + c.type_after + "): " + c.params[0].name + " is " + c.params[0].after + " here, " +
             c.params[0].before + " in the run";
  }
  if (!d.edges_removed.empty()) return "the run has the edge " + edge_text(d.edges_removed[0]) + ", this project does not";
  if (!d.edges_added.empty()) return "this project has the edge " + edge_text(d.edges_added[0]) + ", the run does not";
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
