#include "explain/projection.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>

#include "explain/attribution.h"
#include "util/error.h"
#include "util/parallel.h"

// LAPACK's symmetric eigensolver, from OpenBLAS (Debian ships no lapacke.h); gfortran's ABI passes
// each character argument's length at the end.
extern "C" void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
                        double* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len,
                        size_t uplo_len);

namespace plexus::explain {

namespace {

// The eigenvalues (ascending) and unit eigenvectors (row i belongs to value i) of the symmetric n x n `a`.
void symmetric_eigen(std::vector<double>& a, int n, std::vector<double>& values) {
  values.assign(size_t(n), 0.0);
  int info = 0, lwork = -1, liwork = -1, iwork_size = 0;
  double work_size = 0;
  dsyevd_("V", "U", &n, a.data(), &n, values.data(), &work_size, &lwork, &iwork_size, &liwork, &info, 1, 1);
  lwork = int(work_size);
  liwork = iwork_size;
  std::vector<double> work(size_t(std::max(lwork, 1)));
  std::vector<int> iwork(size_t(std::max(liwork, 1)));
  dsyevd_("V", "U", &n, a.data(), &n, values.data(), work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  if (info != 0) throw Error("PCA: LAPACK's dsyevd failed to converge (info " + std::to_string(info) + ")");
}

}  // namespace

Pca pca(const Tensor& x, int64_t k) {
  if (x.dim() != 2) throw ValueError("PCA takes points [N, D], got shape " + plexus::to_string(x.shape()));
  const int64_t n = x.size(0), d = x.size(1);
  if (k < 1 || k > std::min(n, d))
    throw ValueError("PCA of " + std::to_string(n) + " points of dimension " + std::to_string(d) +
                     " has 1 to " + std::to_string(std::min(n, d)) + " components, asked for " + std::to_string(k));
  const std::vector<float> values = x.contiguous().to_vector();
  for (float v : values)
    if (!std::isfinite(v)) throw ValueError("PCA: the points hold a value that is not finite");
  // Centred, in double: the covariance squares the data's condition number.
  std::vector<double> mean(size_t(d), 0.0), xc(size_t(n * d));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) mean[size_t(j)] += values[size_t(i * d + j)];
  for (double& m : mean) m /= double(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) xc[size_t(i * d + j)] = values[size_t(i * d + j)] - mean[size_t(j)];

  // The components are the eigenvectors of Xcᵀ·Xc [D, D]; with fewer points than dimensions, those
  // of the smaller Xc·Xcᵀ [N, N] mapped through Xcᵀ (the same nonzero spectrum).
  const bool gram = n < d;
  const int m = int(gram ? n : d);
  std::vector<double> a(size_t(m) * size_t(m), 0.0), eigenvalues;
  cblas_dsyrk(CblasRowMajor, CblasUpper, gram ? CblasNoTrans : CblasTrans, m, int(gram ? d : n), 1.0, xc.data(),
              int(d), 0.0, a.data(), m);
  double total = 0;
  for (int i = 0; i < m; ++i) total += a[size_t(i) * size_t(m) + size_t(i)];
  // Row-major upper is column-major lower: dsyevd reads the triangle it is given; fill both.
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < i; ++j) a[size_t(i) * size_t(m) + size_t(j)] = a[size_t(j) * size_t(m) + size_t(i)];
  symmetric_eigen(a, m, eigenvalues);

  Pca out;
  std::vector<float> components(size_t(k * d)), mean_f(mean.begin(), mean.end());
  for (int64_t c = 0; c < k; ++c) {
    const size_t e = size_t(m - 1 - c);  // largest first
    std::vector<double> v(size_t(d), 0.0);
    if (gram) {
      for (int64_t i = 0; i < n; ++i) {
        const double u = a[e * size_t(m) + size_t(i)];
        for (int64_t j = 0; j < d; ++j) v[size_t(j)] += u * xc[size_t(i * d + j)];
      }
    } else {
      for (int64_t j = 0; j < d; ++j) v[size_t(j)] = a[e * size_t(m) + size_t(j)];
    }
    double norm = 0;
    for (double t : v) norm += t * t;
    norm = std::sqrt(norm);
    if (norm == 0) {
      v[size_t(c)] = 1;  // no variance left along any direction: any unit vector spans it
      norm = 1;
    }
    // Sign: the entry of largest magnitude positive (the first of equals), so runs agree.
    size_t largest = 0;
    for (size_t j = 1; j < v.size(); ++j)
      if (std::abs(v[j]) > std::abs(v[largest])) largest = j;
    const double s = v[largest] < 0 ? -1.0 / norm : 1.0 / norm;
    for (int64_t j = 0; j < d; ++j) components[size_t(c * d + j)] = float(v[size_t(j)] * s);
    out.explained_ratio.push_back(total > 0 ? std::max(eigenvalues[e], 0.0) / total : 0.0);
  }
  std::vector<double> basis(components.begin(), components.end()), projected(size_t(n * k));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(n), int(k), int(d), 1.0, xc.data(), int(d), basis.data(),
              int(d), 0.0, projected.data(), int(k));
  const std::vector<float> points(projected.begin(), projected.end());
  out.points = from_vector(points, {n, k});
  out.components = from_vector(components, {k, d});
  out.mean = from_vector(mean_f, {d});
  return out;
}

}  // namespace plexus::explain
