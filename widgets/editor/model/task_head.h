#pragma once
// The output head of a graph fitted to its dataset's task, for when a CSV file's target changes
// kind (choosing a target in the column table): a loss fed the labels `y` that does not suit the
// task becomes the one that does — CrossEntropy for classes, MSE for a regression — and the
// Linear layer feeding it gets as many outputs as the task needs (a score per class, or one
// value). Any other head (NLL after LogSoftmax, a Huber loss on a regression) is the user's
// choice and left alone.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace plexus::widgets {

// The nodes to change, each as it becomes (same id); none when the head fits already.
std::vector<graph::Node> fittedHead(const graph::Graph& graph, const std::string& task, int64_t classes);

}  // namespace plexus::widgets
