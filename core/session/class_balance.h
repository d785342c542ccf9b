#pragma once
// Imbalanced classes (graph::TrainingSettings::class_balance): the training split's examples per
// class, and from them either class weights for the loss ("weights") or a weight per example for
// the training loader's draws ("sampler"). make_training_run and make_edited_run apply them, so
// the GUI, plexus-cli and the C++ API all train the same way.
//
// Balanced weights are scikit-learn's class_weight='balanced': class c weighs n / (k · count_c),
// n the training examples and k the classes that have any, so the training examples' weights
// still sum to n (a mean weight of 1, the loss's scale unchanged). A class without a training
// example (all of it in the validation or test split, or an empty class folder) weighs 0: the
// model cannot learn it either way, and an error would refuse datasets that are otherwise fine.
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "graph/graph.h"

namespace plexus::session {

// How many examples of each class 0..classes-1 `train` has (its targets only: no input is read);
// IndexError for a target that is no class index.
std::vector<int64_t> training_class_counts(const data::Dataset& train, int64_t classes);

// n / (k · count_c) per class, 0 for a class without examples (see above). ValueError when no
// class has any.
std::vector<double> balanced_class_weights(const std::vector<int64_t>& counts);

// 1 / count of each example's class, for a loader drawing every class equally often
// (data::DataLoaderOptions::sample_weights); `targets` are the split's class indices in order.
std::vector<double> balanced_sample_weights(const std::vector<float>& targets, const std::vector<int64_t>& counts);

// ValueError unless class_balance can apply to this dataset: a classification dataset (classes >
// 0) of one label per example, so no regression target and no text stream (whose targets are
// next characters). Nothing to check for "none".
void check_class_balance(const std::string& class_balance, const graph::DatasetBinding& dataset, int64_t classes);

// `graph` with `weights` as the class weights of every CrossEntropy and NLL loss whose own are
// empty; a loss with explicit weights keeps them. ValueError when no loss takes class weights.
graph::Graph with_class_weights(graph::Graph graph, const std::vector<double>& weights);

// The graph a run compiles: with balanced weights when settings ask for them ("weights"),
// `graph` itself otherwise. `counts` are the training split's (training_class_counts).
graph::Graph balanced_graph(const graph::Graph& graph, const graph::TrainingSettings& settings,
                            const std::vector<int64_t>& counts);

// A line for a run's log of what class_balance does with these counts and class names:
// "weights: cat 0.556 (900 examples), dog 5 (100)" or "sampler: 1000 examples drawn per epoch,
// each class about equally often (cat 900, dog 100)".
std::string class_balance_text(const std::string& class_balance, const std::vector<int64_t>& counts,
                               const std::vector<std::string>& names);

}  // namespace plexus::session
