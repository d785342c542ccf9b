// GELU's vectorised kernels (core/ops/cpu/gelu.h) against the exact values in double:
// gelu(x) = x·Φ(x) = x·erfc(−x/√2)/2 and gelu'(x) = Φ(x) + x·φ(x), over a fine sweep, large
// |x|, ±0, ±inf and NaN, and the op gelu (ops.h) on strided views through them.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/cpu/gelu.h"
#include "ops/scalar_math.h"
#include "plexus.h"
#include "support/check.h"
#include "support/test_support.h"

using namespace plexus;
using testing::cat;

namespace {

// The stated accuracy, in units in the last place of the exact value (measured: 5.75 forward,
// 4.3 for the derivative).
constexpr double kUlps = 6;
// Below this GELU and its derivative may come out as zero: beyond x = −13, where both are
// under 1e-36.
constexpr double kFlushed = 1e-35;

double phi_cdf(double x) { return 0.5 * std::erfc(-x * M_SQRT1_2); }
double phi_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }

// |got − exact| in units of the last place of `scale` rounded to float.
double ulps(float got, double exact, double scale) {
  const double ulp = std::ldexp(1.0, std::ilogb(float(scale)) - 23);
  return std::fabs(double(got) - exact) / ulp;
}

// Every float from −14 to 14 in steps of 2^-12, and powers of two out to 2^100 both ways.
std::vector<float> sweep() {
  std::vector<float> x;
  for (int i = -14 * 4096; i <= 14 * 4096; ++i) x.push_back(float(i) / 4096 + float(i % 7) * 1e-5f);
  for (int e = 4; e <= 100; ++e) {
    x.push_back(std::ldexp(1.f, e));
    x.push_back(-std::ldexp(1.f, e));
    x.push_back(std::ldexp(1.f, e) * 1.37f);
    x.push_back(-std::ldexp(1.f, e) * 1.37f);
  }
  for (int e = -140; e < 0; ++e) x.push_back(std::ldexp(e % 2 ? 1.f : -1.f, e));  // tiny, subnormal too
  return x;
}

Tensor normal(const Shape& s, uint64_t seed) {
  Generator gen(seed);
  return randn(s, &gen);
}

// Equal, or both within 1e-33 of zero: loops on the pool flush subnormals (util/subnormals.h),
// which moves the tiniest results (x near −13) where an intermediate Φ(x) is subnormal.
bool same(float a, float b) { return a == b || (std::fabs(a) < 1e-33f && std::fabs(b) < 1e-33f); }

}  // namespace

TEST(geluWithinFewUlps) {
  const std::vector<float> x = sweep();
  std::vector<float> y(x.size());
  cpu::gelu(y.data(), x.data(), int64_t(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double exact = double(x[i]) * phi_cdf(x[i]);
    if (std::fabs(exact) < kFlushed) {
      VERIFY2(std::fabs(y[i]) < kFlushed, cat("x=", x[i], " gelu=", y[i], " exact=", exact));
      continue;
    }
    const double e = ulps(y[i], exact, exact);
    worst = std::max(worst, e);
    VERIFY2(e <= kUlps, cat("x=", x[i], " gelu=", y[i], " exact=", exact, " ulps=", e));
  }
  VERIFY2(worst > 0, "a sweep with no rounding at all checks nothing");
}

// The derivative crosses zero near x = −0.75, where no formula keeps a relative accuracy: its
// error is measured against the size of its terms, Φ(x) + |x|·φ(x).
TEST(geluGradWithinFewUlpsOfItsTerms) {
  const std::vector<float> x = sweep();
  std::vector<float> g(x.size()), d(x.size());
  for (size_t i = 0; i < x.size(); ++i) g[i] = i % 3 ? 1.f : -0.5f;
  cpu::gelu_backward(d.data(), g.data(), x.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double xv = x[i], exact = g[i] * (phi_cdf(xv) + xv * phi_pdf(xv));
    const double scale = std::fabs(g[i]) * (phi_cdf(xv) + std::fabs(xv) * phi_pdf(xv));
    if (scale < kFlushed) {
      VERIFY2(std::fabs(d[i]) < kFlushed, cat("x=", x[i], " grad=", d[i], " exact=", exact));
      continue;
    }
    const double e = ulps(d[i], exact, scale);
    VERIFY2(e <= kUlps, cat("x=", x[i], " grad=", d[i], " exact=", exact, " ulps=", e));
  }
}

// ±0, ±inf and NaN as the scalar formulas give them (the CUDA backend's): gelu(−0) = −0,
// gelu(−inf) = NaN (−inf·0), gelu'(±inf) = NaN (inf·0).
TEST(specialValuesAsTheScalarFormulas) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.f, -0.f, inf, -inf, std::numeric_limits<float>::quiet_NaN()}) {
    float y, d;
    const float one = 1.f;
    cpu::gelu(&y, &v, 1);
    cpu::gelu_backward(&d, &one, &v, 1);
    const float ys = math::gelu(v), ds = math::gelu_grad(v);
    VERIFY2(std::isnan(y) ? std::isnan(ys) : y == ys && std::signbit(y) == std::signbit(ys),
            cat("x=", v, " gelu=", y, " scalar=", ys));
    VERIFY2(std::isnan(d) ? std::isnan(ds) : d == ds, cat("x=", v, " grad=", d, " scalar=", ds));
  }
}

// The op on a transposed view (strided runs, element by element) and on a tensor large enough
// for the pool's threads gives what the kernel gives on the contiguous values, and so does the
// gradient.
TEST(opOnStridedViewsAsTheKernel) {
  const Tensor a = normal({300, 257}, 7) * 3.f;
  const Tensor at = a.transpose(0, 1);
  const Tensor y = gelu(at), ya = gelu(a).transpose(0, 1);
  const std::vector<float> yv = y.to_vector(), yav = ya.to_vector();
  for (size_t i = 0; i < yv.size(); ++i) VERIFY2(same(yv[i], yav[i]), cat("element ", i, ": ", yv[i], " vs ", yav[i]));
  Tensor leaf = at.detach();
  leaf.requires_grad_(true);
  const Tensor g = normal(leaf.shape(), 8);
  gelu(leaf).backward(g);
  const std::vector<float> x = leaf.detach().contiguous().to_vector(), gv = g.to_vector();
  std::vector<float> d(x.size());
  cpu::gelu_backward(d.data(), gv.data(), x.data(), int64_t(x.size()));
  const std::vector<float> got = leaf.grad().to_vector();
  for (size_t i = 0; i < d.size(); ++i) VERIFY2(same(got[i], d[i]), cat("grad ", i, ": ", got[i], " vs ", d[i]));
}
