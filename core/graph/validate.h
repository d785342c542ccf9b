#pragma once
// The validator: every problem of a graph at once, each attached to its node and port and
// said in plain words. The editor shows them on the canvas; `plexus-cli check` prints them;
// the compiler refuses a graph with errors.
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"
#include "graph/inference.h"
#include "graph/memory.h"
#include "graph/problem.h"
#include "graph/registry.h"

namespace plexus::graph {

struct Validation {
  std::vector<Problem> problems;  // errors and warnings, in node order
  InferenceResult shapes;         // edge shapes for the editor, from the same pass
  MemoryEstimate memory;          // what training would hold, from those shapes
  bool ok() const { return !has_errors(problems); }
};

struct ValidationOptions {
  // The memory training may use, in bytes; nullopt = this machine's (machine_memory()), 0 = no
  // check. A graph whose estimate exceeds it is an error, one above half of it a warning.
  std::optional<uint64_t> memory;
};

// `dataset` describes the bound dataset (see dataset_info.h); null when none is bound or it
// cannot be read, in which case shapes that depend on it stay unknown.
Validation validate(const Graph& graph, const DatasetInfo* dataset, const ValidationOptions& options = {});

}  // namespace plexus::graph
