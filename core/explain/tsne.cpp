// Barnes-Hut t-SNE (van der Maaten 2014, as his bhtsne computes it): sparse input affinities from
// each point's exact nearest neighbours, the repulsion summarised by a quadtree.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "explain/attribution.h"
#include "explain/projection.h"
#include "util/error.h"
#include "util/parallel.h"

namespace plexus::explain {

namespace {

// The affinities P, symmetric and summing to 1, as rows of (column, value).
struct SparseP {
  std::vector<int64_t> row_start;  // n + 1
  std::vector<int64_t> col;
  std::vector<double> val;
};

// Each point's k nearest neighbours (itself left out) and their squared distances, ascending:
// the distances of blocks of rows from one matrix product each.
void nearest_neighbours(const std::vector<float>& x, int64_t n, int64_t d, int64_t k, std::vector<int64_t>& idx,
                        std::vector<double>& dist) {
  idx.assign(size_t(n * k), 0);
  dist.assign(size_t(n * k), 0.0);
  std::vector<float> norms(size_t(n), 0.f);
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t j = 0; j < d; ++j) s += double(x[size_t(i * d + j)]) * x[size_t(i * d + j)];
    norms[size_t(i)] = float(s);
  }
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    std::vector<float> dots(size_t(kBlock * n));
    std::vector<std::pair<float, int64_t>> row(static_cast<size_t>(n));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = b * kBlock, rows = std::min(kBlock, n - r0);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(rows), int(n), int(d), 1.f, x.data() + r0 * d, int(d),
                  x.data(), int(d), 0.f, dots.data(), int(n));
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = r0 + r;
        for (int64_t j = 0; j < n; ++j)
          row[size_t(j)] = {std::max(0.f, norms[size_t(i)] + norms[size_t(j)] - 2 * dots[size_t(r * n + j)]), j};
        row[size_t(i)].first = std::numeric_limits<float>::infinity();  // not its own neighbour
        std::partial_sort(row.begin(), row.begin() + k, row.end());
        for (int64_t m = 0; m < k; ++m) {
          idx[size_t(i * k + m)] = row[size_t(m)].second;
          dist[size_t(i * k + m)] = row[size_t(m)].first;
        }
      }
    }
  });
}

// p_{j|i} over i's neighbours, each row's Gaussian width found by bisection so that its entropy
// is log(perplexity); then P = (p_{j|i} + p_{i|j}) / 2n.
SparseP input_affinities(const std::vector<int64_t>& idx, const std::vector<double>& dist, int64_t n, int64_t k,
                         double perplexity) {
  std::vector<double> cond(size_t(n * k));
  const double target = std::log(perplexity);
  parallel_for(n, 64, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const double* di = dist.data() + i * k;
      double* pi = cond.data() + i * k;
      // Distances less the nearest: the same row after normalising, without exp underflowing to 0 everywhere.
      const double d0 = di[0];
      double beta = 1, lo = 0, hi = std::numeric_limits<double>::infinity();
      for (int step = 0; step < 200; ++step) {
        double sum = 0, weighted = 0;
        for (int64_t m = 0; m < k; ++m) {
          pi[m] = std::exp(-beta * (di[m] - d0));
          sum += pi[m];
          weighted += (di[m] - d0) * pi[m];
        }
        const double entropy = std::log(sum) + beta * weighted / sum;
        for (int64_t m = 0; m < k; ++m) pi[m] /= sum;
        if (std::abs(entropy - target) < 1e-5) break;
        if (entropy > target) {
          lo = beta;
          beta = std::isinf(hi) ? beta * 2 : (beta + hi) / 2;
        } else {
          hi = beta;
          beta = (beta + lo) / 2;
        }
      }
    }
  });
  // Symmetrise: every (i, j) and (j, i) of the neighbour lists, counted once each.
  std::vector<int64_t> count(size_t(n), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t m = 0; m < k; ++m) {
      ++count[size_t(i)];
      ++count[size_t(idx[size_t(i * k + m)])];
    }
  std::vector<int64_t> start(size_t(n + 1), 0);
  for (int64_t i = 0; i < n; ++i) start[size_t(i + 1)] = start[size_t(i)] + count[size_t(i)];
  std::vector<int64_t> col(static_cast<size_t>(start[size_t(n)])), fill(start.begin(), start.end() - 1);
  std::vector<double> val(col.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t m = 0; m < k; ++m) {
      const int64_t j = idx[size_t(i * k + m)];
      const double p = cond[size_t(i * k + m)];
      col[size_t(fill[size_t(i)])] = j;
      val[size_t(fill[size_t(i)]++)] = p;
      col[size_t(fill[size_t(j)])] = i;
      val[size_t(fill[size_t(j)]++)] = p;
    }
  // Merge each row's duplicate columns (j in i's list and i in j's).
  SparseP out;
  out.row_start.push_back(0);
  double total = 0;
  std::vector<std::pair<int64_t, double>> row;
  for (int64_t i = 0; i < n; ++i) {
    row.clear();
    for (int64_t e = start[size_t(i)]; e < start[size_t(i + 1)]; ++e) row.push_back({col[size_t(e)], val[size_t(e)]});
    std::sort(row.begin(), row.end());
    for (size_t e = 0; e < row.size(); ++e) {
      if (e > 0 && row[e].first == row[e - 1].first) {
        out.val.back() += row[e].second;
      } else {
        out.col.push_back(row[e].first);
        out.val.push_back(row[e].second);
      }
      total += row[e].second;
    }
    out.row_start.push_back(int64_t(out.col.size()));
  }
  for (double& v : out.val) v /= total;
  return out;
}

// A quadtree over the map's points: each cell's count and centre of mass, for the repulsion.
class QuadTree {
 public:
  explicit QuadTree(const std::vector<double>& y) : y_(y), next_(y.size() / 2, -1) {
    const int64_t n = int64_t(y.size() / 2);
    double x0 = y[0], x1 = y[0], y0 = y[1], y1 = y[1];
    for (int64_t i = 1; i < n; ++i) {
      x0 = std::min(x0, y[size_t(2 * i)]), x1 = std::max(x1, y[size_t(2 * i)]);
      y0 = std::min(y0, y[size_t(2 * i + 1)]), y1 = std::max(y1, y[size_t(2 * i + 1)]);
    }
    const double half = std::max(x1 - x0, y1 - y0) / 2 * (1 + 1e-6) + 1e-12;
    cells_.push_back(Cell{(x0 + x1) / 2, (y0 + y1) / 2, half});
    for (int64_t i = 0; i < n; ++i) insert(i);
    // Sums become centres of mass once, not one division per cell visited.
    for (Cell& c : cells_)
      if (c.count > 0) c.sum_x /= double(c.count), c.sum_y /= double(c.count);
  }

  // The repulsion on point i: Σ_j q_ij² (y_i - y_j) with q = 1 / (1 + |y_i - y_j|²) into f, Σ_j q_ij
  // returned; a cell smaller than theta times its distance counts as its points at their centre.
  double repulsion(int64_t i, double theta, double f[2]) const {
    const double px = y_[size_t(2 * i)], py = y_[size_t(2 * i + 1)];
    double sum_q = 0;
    f[0] = f[1] = 0;
    int32_t stack[256];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const Cell& c = cells_[size_t(stack[--top])];
      if (c.count == 0) continue;
      if (c.child < 0) {  // a leaf: its points one by one
        for (int64_t j = c.point; j >= 0; j = next_[size_t(j)]) {
          if (j == i) continue;
          const double dx = px - y_[size_t(2 * j)], dy = py - y_[size_t(2 * j + 1)];
          const double q = 1 / (1 + dx * dx + dy * dy);
          sum_q += q;
          f[0] += q * q * dx, f[1] += q * q * dy;
        }
        continue;
      }
      const double dx = px - c.sum_x, dy = py - c.sum_y, d2 = dx * dx + dy * dy;
      const double width = 2 * c.half;
      if (width * width < theta * theta * d2) {
        const double q = 1 / (1 + d2);
        sum_q += c.count * q;
        f[0] += c.count * q * q * dx, f[1] += c.count * q * q * dy;
      } else {
        for (int q = 0; q < 4; ++q) stack[top++] = c.child + q;
      }
    }
    return sum_q;
  }

 private:
  struct Cell {
    double cx, cy, half;
    double sum_x = 0, sum_y = 0;  // while building; then the centre of mass
    int64_t count = 0;
    int32_t child = -1;   // the first of four consecutive children; -1 for a leaf
    int64_t point = -1;   // a leaf's first point (the rest through next_)
    int depth = 0;
  };

  void insert(int64_t i) {
    const double px = y_[size_t(2 * i)], py = y_[size_t(2 * i + 1)];
    size_t c = 0;
    for (;;) {
      cells_[c].sum_x += px, cells_[c].sum_y += py, ++cells_[c].count;
      if (cells_[c].child >= 0) {
        c = size_t(cells_[c].child) + quadrant(cells_[c], px, py);
        continue;
      }
      const int64_t first = cells_[c].point;
      // An empty leaf takes the point; so does a leaf too deep to split (points at one place).
      if (first < 0 || cells_[c].depth >= 48 ||
          (y_[size_t(2 * first)] == px && y_[size_t(2 * first + 1)] == py)) {
        next_[size_t(i)] = first;
        cells_[c].point = i;
        return;
      }
      split(c);
      c = size_t(cells_[c].child) + quadrant(cells_[c], px, py);
    }
  }

  static size_t quadrant(const Cell& c, double x, double y) { return (x >= c.cx ? 1 : 0) + (y >= c.cy ? 2 : 0); }

  // A leaf becomes four children, its points moving into theirs.
  void split(size_t c) {
    const int32_t child = int32_t(cells_.size());
    const double h = cells_[c].half / 2;
    for (int q = 0; q < 4; ++q) {
      Cell k{cells_[c].cx + ((q & 1) ? h : -h), cells_[c].cy + ((q & 2) ? h : -h), h};
      k.depth = cells_[c].depth + 1;
      cells_.push_back(k);
    }
    int64_t j = cells_[c].point;
    cells_[c].point = -1;
    cells_[c].child = child;
    while (j >= 0) {
      const int64_t after = next_[size_t(j)];
      Cell& k = cells_[size_t(child) + quadrant(cells_[c], y_[size_t(2 * j)], y_[size_t(2 * j + 1)])];
      k.sum_x += y_[size_t(2 * j)], k.sum_y += y_[size_t(2 * j + 1)], ++k.count;
      next_[size_t(j)] = k.point;
      k.point = j;
      j = after;
    }
  }

  const std::vector<double>& y_;
  std::vector<int64_t> next_;
  std::vector<Cell> cells_;
};

// Portable normal draws (std::normal_distribution differs between standard libraries).
double tsne_normal(std::mt19937_64& gen) {
  constexpr double kScale = 1.0 / 18446744073709551616.0;  // 2^-64
  const double u1 = (double(gen()) + 1) * kScale, u2 = double(gen()) * kScale;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

}  // namespace

Tensor tsne(const Tensor& x, const TsneOptions& options) {
  if (x.dim() != 2) throw ValueError("t-SNE takes points [N, D], got shape " + plexus::to_string(x.shape()));
  const int64_t n = x.size(0);
  if (n < 4) throw ValueError("t-SNE needs at least 4 points, got " + std::to_string(n));
  if (!(options.perplexity > 0)) throw ValueError("t-SNE's perplexity must be positive");
  if (options.iterations < 1) throw ValueError("t-SNE needs at least 1 iteration");
  if (options.theta < 0) throw ValueError("t-SNE's theta must be 0 (exact) or more");
  for (float v : x.contiguous().to_vector())
    if (!std::isfinite(v)) throw ValueError("t-SNE: the points hold a value that is not finite");
  auto check_cancelled = [&] {
    if (options.cancelled && options.cancelled->load()) throw Cancelled("t-SNE was cancelled");
  };

  const Tensor reduced = options.pca_dims > 0 && x.size(1) > options.pca_dims
                             ? pca(x, std::min(options.pca_dims, n)).points
                             : x.contiguous();
  const int64_t d = reduced.size(1);
  const double perplexity = std::min(options.perplexity, double(n - 1) / 3);
  const int64_t k = std::min<int64_t>(n - 1, int64_t(3 * perplexity));
  std::vector<int64_t> idx;
  std::vector<double> dist;
  nearest_neighbours(reduced.to_vector(), n, d, k, idx, dist);
  check_cancelled();
  const SparseP p = input_affinities(idx, dist, n, k, perplexity);

  std::mt19937_64 gen(options.seed);
  std::vector<double> y(size_t(2 * n)), update(size_t(2 * n), 0.0), gains(size_t(2 * n), 1.0), grad(size_t(2 * n));
  for (double& v : y) v = 1e-4 * tsne_normal(gen);
  constexpr int64_t kExaggerated = 250;
  const double rate =
      options.learning_rate > 0 ? options.learning_rate : std::max(double(n) / options.early_exaggeration / 4, 50.0);
  const int parts = parallel_parts(n, 32);
  std::vector<double> part_q(static_cast<size_t>(parts));

  for (int64_t it = 0; it < options.iterations; ++it) {
    check_cancelled();
    const double exaggeration = it < kExaggerated ? options.early_exaggeration : 1;
    const QuadTree tree(y);
    // grad_i = 4 (exaggeration · Σ_j p_ij q_ij (y_i - y_j) - Σ_j q_ij² (y_i - y_j) / Σ q).
    std::fill(part_q.begin(), part_q.end(), 0.0);
    parallel_for_chunks(n, 32, [&](int chunk, int64_t i0, int64_t i1) {
      double sum_q = 0;
      for (int64_t i = i0; i < i1; ++i) {
        double f[2];
        sum_q += tree.repulsion(i, options.theta, f);
        grad[size_t(2 * i)] = f[0], grad[size_t(2 * i + 1)] = f[1];
      }
      part_q[size_t(chunk)] = sum_q;
    });
    double sum_q = 0;
    for (double q : part_q) sum_q += q;
    parallel_for(n, 32, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        double ax = 0, ay = 0;
        for (int64_t e = p.row_start[size_t(i)]; e < p.row_start[size_t(i + 1)]; ++e) {
          const int64_t j = p.col[size_t(e)];
          const double dx = y[size_t(2 * i)] - y[size_t(2 * j)], dy = y[size_t(2 * i + 1)] - y[size_t(2 * j + 1)];
          const double w = p.val[size_t(e)] / (1 + dx * dx + dy * dy);
          ax += w * dx, ay += w * dy;
        }
        grad[size_t(2 * i)] = 4 * (exaggeration * ax - grad[size_t(2 * i)] / sum_q);
        grad[size_t(2 * i + 1)] = 4 * (exaggeration * ay - grad[size_t(2 * i + 1)] / sum_q);
      }
    });
    if (options.progress && ((it + 1) % 50 == 0 || it + 1 == options.iterations)) {
      // KL(P || Q) over P's nonzero entries, with this step's (approximate) normaliser Σ q.
      double kl = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t e = p.row_start[size_t(i)]; e < p.row_start[size_t(i + 1)]; ++e) {
          const int64_t j = p.col[size_t(e)];
          const double dx = y[size_t(2 * i)] - y[size_t(2 * j)], dy = y[size_t(2 * i + 1)] - y[size_t(2 * j + 1)];
          const double q = 1 / (1 + dx * dx + dy * dy) / sum_q;
          kl += p.val[size_t(e)] * std::log(std::max(p.val[size_t(e)], 1e-300) / std::max(q, 1e-300));
        }
      options.progress(it + 1, kl);
    }
    // bhtsne's step: per-coordinate gains, momentum 0.5 then 0.8, the map kept centred.
    const double momentum = it < kExaggerated ? 0.5 : 0.8;
    double mean_x = 0, mean_y = 0;
    for (size_t c = 0; c < y.size(); ++c) {
      gains[c] = (grad[c] > 0) != (update[c] > 0) ? gains[c] + 0.2 : gains[c] * 0.8;
      gains[c] = std::max(gains[c], 0.01);
      update[c] = momentum * update[c] - rate * gains[c] * grad[c];
      y[c] += update[c];
      (c % 2 ? mean_y : mean_x) += y[c];
    }
    mean_x /= double(n), mean_y /= double(n);
    for (int64_t i = 0; i < n; ++i) y[size_t(2 * i)] -= mean_x, y[size_t(2 * i + 1)] -= mean_y;
  }
  std::vector<float> out(y.begin(), y.end());
  return from_vector(out, {n, 2});
}

}  // namespace plexus::explain
