#include "session/run_edit.h"

#include "graph/compute.h"
#include "graph/diff.h"
#include "session/class_balance.h"
#include "session/text_sampling.h"
#include "util/error.h"

namespace plexus::session {

std::string edit_refusal(const graph::Graph& trained, const graph::Graph& edited) {
  const graph::GraphDiff d = graph::diff(trained, edited);
  if (d.settings.empty()) return "";
  std::string changes;
  for (const graph::ParamChange& c : d.settings)
    changes += (changes.empty() ? "" : ", ") + c.name + " " + c.before + " → " + c.after;
  return "the dataset and training settings cannot change during a run: " + changes +
         "; undo that, or stop the run and train anew";
}

EditedRun make_edited_run(const graph::Graph& trained, const graph::Graph& edited, const TrainingRun& live,
                          const train::RunPosition& at) {
  if (const std::string why = edit_refusal(trained, edited); !why.empty()) throw ValueError(why);
  EditedRun out;
  TrainingRun& run = out.run;
  run.settings = live.settings;
  const graph::TrainingSettings& s = run.settings;
  run.compiled = layers::compile(balanced_graph(edited, s, live.class_counts), live.data.info, s.seed);
  if (run.compiled.classification != live.compiled.classification)
    throw ValueError(std::string("the edited graph's loss makes it a ") +
                     (run.compiled.classification ? "classification" : "regression") + ", the run trains a " +
                     (live.compiled.classification ? "classification" : "regression") +
                     ": a run keeps its kind of loss");
  run.compiled.model->to(parse_device(s.device));
  build_optimizer(run, edited, live.train_loader->size());
  if (run.scheduler) run.scheduler->set_epoch(at.epoch - 1);  // the epochs done so far
  // What is cheap to share or copy; the loaders come with hand_over_loaders.
  run.dataset = live.dataset;
  run.data = live.data;
  run.normalization = live.normalization;
  run.class_names = live.class_names;
  run.feature_names = live.feature_names;
  run.preparation = live.preparation;
  run.vocabulary = live.vocabulary;
  run.class_counts = live.class_counts;
  run.trainer_options = live.trainer_options;
  run.trainer_options.plateau = run.plateau.get();  // the new optimizer's
  set_loss(run.trainer_options, run.compiled);
  observe_nodes(run, edited);
  run.trainer_options.flops_per_example =
      graph::estimate_compute(graph::GraphIndex(edited), run.compiled.validation.shapes).training_flops;
  set_epoch_end(run, edited);  // of the new model

  out.carried = train::carry_over(train::live_state(*live.compiled.model, live.optimizer.get(), "before the edit"),
                                  *run.compiled.model, run.optimizer.get());
  out.event.epoch = at.epoch;
  out.event.batch = at.batch;
  out.event.batches = live.train_loader->size();
  out.event.changes = graph::describe(graph::diff(trained, edited), trained, edited);
  out.event.kept = int64_t(out.carried.kept.size());
  out.event.reset = int64_t(out.carried.reset.size());
  out.event.carried = out.carried.text();
  return out;
}

void hand_over_loaders(TrainingRun& from, TrainingRun& to) noexcept {
  to.train_loader = std::move(from.train_loader);
  to.eval_loader = std::move(from.eval_loader);
  to.test_loader = std::move(from.test_loader);
}

}  // namespace plexus::session
