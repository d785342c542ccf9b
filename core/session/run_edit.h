#pragma once
// Editing a run's graph while it is paused (the GUI's Pause, edit, Resume): the run goes on
// with the edited model from where it stopped, in the same run folder and with the same epoch
// and batch numbering, keeping the weights and optimizer state of every node whose parameter
// shapes did not change (by node id, train/partial_load.h) and initialising the rest.
//
// What may change: layers' parameters, nodes and edges (names and positions too). What may
// not: the dataset binding and the training settings (batch size, optimizer, learning rate,
// schedule, epochs, seed, device, ...): the run is in the middle of their data order, their
// optimizer and their schedule. They are for a new run, or for continuing this one once it has
// ended (session/continuation.h). Nor may an edit turn a classification into a regression or
// back: the run's log and checkpoints score one kind.
#include <string>

#include "graph/graph.h"
#include "session/run.h"
#include "train/events.h"
#include "train/partial_load.h"
#include "train/trainer.h"

namespace plexus::session {

// "" when `edited` may replace `trained` in a paused run; else why not, for people ("the
// dataset and training settings cannot change during a run: training.lr 0.05 → 0.01; undo
// that, or stop the run and train anew").
std::string edit_refusal(const graph::Graph& trained, const graph::Graph& edited);

struct EditedRun {
  TrainingRun run;
  train::CarryReport carried;
  train::GraphEdit event;  // at the position, with what changed and how the weights came over
};

// The run of `edited` that goes on at `at` where `live` (the run of `trained`) stopped: compiles
// it (ValueError listing the graph's errors) for the live run's dataset, builds its optimizer and
// schedule (at the epoch in progress), carries the live model's and optimizer's matching tensors
// over, and shares the live run's data (the dataset and batch size are the same). `live` does
// not change: on an error it goes on as it was. The loaders are the live run's too, handed over
// with hand_over_loaders once the caller commits to the edit.
EditedRun make_edited_run(const graph::Graph& trained, const graph::Graph& edited, const TrainingRun& live,
                          const train::RunPosition& at);
void hand_over_loaders(TrainingRun& from, TrainingRun& to) noexcept;

}  // namespace plexus::session
