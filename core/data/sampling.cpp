#include "data/sampling.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"

namespace plexus::data {
namespace {
uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t uniform_index(Generator& gen, uint64_t n) {
  if (n == 0) throw ValueError("uniform_index: empty range");
  // Reject the top partial copy of [0, n) so every value is equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = gen.next_u64();
  while (x >= limit);
  return x % n;
}

std::vector<int64_t> random_permutation(int64_t n, uint64_t seed) {
  if (n < 0) throw ValueError("random_permutation: negative size " + std::to_string(n));
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[size_t(i)] = i;
  Generator gen(seed);
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[size_t(i)], p[size_t(uniform_index(gen, uint64_t(i) + 1))]);
  return p;
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> split_indices(int64_t n, double train_fraction, uint64_t seed) {
  if (!(train_fraction >= 0.0 && train_fraction <= 1.0))
    throw ValueError("split: train_fraction must lie in [0, 1], got " + std::to_string(train_fraction));
  std::vector<int64_t> p = random_permutation(n, seed);
  const auto k = int64_t(std::llround(train_fraction * double(n)));
  std::vector<int64_t> a(p.begin(), p.begin() + k), b(p.begin() + k, p.end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return {std::move(a), std::move(b)};
}

std::vector<int64_t> weighted_draws(const std::vector<double>& weights, int64_t count, uint64_t seed) {
  // Inverse transform sampling over the running sums: one uniform draw and a binary search each.
  std::vector<double> cumulative(weights.size());
  double total = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!(std::isfinite(weights[i]) && weights[i] >= 0))
      throw ValueError("weighted_draws: weight " + std::to_string(i) + " is " + std::to_string(weights[i]) +
                       "; weights must be finite and >= 0");
    cumulative[i] = total += weights[i];
  }
  if (!(total > 0)) throw ValueError("weighted_draws: the weights sum to 0; nothing can be drawn");
  if (count < 0) throw ValueError("weighted_draws: negative count " + std::to_string(count));
  Generator gen(seed);
  std::vector<int64_t> out(static_cast<size_t>(count));
  for (int64_t& index : out) {
    const double u = double(gen.next_u64() >> 11) * 0x1p-53 * total;  // [0, total), 53 random bits
    const auto at = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
    index = std::min<int64_t>(at, int64_t(weights.size()) - 1);  // rounding at the very top
  }
  return out;
}

std::vector<std::vector<int64_t>> stream_batches(int64_t n, int64_t batch_size) {
  if (n < 0 || batch_size < 1)
    throw ValueError("stream_batches: needs n >= 0 and batch_size >= 1, got " + std::to_string(n) + " and " +
                     std::to_string(batch_size));
  const int64_t rows = std::min(batch_size, n), steps = rows ? n / rows : 0;
  std::vector<std::vector<int64_t>> out(size_t(steps), std::vector<int64_t>(size_t(rows), 0));
  for (int64_t j = 0; j < steps; ++j)
    for (int64_t r = 0; r < rows; ++r) out[size_t(j)][size_t(r)] = r * steps + j;
  return out;
}

uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c) { return splitmix(splitmix(splitmix(a) ^ b) ^ c); }

}  // namespace plexus::data
