#include "session/continuation.h"

#include "graph/diff.h"
#include "graph/project.h"
#include "session/optimizer_groups.h"
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

  // The run's optimizer took the node's parameters, this project's cannot (they need no
  // gradient here): its state would have nowhere to go.
  for (const graph::Node& n : graph.nodes)
    if (const graph::Node* then = trained.find(n.id); n.frozen && then && !then->frozen)
      throw ValueError("cannot continue the run in " + from.folder.string() + " with " + n.label() +
                       " frozen: the run trained it; start a new run from its checkpoint instead (--init-from)");
  const int done = from.epochs_completed;
  graph.training.epochs += done;
  TrainingRun run = make_training_run(graph, options);
  // The checkpoint's optimizer state is grouped as the run's nodes trained, which this project's
  // may not (a node unfrozen since): it loads into an optimizer grouped as the run's, and each
  // parameter's state goes over from there. The groups' hyper-parameters stay the project's.
  nn::Module& model = *run.compiled.model;
  const std::unique_ptr<optim::Optimizer> as_run =
      optim::make_optimizer(run.settings, parameter_groups(trained, model));
  train::load_checkpoint(final_checkpoint, model, as_run.get());
  for (const Tensor& p : model.parameters())
    if (const optim::ParamState* state = as_run->state(p)) run.optimizer->set_state(p, *state);
  if (run.scheduler) run.scheduler->set_epoch(done);  // the learning rate as if the two runs were one
  run.trainer_options.first_epoch = done + 1;
  return run;
}

}  // namespace plexus::session
