#pragma once
// What a dataset binding means for a graph: per-example input and label shapes, the number of
// classes, and the datasets themselves for training.
#include <memory>

#include "data/dataset.h"
#include "graph/graph.h"
#include "graph/registry.h"

namespace plexus::graph {

// Cheap where it can be: MNIST-style folders are described without reading the images (their
// number of examples stays unknown, 0); a CSV file is read (its classes come from the data).
// Throws IoError/DataError naming the file.
DatasetInfo describe_dataset(const DatasetBinding& binding);

struct DatasetSplits {
  std::shared_ptr<const data::Dataset> train, test;
  DatasetInfo info;  // its examples: train and test together
};
// MNIST-style: the train and test files. CSV: a seeded 80/20 split, features standardised with
// the training part's statistics.
DatasetSplits open_dataset(const DatasetBinding& binding, uint64_t seed);

}  // namespace plexus::graph
