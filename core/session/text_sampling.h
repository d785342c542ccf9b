#pragma once
// Text from a character-level model: `plexus-cli sample`, the samples a text project's run
// writes after every epoch, and Try It's Generate. The model maps ids [N, T] (whole numbers
// as floats) to logits [N, T, V] over the vocabulary's V symbols; every sample grows one
// character per step, all of them in one batch, from the logits at the last position.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/vocabulary.h"
#include "graph/graph.h"
#include "nn/module.h"
#include "session/trained_model.h"

namespace plexus::session {

struct SampleOptions {
  int64_t count = 20;
  // Logits are divided by it before the softmax: below 1 sharpens the distribution, above 1
  // flattens it. 0 is greedy decoding: the most likely symbol at every step (ties: the lowest id).
  double temperature = 0.8;
  // The text every sample continues, and starts with. Empty: a sample starts after a newline
  // when the vocabulary has '\n' (a one-name-per-line corpus gives whole names; the newline is
  // not part of the sample), else with a symbol drawn uniformly, which is.
  std::string prime;
  int64_t max_length = 200;  // symbols generated per sample, after the prime
  // A sample ends at the first newline it generates (left out). Default: when the vocabulary
  // has '\n'.
  std::optional<bool> stop_at_newline;
  // The model sees at most the last `context` symbols (the dataset's sequence length: learnt
  // positions end there); 0 = all of them.
  int64_t context = 0;
  uint64_t seed = 1;  // the same seed, model and options give the same samples
};

// `count` samples. No autograd; the model runs in eval mode (its mode is restored afterwards)
// with its recurrent state reset first, on the device of its parameters. Throws ValueError for
// options out of range or a prime symbol the vocabulary lacks (naming it and its position),
// ShapeError for a model whose output is not [N, T, V] (expected versus got).
std::vector<std::string> sample_text(nn::Module& model, const data::Vocabulary& vocabulary,
                                     const SampleOptions& options);

// A project trained on a text dataset (dataset kind "text"): its class names are its symbols.
bool is_text_project(const graph::Graph& project);
// ValueError naming `where` (the model's file) and the project's kind when it is not one.
void check_text_project(const graph::Graph& project, const std::string& where);

// The vocabulary a trained text model stores (its class names, from the checkpoint's metadata:
// no data file needed). ValueError naming `where` for a model of another kind of project.
data::Vocabulary text_vocabulary(const TrainedModel& model, const std::string& where);

// sample_text with `model`'s vocabulary and, when options.context is 0, its sequence length
// as the context.
std::vector<std::string> sample_text(const TrainedModel& model, SampleOptions options, const std::string& where);

}  // namespace plexus::session
