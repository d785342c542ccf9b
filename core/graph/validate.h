#pragma once
// The validator: every problem of a graph at once, each attached to its node and port and
// said in plain words. The editor shows them on the canvas; `plexus-cli check` prints them;
// the compiler refuses a graph with errors.
#include <vector>

#include "graph/graph.h"
#include "graph/inference.h"
#include "graph/problem.h"
#include "graph/registry.h"

namespace plexus::graph {

struct Validation {
  std::vector<Problem> problems;  // errors and warnings, in node order
  InferenceResult shapes;         // edge shapes for the editor, from the same pass
  bool ok() const { return !has_errors(problems); }
};

// `dataset` describes the bound dataset (see dataset_info.h); null when none is bound or it
// cannot be read, in which case shapes that depend on it stay unknown.
Validation validate(const Graph& graph, const DatasetInfo* dataset);

}  // namespace plexus::graph
