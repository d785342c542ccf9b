#pragma once
// Blocks from a module hierarchy in node names: nodes named "layer1.0.conv1" and
// "layer1.0.conv2" go into block "0" inside block "layer1", as PyTorch names its submodules.
// What an imported model (export/onnx_import.h) shows of the model it came from.
#include <functional>
#include <string>

#include "graph/graph.h"

namespace plexus::graph {

// Replaces graph.blocks with one block per dotted prefix shared by the node names (a name
// "a.b.c" lies in blocks "a" and "a.b"; a prefix of a single node makes no block). Block ids
// come from `new_id` (given the prefix, it returns an unused id); blocks are collapsed, each
// placed at its members' top-left.
void blocks_from_module_names(Graph& graph, const std::function<std::string(const std::string&)>& new_id);

}  // namespace plexus::graph
