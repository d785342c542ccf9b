#pragma once
// Figures a person reads off a run's metrics (metrics.h): the most frequent mistakes of a
// confusion matrix, for when there are too many classes to read the matrix itself, and a
// cross-entropy in nats as bits and as perplexity, the units a character model is judged in;
// a loss's parts beside it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "train/events.h"
#include "train/metrics.h"

namespace plexus::train {

// An off-diagonal cell: `count` examples of class `truth` predicted as `predicted`, `share` of
// all the examples of `truth` (0..1).
struct Confusion {
  int64_t truth = 0, predicted = 0, count = 0;
  double share = 0;
};

// The `limit` most frequent mistakes, most frequent first; equal counts in row-major order
// (lower true class first, then lower predicted class), so the list is the same every time.
// Cells that never happened are left out.
std::vector<Confusion> top_confusions(const ConfusionMatrix& matrix, size_t limit);

// A mean cross-entropy in nats as bits (per symbol: bits per character for a character model)
// and as perplexity, the number of equally likely symbols that would leave the model as unsure.
inline double nats_to_bits(double nats) { return nats / std::log(2.0); }
inline double perplexity(double nats) { return std::exp(nats); }

// Several loss nodes' own losses after the total: " (classify 0.3012, reconstruct 0.05471)";
// "" for none.
std::string parts_text(const std::vector<LossPart>& parts);

}  // namespace plexus::train
