// precision: bf16 on the CPU (core/ops/cpu/sbgemm.h): our AVX512_BF16 matrix product and the
// convolutions and layers that run on it, against FP32.
//
// The stated tolerance. Rounding an operand to bfloat16 (8 significant bits, to nearest) moves it
// by at most 2^-8 of itself, so a term a·b becomes a·b·(1 + d) with |d| <= 2·2^-8 + 2^-16. The
// products of bf16 values are exact in FP32, and summing k of them in FP32 adds at most about
// (k + 2)·2^-24 of Σ|a||b|, as the FP32 result's own sum does. Hence, for every cell of depth k,
//   |bf16 result - FP32 result| <= (c · 2^-8 + 2 (k + 2) · 2^-24) · Σ|a||b|,  c = 2.1:
// 2 for the two operands' roundings, 0.1 a margin over d's 2^-16 (which it covers 25 times).
//
// Two further checks pin the kernel down, not just the bound: its result equals the product of
// the operands rounded to bfloat16 (to nearest, ties to even, in software here) up to FP32's
// summation error alone, and with PLEXUS_CPU_BF16=off (a CPU without AVX512_BF16) a bf16 run
// gives the FP32 result bit for bit. On a CPU without AVX512_BF16 every test skips. On one with
// AMX the products are checked with its tile kernel and with vdpbf16ps (PLEXUS_CPU_AMX=off).
#include "support/check.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ops/cpu/sbgemm.h"
#include "ops/cpu/sgemm.h"
#include "plexus.h"
#include "support/env.h"
#include "support/test_support.h"

using namespace plexus;
using testing::cat;

namespace {

constexpr double kC = 2.1;               // the tolerance's constant, derived above
constexpr double kBf16Unit = 1.0 / 256;  // 2^-8

// The stated bound for a cell of depth k whose terms' magnitudes sum to `scale`.
double bf16_bound(double scale, int64_t k) { return (kC * kBf16Unit + 2.0 * double(k + 2) / (1 << 24)) * scale; }
constexpr const char* kNoBf16 = "skipped: no AVX512_BF16 (this CPU computes bf16 runs in FP32)";

// x rounded to bfloat16, to nearest with ties to even (as vcvtne2ps2bf16), back as a float.
float round_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000u;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

std::vector<float> rounded(std::vector<float> v) {
  for (float& x : v) x = round_bf16(x);
  return v;
}

std::vector<float> absolute(std::vector<float> v) {
  for (float& x : v) x = std::fabs(x);
  return v;
}

// f(kernel name) with each bf16 kernel this CPU has switched on in turn.
template <class F>
void for_each_kernel(F&& f) {
  if (cpu::cpu_has_amx_bf16()) f("AMX");
  const testing::ScopedEnv off("PLEXUS_CPU_AMX", "off");
  f("AVX512_BF16");
}

struct Case {
  bool ta, tb;
  int64_t m, n, k;
  float alpha, beta;
};

std::string describe(const Case& c) {
  return cat("ta=", c.ta, " tb=", c.tb, " m=", c.m, " n=", c.n, " k=", c.k, " alpha=", c.alpha, " beta=", c.beta);
}

// One product by own_sbgemm, checked against the double product of the FP32 operands (the
// stated bound) and of the bf16-rounded ones (FP32 summation error only). Returns "" or what failed.
std::string check_case(const Case& c, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int64_t pad = 3;  // leading dimensions past the matrix: the kernel must keep to them
  const int64_t lda = (c.ta ? c.m : c.k) + pad, ldb = (c.tb ? c.k : c.n) + pad, ldc = c.n + pad;
  std::vector<float> a(size_t((c.ta ? c.k : c.m) * lda)), b(size_t((c.tb ? c.n : c.k) * ldb));
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  std::vector<float> c0(size_t(c.m * ldc));
  for (float& x : c0) x = u(rng);
  std::vector<float> out = c0;
  cpu::own_sbgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta, out.data(), ldc,
                  cpu::own_sgemm_thread_workspace());
  const auto exact = testing::reference_gemm(c.ta, c.tb, c.m, c.n, c.k, a.data(), lda, b.data(), ldb);
  const auto ra = rounded(a), rb = rounded(b);
  const auto of_rounded = testing::reference_gemm(c.ta, c.tb, c.m, c.n, c.k, ra.data(), lda, rb.data(), ldb);
  const auto aa = absolute(a), ab = absolute(b);
  const auto scale = testing::reference_gemm(c.ta, c.tb, c.m, c.n, c.k, aa.data(), lda, ab.data(), ldb);
  const double alpha = std::fabs(c.alpha), fp32_sum = double(c.k + 2) / (1 << 24);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = size_t(i * ldc + j), r = size_t(i * c.n + j);
      const double got = out[at];
      if (j >= c.n) {
        if (out[at] != c0[at]) return cat("cell (", i, ", ", j, ") past n was written");
        continue;
      }
      const double prior = double(c.beta) * c0[at];
      // beta·C and the scaling by alpha round once each in FP32.
      const double slack = (std::fabs(prior) + alpha * scale[r]) * 4.0 / (1 << 24);
      const double bound = bf16_bound(alpha * scale[r], c.k) + slack;
      const double err = std::fabs(got - (c.alpha * exact[r] + prior));
      if (!(err <= bound)) return cat("cell (", i, ", ", j, "): error ", err, " above the bf16 bound ", bound);
      const double tight = fp32_sum * alpha * scale[r] * 1.02 + slack;
      const double err_rounded = std::fabs(got - (c.alpha * of_rounded[r] + prior));
      if (!(err_rounded <= tight))
        return cat("cell (", i, ", ", j, "): ", err_rounded, " from the product of the bf16-rounded operands (allowed ",
                   tight, ")");
    }
  return "";
}

// Every cell of got within the stated bound of want; "" or what failed.
std::string within_bound(const std::vector<float>& got, const std::vector<float>& want, const std::vector<float>& scale,
                         int64_t depth) {
  if (got.size() != want.size() || got.size() != scale.size()) return "sizes differ";
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound = bf16_bound(scale[i], depth);
    const double err = std::fabs(double(got[i]) - want[i]);
    if (!(err <= bound)) return cat("cell ", i, ": bf16 ", got[i], ", fp32 ", want[i], ", bound ", bound);
  }
  return "";
}

// f(inputs) with the loss Σ f(inputs)·r: the output and each input's gradient, in `precision`.
template <class F>
std::vector<std::vector<float>> forward_backward(Precision precision, const std::vector<Tensor>& inputs,
                                                 const Tensor& r, F&& f) {
  const PrecisionGuard guard(precision);
  std::vector<Tensor> leaves;
  for (const Tensor& t : inputs) {
    leaves.push_back(t.detach());
    leaves.back().requires_grad_();
  }
  const Tensor y = f(leaves);
  y.backward(r);
  std::vector<std::vector<float>> out{y.to_vector()};
  for (const Tensor& t : leaves) out.push_back(t.grad().to_vector());
  return out;
}

// The output and gradients of f under bf16 against FP32's, each cell within the stated bound of
// its Σ|a||b| (f and its backward run in FP32 on the inputs' and r's absolute values, which sums
// exactly those); `depth` is the longest sum. Also: bf16 differs from FP32 somewhere (the kernel
// ran), and with the kernel off it equals FP32 bit for bit.
template <class F>
void check_layer(const std::vector<Tensor>& inputs, const Tensor& r, int64_t depth, F&& f) {
  const auto fp32 = forward_backward(Precision::FP32, inputs, r, f);
  const auto bf16 = forward_backward(Precision::BF16, inputs, r, f);
  std::vector<Tensor> magnitudes;
  for (const Tensor& t : inputs) magnitudes.push_back(abs(t));
  const auto scale = forward_backward(Precision::FP32, magnitudes, abs(r), f);
  bool differs = false;
  for (size_t i = 0; i < fp32.size(); ++i) {
    const std::string failed = within_bound(bf16[i], fp32[i], scale[i], depth);
    VERIFY2(failed.empty(), cat(i == 0 ? "output" : "gradient of input " + std::to_string(i - 1), ": ", failed));
    differs = differs || bf16[i] != fp32[i];
  }
  VERIFY2(differs, "bf16 gave FP32's result exactly: the bf16 kernel did not run");
  const testing::ScopedEnv off("PLEXUS_CPU_BF16", "off");  // as a CPU without AVX512_BF16
  VERIFY2(forward_backward(Precision::BF16, inputs, r, f) == fp32, "with PLEXUS_CPU_BF16=off bf16 is not FP32");
}

}  // namespace

// Shapes around every edge of the kernels: 12-row tiles (and the short ones after), AMX's 16- and
// 32-row blocks, 16- and 32-column halves and panels, odd depths (a pair with one k), 32-deep
// transposes and tiles, 256- and 512-deep blocks; every transpose.
TEST(productWithinBf16BoundEveryTranspose) {
  if (!cpu::cpu_has_bf16_products()) SKIP(kNoBf16);
  for_each_kernel([](const char* kernel) {
    std::mt19937 rng(49);
    const int64_t ms[] = {1, 5, 12, 13, 16, 17, 25, 32, 33, 100};
    const int64_t ns[] = {1, 15, 17, 32, 33, 70};
    const int64_t ks[] = {1, 2, 3, 31, 32, 33, 255, 257, 513, 784, 1100};
    int cases = 0;
    for (const bool ta : {false, true})
      for (const bool tb : {false, true})
        for (const int64_t m : ms)
          for (const int64_t n : ns)
            for (const int64_t k : ks) {
              if ((m * n * k) % 7 != 0 && m * n * k > 20000) continue;  // a spread of the large ones
              const Case c{ta, tb, m, n, k, 1.f, 0.f};
              const std::string failed = check_case(c, rng);
              VERIFY2(failed.empty(), cat(kernel, " ", describe(c), ": ", failed));
              ++cases;
            }
    VERIFY(cases > 300);
  });
}

TEST(alphaAndBeta) {
  if (!cpu::cpu_has_bf16_products()) SKIP(kNoBf16);
  for_each_kernel([](const char* kernel) {
    std::mt19937 rng(7);
    for (const float alpha : {1.f, -0.5f, 3.f})
      for (const float beta : {0.f, 1.f, -2.f})
        for (const bool ta : {false, true})
          for (const int64_t k : {300, 1100}) {  // one depth block and three
            const Case c{ta, !ta, 27, 45, k, alpha, beta};
            const std::string failed = check_case(c, rng);
            VERIFY2(failed.empty(), cat(kernel, " ", describe(c), ": ", failed));
          }
  });
}

// A depth as large as the bound is stated for, and a training step's products (MNIST MLP).
TEST(trainingShapesAndDeepProducts) {
  if (!cpu::cpu_has_bf16_products()) SKIP(kNoBf16);
  for_each_kernel([](const char* kernel) {
    std::mt19937 rng(3);
    for (const Case& c : {Case{false, true, 100, 1024, 784, 1.f, 0.f}, Case{true, false, 1024, 784, 100, 1.f, 0.f},
                          Case{false, false, 100, 784, 1024, 1.f, 0.f}, Case{false, false, 9, 20, 3000, 1.f, 1.f}}) {
      const std::string failed = check_case(c, rng);
      VERIFY2(failed.empty(), cat(kernel, " ", describe(c), ": ", failed));
    }
  });
}

// Where the CPU has AMX-BF16 the bf16 products use it, and PLEXUS_CPU_AMX=off turns it off.
TEST(amxChosenWhereTheCpuHasIt) {
  if (!cpu::cpu_has_bf16_products()) SKIP(kNoBf16);
  if (!cpu::cpu_has_amx_bf16()) {
    VERIFY(std::string(cpu::bf16_kernel()) == "AVX512_BF16");
    SKIP("skipped: no AMX-BF16 (or the kernel does not grant its tiles)");
  }
  VERIFY(std::string(cpu::bf16_kernel()) == "AMX");
  const testing::ScopedEnv off("PLEXUS_CPU_AMX", "off");
  VERIFY(!cpu::cpu_has_amx_bf16());
  VERIFY(std::string(cpu::bf16_kernel()) == "AVX512_BF16");
}

// Linear's forward and both gradients (the backend's gemm, split over threads), bf16 against FP32.
TEST(linearGradientsWithinBound) {
  if (!cpu::cpu_has_bf16_products()) SKIP(kNoBf16);
  Generator gen(11);
  const Tensor x = randn({67, 300}, &gen), w = randn({130, 300}, &gen), r = randn({67, 130}, &gen);
  check_layer({x, w}, r, 300, [](const std::vector<Tensor>& in) { return linear(in[0], in[1]); });
  // Batched products (attention's) run the same kernel.
  const Tensor a = randn({3, 20, 40}, &gen), b = randn({3, 40, 25}, &gen), rb = randn({3, 20, 25}, &gen);
  check_layer({a, b}, rb, 40, [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); });
}

struct ConvCase {
  std::string name;
  Shape x, w;
  Conv2dOptions opt;
};

std::vector<ConvCase> conv_cases() {
  return {
      {"lenet conv1", {8, 1, 28, 28}, {6, 1, 5, 5}, {}},
      {"lenet conv2", {8, 6, 12, 12}, {16, 6, 5, 5}, {}},
      {"padded", {4, 3, 9, 11}, {7, 3, 3, 3}, {.pad_h = 1, .pad_w = 1}},
      {"strided", {4, 5, 13, 10}, {9, 5, 3, 2}, {.stride_h = 2, .stride_w = 3, .pad_h = 1}},
      {"dilated", {3, 4, 12, 12}, {5, 4, 3, 3}, {.dilation_h = 2, .dilation_w = 2}},
      {"groups", {4, 6, 10, 10}, {9, 2, 3, 3}, {.pad_h = 1, .pad_w = 1, .groups = 3}},
  };
}

// Conv2d's forward, input and weight gradients, bf16 against FP32: LeNet's shapes, padding,
// stride, dilation and groups.
TEST_ROWS(conv2dGradientsWithinBound, conv_cases()) {
  if (!cpu::cpu_has_bf16_products()) SKIP(kNoBf16);
  Generator gen(5);
  const Tensor x = randn(row.x, &gen), w = randn(row.w, &gen);
  const Tensor r = randn(conv2d(x, w, Tensor(), row.opt).shape(), &gen);
  // The longest sum: the weight gradient's, over the batch's output positions.
  const int64_t depth = r.numel() / r.shape()[1];
  const Conv2dOptions opt = row.opt;
  check_layer({x, w}, r, depth, [opt](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], Tensor(), opt); });
}
