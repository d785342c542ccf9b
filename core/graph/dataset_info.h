#pragma once
// What a dataset binding means for a graph: per-example input and label shapes, the number of
// classes, and the datasets themselves for training.
#include <filesystem>
#include <memory>
#include <string>

#include "data/dataset.h"
#include "data/image_file.h"
#include "data/image_folder.h"
#include "graph/dataset_params.h"
#include "graph/graph.h"
#include "graph/registry.h"

namespace plexus::graph {

// Dataset paths. An absolute path is used as is. A relative path is looked up first in the
// folder of the project file, then in the current directory; the first that exists wins.
// So `"path": "data/mnist"` in examples/mnist_mlp.plexus finds the repository's data/mnist
// when run from the repository root, and `"path": "data/housing.csv"` finds
// examples/data/housing.csv wherever it is run from.
struct DatasetLocation {
  std::filesystem::path path;  // the first candidate that exists; else the project-relative one
  bool found = false;
  std::string looked;          // where it looked, for messages: "examples/data/mnist or ./data/mnist"
};
// `project_dir`: the folder of the project file ("" = the current directory only).
DatasetLocation locate_dataset(const std::string& path, const std::filesystem::path& project_dir);

// A dataset path for the project once it is saved in `to_dir` instead of `from_dir` (Save As): a
// relative path found next to the project in `from_dir` becomes the path of that same dataset
// relative to `to_dir`; any other path (absolute, found in the current directory, not found) is
// kept as it is.
std::string moved_dataset_path(const std::string& path, const std::filesystem::path& from_dir,
                               const std::filesystem::path& to_dir);

// The binding with its path resolved (see locate_dataset). Throws IoError "dataset 'data/mnist'
// not found (looked in ...)" when no candidate exists and `must_exist`.
DatasetBinding resolve_dataset(const DatasetBinding& binding, const std::filesystem::path& project_dir,
                               bool must_exist = true);

// Cheap where it can be: MNIST-style folders are described without reading the images, an image
// folder from its class folders' names alone (their number of examples stays unknown, 0); a CSV
// file is read (its classes come from the data), as is a text file (input and label [seq_len],
// classes the vocabulary's size, examples its windows), and a folder of labelled texts (input
// [max_length], its classes, examples all of them). Throws IoError/DataError naming the file, or
// ValueError for settings out of range (check_dataset_values).
// A CSV file's inputs depend on the preparation fitted on its training split (its categories), so
// it is split as open_dataset splits it, with the project's seed and validation fraction.
DatasetInfo describe_dataset(const DatasetBinding& binding, uint64_t seed = TrainingSettings{}.seed,
                             double validation_fraction = TrainingSettings{}.validation_fraction);

// What an image folder's pictures are prepared to: its height, width, color and fit settings.
data::ImageFormat image_format(const DatasetBinding& binding);

// Three splits, in raw units (nothing standardised: session/ computes that from `train`).
// validation is null when the fraction leaves no examples for it.
struct DatasetSplits {
  std::shared_ptr<const data::Dataset> train, validation, test;  // test: null for text
  DatasetInfo info;  // its examples: all splits together
  std::shared_ptr<const data::ImageFolder> image_folder;  // an image folder's datasets and scan; else null
  // An image folder's files left out (bad_files "skip"): the scan's, then those that failed to
  // decode since, each once. Empty for other kinds.
  std::vector<data::SkippedFile> skipped() const;
};
// MNIST-style: the test file is the test split; `validation_fraction` of the training file,
// drawn with the seed, is the validation split and the rest trains. CSV: a seeded 80/20
// train/test split, then the same validation split of the training part (a CSV split keeps
// its type, data::CsvDataset). Text: split by position (data/text_dataset.h), the first
// 1 - validation_fraction of the characters trains and the rest validates; no test split (null:
// the end of a text is no more independent of its beginning than the validation part is).
// Labelled texts: drawn as for an image folder without test/ or val/ (a split keeps its type,
// data::TextClassDataset). Image folder: its test/ and val/ folders where it has them,
// otherwise drawn as for a CSV file (data::open_image_folder; pictures decoded lazily through
// one bounded cache). Throws ValueError when no training examples would be left.
// A CSV file's features are prepared by `preparation` (a trained model's), else by one fitted on
// the training split (data/table_prep.h).
DatasetSplits open_dataset(const DatasetBinding& binding, uint64_t seed, double validation_fraction,
                           std::shared_ptr<const data::TablePreparation> preparation = nullptr);

// The validation draw's own stream: it does not repeat the CSV's train/test draw.
uint64_t validation_seed(uint64_t seed);

}  // namespace plexus::graph
