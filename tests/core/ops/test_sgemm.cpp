// Our AVX-512 kernels (core/ops/cpu/sgemm.h): the matrix product against a double-precision
// reference, and Adam's update against the scalar formula bit for bit. The product:
// every transpose, shapes around each tile edge (12 rows, 32 columns, 16-deep transposes,
// 256-deep panels), padded leading dimensions, alpha and beta, and C's cells outside the
// product left alone. On a CPU without AVX-512 the kernel never runs and its tests skip.
// The AVX2 product (sgemm_avx2.cpp) the same way around its own edges (6 rows, 16 columns,
// 8-deep transposes, 256-deep and 256-column blocks); it runs on CPUs with AVX2 and FMA but
// not AVX-512, so one of the two kernels' tests skips on any CPU.
#include "support/check.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "ops/cpu/sgemm.h"
#include "ops/scalar_math.h"
#include "support/test_support.h"

using namespace plexus;
using testing::cat;

namespace {

struct Case {
  bool ta, tb;
  int64_t m, n, k, pad;  // pad: extra floats at the end of every row of A, B and C
  float alpha, beta;
};

// A kernel's product, with its workspace.
using Product = void (*)(const Case&, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);
void avx512(const Case& c, const float* a, int64_t lda, const float* b, int64_t ldb, float* out, int64_t ldc) {
  cpu::own_sgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, out, ldc, cpu::own_sgemm_thread_workspace());
}
void avx2(const Case& c, const float* a, int64_t lda, const float* b, int64_t ldb, float* out, int64_t ldc) {
  cpu::avx2_sgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, out, ldc,
                  cpu::avx2_sgemm_thread_workspace());
}

// Runs one case and returns the worst error relative to the reference's scale; cells
// outside the m x n product (row padding) must keep their sentinel bit for bit.
double run_case(const Case& c, std::mt19937& rng, Product product = avx512) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int64_t lda = (c.ta ? c.m : c.k) + c.pad, ldb = (c.tb ? c.k : c.n) + c.pad, ldc = c.n + c.pad;
  std::vector<float> a(size_t((c.ta ? c.k : c.m) * lda)), b(size_t((c.tb ? c.n : c.k) * ldb));
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  constexpr float kSentinel = -12345.f;
  std::vector<float> c0(size_t(c.m * ldc));
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < ldc; ++j)
      // beta = 0 must not read C: NaN there would otherwise poison the result.
      c0[size_t(i * ldc + j)] = j >= c.n ? kSentinel : c.beta == 0.f ? std::numeric_limits<float>::quiet_NaN() : u(rng);
  std::vector<float> out = c0;
  product(c, a.data(), lda, b.data(), ldb, out.data(), ldc);
  const std::vector<double> ref = testing::reference_gemm(c.ta, c.tb, c.m, c.n, c.k, a.data(), lda, b.data(), ldb);
  double worst = 0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = out[size_t(i * ldc + j)];
      if (j >= c.n) {
        if (got != kSentinel) return std::numeric_limits<double>::infinity();
        continue;
      }
      const double prior = c.beta == 0.f ? 0.0 : double(c0[size_t(i * ldc + j)]);
      const double want = double(c.alpha) * ref[size_t(i * c.n + j)] + double(c.beta) * prior;
      // Each product term is at most 1 in size: k bounds the magnitude of the sum.
      const double err = std::fabs(double(got) - want) / std::sqrt(double(c.k) + 1.0);
      if (!(err <= worst)) worst = err;  // NaN counts as the worst
      if (std::isnan(got)) return std::numeric_limits<double>::infinity();
    }
  return worst;
}

std::string describe(const Case& c) {
  return cat("ta=", c.ta, " tb=", c.tb, " m=", c.m, " n=", c.n, " k=", c.k, " pad=", c.pad, " alpha=", c.alpha,
             " beta=", c.beta);
}

// Every transpose over ms x ns x ks (alpha 1, beta 0, rows padded by (m + n + k) % 3), counted in
// `cases`: the first case off by 1e-5 or more, described, or "" when none is.
std::string sweep(Product product, std::span<const int64_t> ms, std::span<const int64_t> ns,
                  std::span<const int64_t> ks, std::mt19937& rng, int& cases) {
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const int64_t m : ms)
        for (const int64_t n : ns)
          for (const int64_t k : ks) {
            const Case c{ta, tb, m, n, k, (m + n + k) % 3, 1.f, 0.f};
            ++cases;
            if (const double err = run_case(c, rng, product); !(err < 1e-5)) return describe(c) + cat(": error ", err);
          }
  return "";
}

// Every alpha in {1, -0.5, 2} and beta in {0, 1, 0.25}, every transpose, m = 29, each of the two
// widths, depth k, rows padded by 2: the first case off by 1e-5 or more, described, or "".
std::string sweep_scales(Product product, const std::array<int64_t, 2>& ns, int64_t k, std::mt19937& rng) {
  for (const float alpha : {1.f, -0.5f, 2.f})
    for (const float beta : {0.f, 1.f, 0.25f})
      for (const bool ta : {false, true})
        for (const bool tb : {false, true})
          for (const int64_t n : ns) {
            const Case c{ta, tb, 29, n, k, 2, alpha, beta};
            if (const double err = run_case(c, rng, product); !(err < 1e-5)) return describe(c) + cat(": error ", err);
          }
  return "";
}

// Every test runs an AVX-512 kernel; where they do not run (own_sgemm_enabled() is false), each test
// skips with this reason.
constexpr const char* kNoKernel = "this CPU has no AVX-512 (or PLEXUS_GEMM=openblas): OpenBLAS does the products";
constexpr const char* kNoAvx2Kernel =
    "this CPU runs the AVX-512 kernel, or has no AVX2 and FMA (or PLEXUS_GEMM=openblas): the AVX2 kernel never runs";

}  // namespace

TEST(avx2TileEdgesEveryTranspose) {
  if (!cpu::avx2_sgemm_enabled()) SKIP(kNoAvx2Kernel);
  std::mt19937 rng(23);
  // Rows around the 6-row tile (7, 8 and 13, 14: the last two tiles share their rows; 9: they
  // do not) and the 24-row pass (25, 26, 50); columns around the 16-column panel and its 8-lane
  // halves, and the 256-column block; depths around the 8-deep transpose and the 256-deep block.
  const int64_t ms[] = {1, 2, 5, 6, 7, 8, 9, 13, 25, 26, 50};
  const int64_t ns[] = {1, 7, 8, 9, 15, 16, 17, 33, 256, 270};
  const int64_t ks[] = {1, 3, 8, 9, 17, 256, 257, 600};
  int cases = 0;
  const std::string worst = sweep(avx2, ms, ns, ks, rng, cases);
  VERIFY2(worst.empty(), worst);
  COMPARE(cases, 2 * 2 * 11 * 10 * 8);
}

TEST(avx2AlphaAndBetaOverDepthAndColumnBlocks) {
  if (!cpu::avx2_sgemm_enabled()) SKIP(kNoAvx2Kernel);
  std::mt19937 rng(29);
  // One column block, and two with a ragged second; three depth blocks of 200.
  const std::string worst = sweep_scales(avx2, {45, 300}, 600, rng);
  VERIFY2(worst.empty(), worst);
}

TEST(avx2TrainingShapes) {
  if (!cpu::avx2_sgemm_enabled()) SKIP(kNoAvx2Kernel);
  // The names transformer's products at sequence 256 (docs/performance.md), per row block and
  // attention tile, and the MLP's.
  std::mt19937 rng(31);
  const Case cases[] = {
      {false, true, 64, 256, 64, 0, 1.f, 1.f},     // FFN up: X · Wᵀ onto the bias rows
      {false, false, 512, 64, 256, 0, 1.f, 0.f},   // its input gradient: G · W
      {true, false, 256, 64, 4096, 0, 1.f, 1.f},   // its weight gradient, accumulated
      {false, true, 64, 64, 16, 0, 0.25f, 0.f},    // attention scores: Q · Kᵀ, scaled
      {false, false, 64, 16, 64, 0, 1.f, 1.f},     // P · V onto the output
      {true, false, 64, 16, 64, 0, 1.f, 1.f},      // dV += Pᵀ · dO
      {false, true, 100, 1024, 784, 0, 1.f, 0.f},  // MLP forward
      {true, false, 784, 1024, 100, 0, 1.f, 1.f},  // its weight gradient
  };
  for (const Case& c : cases) {
    const double err = run_case(c, rng, avx2);
    VERIFY2(err < 1e-5, describe(c) + cat(": error ", err));
  }
}

TEST(tileEdgesEveryTranspose) {
  if (!cpu::own_sgemm_enabled()) SKIP(kNoKernel);
  std::mt19937 rng(7);
  // Rows around the 12-row tile (13 to 15 and 27: the last two tiles share their rows;
  // 16: they do not) and the 16-row tile of panels at most 16 wide (17 to 19 and 35 share,
  // 20 does not), columns around the 32-column panel and its 16-lane halves (1, 15, 16 and the
  // last panels of 33 and 70 are narrow; past four panels A is packed first), depths around the
  // 16-deep transpose and the 256-deep panel.
  const int64_t ms[] = {1, 5, 11, 12, 13, 14, 15, 16, 17, 19, 20, 24, 25, 27, 35};
  const int64_t ns[] = {1, 15, 16, 17, 31, 32, 33, 48, 64, 70, 150};
  const int64_t ks[] = {1, 3, 16, 17, 255, 256, 257, 600};
  int cases = 0;
  const std::string worst = sweep(avx512, ms, ns, ks, rng, cases);
  VERIFY2(worst.empty(), worst);
  COMPARE(cases, 2 * 2 * 15 * 11 * 8);
}

TEST(alphaAndBeta) {
  if (!cpu::own_sgemm_enabled()) SKIP(kNoKernel);
  std::mt19937 rng(11);
  // A in place; A packed, two depth blocks over it.
  const std::string worst = sweep_scales(avx512, {45, 160}, 300, rng);
  VERIFY2(worst.empty(), worst);
}

TEST(trainingShapes) {
  if (!cpu::own_sgemm_enabled()) SKIP(kNoKernel);
  // The products of the benchmark workloads (docs/performance.md), whole.
  std::mt19937 rng(13);
  const Case cases[] = {
      {false, true, 100, 128, 784, 0, 1.f, 0.f},   // MLP forward: X · Wᵀ
      {true, false, 128, 784, 100, 0, 1.f, 1.f},   // its weight gradient, accumulated
      {false, false, 100, 784, 128, 0, 1.f, 0.f},  // input gradient: G · W
      {false, false, 20, 576, 25, 0, 1.f, 0.f},    // LeNet conv1 per image
      {false, true, 50, 500, 64, 0, 1.f, 1.f},     // conv2 weight gradient
      {true, false, 500, 64, 50, 0, 1.f, 0.f},     // conv2 input gradient
  };
  for (const Case& c : cases) {
    const double err = run_case(c, rng);
    VERIFY2(err < 1e-5, describe(c) + cat(": error ", err));
  }
}

TEST(packedColumnChunksMatchWholeProduct) {
  if (!cpu::own_sgemm_enabled()) SKIP(kNoKernel);
  // A product cut into column chunks, each run on op(A) packed once, whole (as the backend
  // does for wide products), gives own_sgemm's result bit for bit: every transpose, rows
  // around the 12-row tile (13: a shared last tile), one and three depth blocks, chunks of
  // one to three panels with a ragged last one.
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const int64_t m : {13, 24, 50})
        for (const int64_t k : {100, 600})
          for (const float beta : {0.f, 0.5f}) {
            const int64_t n = 200, lda = (ta ? m : k) + 1, ldb = (tb ? k : n) + 2, ldc = n + 3;
            std::vector<float> a(size_t((ta ? k : m) * lda)), b(size_t((tb ? n : k) * ldb)), c0(size_t(m * ldc));
            for (float& x : a) x = u(rng);
            for (float& x : b) x = u(rng);
            for (float& x : c0) x = u(rng);
            std::vector<float> whole = c0, chunked = c0;
            cpu::own_sgemm(ta, tb, m, n, k, 0.75f, a.data(), lda, b.data(), ldb, beta, whole.data(), ldc,
                           cpu::own_sgemm_thread_workspace());
            std::vector<float> packed(size_t(cpu::own_sgemm_packed_a_floats(m, k)) + 16);
            float* aligned = packed.data() + (64 - reinterpret_cast<std::uintptr_t>(packed.data()) % 64) % 64 / 4;
            cpu::own_sgemm_pack_a(aligned, ta, a.data(), lda, m, k);
            for (int64_t j0 = 0, width = 32; j0 < n; j0 += width, width = width % 96 + 32) {
              const int64_t cols = std::min(width, n - j0);
              cpu::own_sgemm_packed(tb, m, cols, k, 0.75f, aligned, tb ? b.data() + j0 * ldb : b.data() + j0, ldb,
                                    beta, chunked.data() + j0, ldc, cpu::own_sgemm_thread_workspace());
            }
            VERIFY2(std::memcmp(whole.data(), chunked.data(), whole.size() * sizeof(float)) == 0,
                    cat("ta=", ta, " tb=", tb, " m=", m, " k=", k, " beta=", beta));
          }
}

TEST(adamMatchesScalarFormulaBitForBit) {
  if (!cpu::own_sgemm_enabled()) SKIP(kNoKernel);
  // Lengths around the 16 lanes; plain, weight decay (L2 and decoupled), amsgrad, maximize;
  // moments of every size, a zero gradient, a NaN and an infinity among the gradients.
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (const int64_t n : {1, 15, 16, 17, 40}) {
    for (int variant = 0; variant < 5; ++variant) {
      Backend::AdamStep step{};
      step.lr = 1e-3;
      step.beta1 = 0.9;
      step.beta2 = 0.999;
      step.eps = 1e-8;
      step.step = 1 + variant * 3;
      step.weight_decay = variant == 1 || variant == 2 ? 0.01 : 0.0;
      step.decoupled = variant == 2;
      step.amsgrad = variant == 3;
      step.maximize = variant == 4;
      const Backend::AdamScalars k = Backend::adam_scalars(step);
      const float sign = step.maximize ? -1.f : 1.f;
      const size_t len = size_t(n);
      std::vector<float> p(len), g(len), m(len), v(len), vmax(len);
      for (int64_t i = 0; i < n; ++i) {
        p[size_t(i)] = normal(rng);
        g[size_t(i)] = i % 7 == 3 ? 0.f : normal(rng) * std::pow(10.f, float(i % 5) - 3.f);
        m[size_t(i)] = normal(rng) * 1e-2f;
        v[size_t(i)] = std::fabs(normal(rng)) * std::pow(10.f, -float(i % 9));
        vmax[size_t(i)] = v[size_t(i)] * (i % 2 ? 2.f : 0.5f);
      }
      if (n > 10) {
        g[9] = std::nanf("");
        g[10] = std::numeric_limits<float>::infinity();
      }
      std::vector<float> wp = p, wm = m, wv = v, wvmax = vmax;
      for (size_t i = 0; i < size_t(n); ++i)
        wp[i] = math::adam_update(p[i], g[i], wm[i], wv[i], step.amsgrad ? &wvmax[i] : nullptr, k, sign,
                                  k.weight_decay != 0.f);
      const cpu::AdamConstants c{k.beta1, k.one_minus_beta1, k.beta2, k.one_minus_beta2,
                                 k.weight_decay, k.step, k.eps, k.decay};
      cpu::adam_update(p.data(), g.data(), m.data(), v.data(), step.amsgrad ? vmax.data() : nullptr, n, c, sign,
                       k.weight_decay != 0.f);
      const auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
        return std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
      };
      const std::string what = cat("n=", n, " variant ", variant);
      VERIFY2(same(p, wp), what + ": parameters");
      VERIFY2(same(m, wm) && same(v, wv), what + ": moments");
      VERIFY2(same(vmax, wvmax), what + ": max of v");
    }
  }
}

