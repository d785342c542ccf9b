#pragma once
// 2-D maps of high-dimensional points for the embedding projector: PCA (an SVD of the centred
// data) and t-SNE (van der Maaten 2014's Barnes-Hut approximation, with the exact affinities of
// each point's 3·perplexity nearest neighbours).
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "tensor/tensor.h"

namespace plexus::explain {

struct Pca {
  Tensor points;                        // [N, k]: the centred data on the components
  Tensor components;                    // [k, D], unit rows, by decreasing variance; sign: largest |entry| positive
  Tensor mean;                          // [D]
  std::vector<double> explained_ratio;  // per component: its variance / the total
};
// ValueError for k outside 1..min(N, D).
Pca pca(const Tensor& x, int64_t k);

struct TsneOptions {
  double perplexity = 30;  // clamped to (N - 1) / 3
  int64_t iterations = 1000;
  double learning_rate = 0;        // 0: max(N / early_exaggeration / 4, 50) (Belkina et al. 2019)
  double early_exaggeration = 12;  // for the first 250 iterations
  double theta = 0.5;              // Barnes-Hut accuracy; 0: exact gradients
  int64_t pca_dims = 50;           // reduce to this many dimensions with PCA first (0: no)
  uint64_t seed = 0;
  std::function<void(int64_t iteration, double kl)> progress{};  // every 50 iterations
  const std::atomic<bool>* cancelled = nullptr;                // explain::Cancelled
};
// [N, 2]. ValueError for fewer than 4 points.
Tensor tsne(const Tensor& x, const TsneOptions& options = {});

}  // namespace plexus::explain
