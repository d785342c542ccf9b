#pragma once
// Seeded index orders for shuffling and splitting. They depend only on (n, seed), never on
// threads or timing, so a run is reproducible: the same seed gives the same order everywhere.
#include <cstdint>
#include <utility>
#include <vector>

#include "tensor/generator.h"

namespace plexus::data {

// Uniform integer in [0, n) without modulo bias. n must be > 0.
uint64_t uniform_index(Generator& gen, uint64_t n);

// A Fisher-Yates permutation of 0..n-1 drawn from Generator(seed).
std::vector<int64_t> random_permutation(int64_t n, uint64_t seed);

// Splits a random permutation of 0..n-1 into a first part of round(train_fraction * n)
// indices and the rest, each sorted ascending (so a subset keeps the file's order).
// train_fraction must lie in [0, 1].
std::pair<std::vector<int64_t>, std::vector<int64_t>> split_indices(int64_t n, double train_fraction, uint64_t seed);

// `count` indices drawn with replacement from Generator(seed), index i with probability
// weights[i] / sum(weights): a weighted sampler's order (DataLoaderOptions::sample_weights).
// Weights must be finite and >= 0 with a positive sum (ValueError otherwise).
std::vector<int64_t> weighted_draws(const std::vector<double>& weights, int64_t count, uint64_t seed);

// Batches of B = min(batch_size, n) parallel streams over examples 0..n-1 in order, for
// stateful recurrent training: with S = n / B batches, row r of batch j is example r*S + j, so
// row r of consecutive batches walks stream r (examples r*S .. r*S + S - 1) forward and a
// hidden state carried from one batch to the next continues the right text. The n - S*B
// examples at the end are not used; the order does not depend on any seed. Empty for n = 0.
std::vector<std::vector<int64_t>> stream_batches(int64_t n, int64_t batch_size);

// Mixes several values into one well-spread 64-bit seed (splitmix64 steps), e.g. to give
// every (seed, epoch, batch) its own independent random stream.
uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c = 0);

}  // namespace plexus::data
