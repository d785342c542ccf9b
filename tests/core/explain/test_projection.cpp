// 2-D maps of points (explain/projection.h): PCA's components, signs and reconstruction, and t-SNE
// separating clusters, lowering its KL divergence, repeating itself for a seed and agreeing with
// its exact gradients. pcaCrosscheck runs only from tests/reference/pca_crosscheck.py, which
// compares it with numpy's SVD.
#include "support/check.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "explain/attribution.h"
#include "explain/projection.h"
#include "support/test_support.h"
#include "tensor/generator.h"
#include "util/error.h"

using namespace plexus;
using plexus::testing::contains;
using plexus::testing::message_of;

namespace {

// `clusters` Gaussian blobs of `per` points in `dims` dimensions, centres 10 apart along the
// axes, spread 1; labels their blob.
Tensor blobs(int64_t clusters, int64_t per, int64_t dims, std::vector<int64_t>& labels) {
  Generator gen(9);
  const std::vector<float> noise = randn({clusters * per, dims}, &gen).to_vector();
  std::vector<float> x(noise.size());
  labels.clear();
  for (int64_t c = 0; c < clusters; ++c)
    for (int64_t i = 0; i < per; ++i) {
      const int64_t row = c * per + i;
      for (int64_t j = 0; j < dims; ++j)
        x[size_t(row * dims + j)] = noise[size_t(row * dims + j)] + (j == c ? 10.f : 0.f);
      labels.push_back(c);
    }
  return from_vector(x, {clusters * per, dims});
}

// The share of points whose 5 nearest neighbours in the map mostly share their label.
double knn_accuracy(const Tensor& map, const std::vector<int64_t>& labels) {
  const std::vector<float> y = map.to_vector();
  const int64_t n = map.size(0);
  int64_t right = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<std::pair<float, int64_t>> d;
    for (int64_t j = 0; j < n; ++j)
      if (j != i) {
        const float dx = y[size_t(2 * i)] - y[size_t(2 * j)], dy = y[size_t(2 * i + 1)] - y[size_t(2 * j + 1)];
        d.push_back({dx * dx + dy * dy, j});
      }
    std::partial_sort(d.begin(), d.begin() + 5, d.end());
    int same = 0;
    for (int m = 0; m < 5; ++m) same += labels[size_t(d[size_t(m)].second)] == labels[size_t(i)];
    right += same >= 3;
  }
  return double(right) / double(n);
}

// The fixed matrix the PCA cross-check uses: 12 points in 6 dimensions of different spreads.
Tensor fixed_matrix() {
  std::vector<float> v;
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 6; ++j) v.push_back(float(std::sin(i * 7 + j * 3) * (j + 1) + 0.1 * i * j));
  return from_vector(v, {12, 6});
}

}  // namespace

TEST(pcaComponentsAreUnitOrthogonalSignedAndReconstruct) {
  Generator gen(2);
  // Wide (5 points in 8 dimensions: the Gram path) and tall (40 in 8: the covariance path).
  for (const int64_t n : {int64_t(5), int64_t(40)}) {
    const Tensor x = randn({n, 8}, &gen);
    const int64_t k = std::min<int64_t>(n - 1, 8);  // the centred data's full rank
    const explain::Pca p = explain::pca(x, k);
    COMPARE(p.points.shape(), Shape({n, k}));
    COMPARE(p.components.shape(), Shape({k, 8}));
    const std::vector<float> c = p.components.to_vector(), pts = p.points.to_vector(), xs = x.to_vector(),
                             mean = p.mean.to_vector();
    double ratio_sum = 0;
    for (int64_t a = 0; a < k; ++a) {
      for (int64_t b = 0; b < k; ++b) {
        double dot = 0;
        for (int64_t j = 0; j < 8; ++j) dot += double(c[size_t(a * 8 + j)]) * c[size_t(b * 8 + j)];
        VERIFY(std::abs(dot - (a == b ? 1.0 : 0.0)) < 1e-5);
      }
      // The entry of largest magnitude is positive.
      float largest = 0;
      for (int64_t j = 0; j < 8; ++j)
        if (std::abs(c[size_t(a * 8 + j)]) > std::abs(largest)) largest = c[size_t(a * 8 + j)];
      VERIFY(largest > 0);
      if (a > 0) VERIFY(p.explained_ratio[size_t(a)] <= p.explained_ratio[size_t(a - 1)] + 1e-12);
      ratio_sum += p.explained_ratio[size_t(a)];
    }
    VERIFY(std::abs(ratio_sum - 1) < 1e-5);  // every direction of variance kept
    // points · components + mean gives the data back.
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < 8; ++j) {
        double r = mean[size_t(j)];
        for (int64_t a = 0; a < k; ++a) r += double(pts[size_t(i * k + a)]) * c[size_t(a * 8 + j)];
        VERIFY2(std::abs(r - xs[size_t(i * 8 + j)]) < 1e-4, ("n " + std::to_string(n)).c_str());
      }
  }
}

TEST(pcaRefusesWhatItCannotProject) {
  const std::string k = message_of<ValueError>([] { explain::pca(zeros({5, 3}), 4); });
  VERIFY2(contains(k, "1 to 3 components, asked for 4"), k.c_str());
  const std::string shape = message_of<ValueError>([] { explain::pca(zeros({5}), 1); });
  VERIFY2(contains(shape, "points [N, D]"), shape.c_str());
}

TEST(tsneSeparatesClustersLowersItsKlAndRepeatsForASeed) {
  std::vector<int64_t> labels;
  const Tensor x = blobs(5, 60, 20, labels);
  std::vector<double> kl;
  explain::TsneOptions o{.perplexity = 20, .iterations = 600, .seed = 3};
  o.progress = [&](int64_t, double v) { kl.push_back(v); };
  const Tensor map = explain::tsne(x, o);
  COMPARE(map.shape(), Shape({300, 2}));
  const double accuracy = knn_accuracy(map, labels);
  VERIFY2(accuracy > 0.95, std::to_string(accuracy).c_str());
  COMPARE(kl.size(), size_t(12));
  VERIFY2(kl.back() < kl[5], (std::to_string(kl[5]) + " -> " + std::to_string(kl.back())).c_str());
  o.progress = nullptr;
  COMPARE(explain::tsne(x, o).to_vector(), map.to_vector());
  o.seed = 4;
  VERIFY(explain::tsne(x, o).to_vector() != map.to_vector());
}

TEST(tsneBarnesHutAgreesWithExactGradients) {
  std::vector<int64_t> labels;
  const Tensor x = blobs(4, 40, 10, labels);
  double kl_exact = 0, kl_bh = 0;
  explain::TsneOptions o{.perplexity = 15, .iterations = 500, .theta = 0, .seed = 1};
  o.progress = [&](int64_t, double v) { kl_exact = v; };
  const Tensor exact = explain::tsne(x, o);
  o.theta = 0.5;
  o.progress = [&](int64_t, double v) { kl_bh = v; };
  const Tensor bh = explain::tsne(x, o);
  VERIFY(knn_accuracy(exact, labels) > 0.95 && knn_accuracy(bh, labels) > 0.95);
  VERIFY2(std::abs(kl_exact - kl_bh) < 0.1 * kl_exact, (std::to_string(kl_exact) + " vs " + std::to_string(kl_bh)).c_str());
}

TEST(tsneRefusesBadInputAndStopsWhenCancelled) {
  const std::string few = message_of<ValueError>([] { explain::tsne(zeros({3, 2})); });
  VERIFY2(contains(few, "at least 4 points, got 3"), few.c_str());
  const std::string nan = message_of<ValueError>([] { explain::tsne(full({6, 2}, std::nanf(""))); });
  VERIFY2(contains(nan, "not finite"), nan.c_str());
  std::atomic<bool> cancelled{true};
  const std::string stopped =
      message_of<explain::Cancelled>([&] { explain::tsne(randn({20, 3}), {.cancelled = &cancelled}); });
  VERIFY2(contains(stopped, "cancelled"), stopped.c_str());
  // A tiny set still maps: its perplexity clamped to (N - 1) / 3.
  COMPARE(explain::tsne(randn({5, 3}), {.iterations = 20}).shape(), Shape({5, 2}));
}

// Writes the fixed matrix and its PCA for pca_crosscheck.py to compare with numpy's SVD.
TEST(pcaCrosscheck) {
  const char* dir = std::getenv("PLEXUS_PCA_CROSSCHECK_DIR");
  if (!dir) SKIP("run by tests/reference/pca_crosscheck.py");
  const Tensor x = fixed_matrix();
  const explain::Pca p = explain::pca(x, 3);
  std::ofstream out(std::string(dir) + "/pca.txt");
  auto write = [&out](const char* name, const std::vector<float>& v) {
    out << name;
    for (float f : v) out << ' ' << double(f);
    out << '\n';
  };
  out.precision(9);
  write("x", x.to_vector());
  write("points", p.points.to_vector());
  write("components", p.components.to_vector());
  write("mean", p.mean.to_vector());
  write("ratio", std::vector<float>(p.explained_ratio.begin(), p.explained_ratio.end()));
  VERIFY(out.good());
}
