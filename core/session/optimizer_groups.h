#pragma once
// The optimizer's parameter groups of a project: the compiled model's parameters with the
// learning rate and weight decay multipliers of the nodes they belong to (lr_mult,
// weight_decay_mult, graph/node_settings.h), for optim::make_optimizer.
//
// A frozen node's parameters are in no group: they keep no optimizer state (nor could the
// optimizer take them, as they need no gradient). Groups follow the model's parameter order, a
// new one starting wherever the multipliers change from one parameter to the next (so x1, x2,
// x1 makes three). The optimizer's parameters are then in the model's order, the frozen ones
// left out, which is how a checkpoint's optimizer state is matched to its model tensors
// (train/partial_load.h), and a project whose nodes all train alike has one group, as before
// nodes had settings: its checkpoints and theirs load alike.
#include <string>
#include <vector>

#include "graph/graph.h"
#include "nn/module.h"
#include "optim/factory.h"

namespace plexus::session {

// Parameters are matched to nodes by their names, "<node id>.<param>"; one of a node `graph`
// lacks trains at the project's rates. ValueError when every node that learns is frozen.
std::vector<optim::ScaledParams> parameter_groups(const graph::Graph& graph, const nn::Module& model);

// How many of the model's parameters train (those of frozen nodes do not), for the CLI and the
// dashboard: "12,340 of 431,080 parameters train", or "all 431,080 parameters train".
std::string trained_parameters_text(const nn::Module& model);

}  // namespace plexus::session
