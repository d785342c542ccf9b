#pragma once
// Continuing a past run: from its final checkpoint (model and optimizer state), with its epoch
// numbering, and with the settings of the project as it is now (learning rate, batch size, the
// number of epochs to add). `plexus-cli train FILE --continue RUN_DIR` and the dashboard's
// "Continue from This Run" both start here.
#include "graph/graph.h"
#include "session/run.h"
#include "session/run_log.h"

namespace plexus::session {

// "" when `graph` has the layers (ids, types, parameters with their defaults filled in) and the
// edges of `trained`; else the first difference, for a message ("node 'fc1' (Linear):
// out_features is 64 here, 128 in the run"). Names, positions, the dataset and the training
// settings may differ.
std::string structure_difference(const graph::Graph& graph, const graph::Graph& trained);

// Builds the run that continues `from` for graph.training.epochs more epochs, as
// make_training_run does, after checking that it can: `from` has a final checkpoint and its
// project.plexus the structure of `graph` (ValueError naming the first difference otherwise).
// graph.training.epochs becomes the number of the last epoch (from.epochs_completed + the epochs
// to add) and the Trainer starts at from.epochs_completed + 1; the final checkpoint is loaded
// with its optimizer state (an error names a tensor that does not fit), each parameter's going
// on whatever the groups the nodes' lr_mult and weight_decay_mult make here and made in the run;
// the hyper-parameters are the project's, the learning rate its schedule at that epoch, as if
// the two runs were one.
TrainingRun make_continued_run(const RunRecord& from, graph::Graph& graph, const RunOptions& options = {});

}  // namespace plexus::session
