// Φ(x) = erfc(-x/√2) / 2 from one branch-free formula, so a loop of it vectorises (16 floats a
// vector on CPUs with AVX-512, 8 with AVX2, 4 with SSE2, picked at run time as in rnn_cells.cpp):
//   erfc(z) = t · Q(t) · exp(−z²),  t = 1 / (1 + z/2),  z = |x|/√2,
// Q a degree-10 fit of erfc(z)·exp(z²)/t on z ≤ 13/√2 (relative error 1.1e-8 with its float
// coefficients; Numerical Recipes' erfcc form, which fits log Q, refitted). The derivative's
// φ(x) = exp(−z²)/√(2π) shares the one exponential. z² = x²/2 is taken exactly (x² as a sum of
// two floats) and its rounding error carried into the exponential: an error of one ulp in
// z² = 85 would be 85 ulp in the exponential. Beyond |x| = 13, Φ is 0 or 1 in floats (Φ(−13)
// is below FLT_MIN times 13).
#include "ops/cpu/gelu.h"

#include <bit>
#include <cmath>
#include <cstdint>

#include "ops/cpu/isa.h"
#include "ops/recurrent_cells.h"

namespace plexus::cpu {
namespace {

constexpr float kTail = 13.f;

// e^(a + b) with the sum's rounding error carried (Knuth's two-sum): e^(s + err) ≈ e^s (1 + err).
[[gnu::always_inline]] inline float exp_of_sum(float a, float b) {
  const float s = a + b, v = s - a, err = (a - (s - v)) + (b - v);
  return math::gate_exp(s) * (1.f + err);
}

struct Normal {
  float cdf, pdf;  // Φ(x), φ(x)
};

[[gnu::always_inline]] inline Normal normal(float x) {
  const float a = std::fabs(x) < kTail ? std::fabs(x) : kTail;  // NaN: kTail, replaced below
  const float t = 1.f / (1.f + a * float(0.5 * M_SQRT1_2));
  const float s = t * 2.4346697f - 1.4346697f;  // t on [t(13/√2), 1] mapped to [-1, 1]
  float q = 4.1721446e-06f;
  q = q * s + 6.7700275e-06f;
  q = q * s - 5.706022e-05f;
  q = q * s - 3.0777621e-06f;
  q = q * s + 5.460503e-04f;
  q = q * s - 5.289265e-04f;
  q = q * s - 5.8504804e-03f;
  q = q * s + 5.3746197e-03f;
  q = q * s + 9.93848e-02f;
  q = q * s + 3.2444504e-01f;
  q = q * s + 5.766781e-01f;
  // a² = sq + sq_err, sq exact: a's upper 12 significant bits squared (Dekker's split; an FMA
  // would be a libm call on CPUs without one).
  const float a_hi = std::bit_cast<float>(std::bit_cast<uint32_t>(a) & 0xfffff000u), a_lo = a - a_hi;
  const float sq = a_hi * a_hi, sq_err = a_lo * (a + a_hi);
  const float e = exp_of_sum(-0.5f * sq_err, -0.5f * sq);  // e^(−z²)
  const float tail = (0.5f * t * q) * e;                    // Φ(−a); e last: the product may be subnormal
  const bool inside = std::fabs(x) < kTail;
  const float step = x > 0 ? 1.f : 0.f;
  const float cdf = inside ? (x > 0 ? 1.f - tail : tail) : step;
  const float pdf = inside ? e * float(0.5 * M_2_SQRTPI * M_SQRT1_2) : 0.f;  // zero beyond the tail
  return {cdf, pdf};
}

// x · Φ(x): x · 0 is NaN for x = −inf, as math::gelu's 0.5·x·(1 + erf) is.
[[gnu::always_inline]] inline void gelu_run(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * normal(x[i]).cdf;
}

// g · (Φ(x) + x·φ(x)): x·φ is NaN for x = ±inf, as in math::gelu_grad.
[[gnu::always_inline]] inline void gelu_backward_run(float* gx, const float* g, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const Normal d = normal(x[i]);
    gx[i] = g[i] * (d.cdf + x[i] * d.pdf);
  }
}

void gelu_baseline(float* y, const float* x, int64_t n) { gelu_run(y, x, n); }
void gelu_backward_baseline(float* gx, const float* g, const float* x, int64_t n) { gelu_backward_run(gx, g, x, n); }

#ifdef PLEXUS_CPU_ISA_COPIES
#define PLEXUS_GELU_COPY(suffix, isa)                                                                           \
  [[gnu::target(isa)]] void gelu_##suffix(float* y, const float* x, int64_t n) { gelu_run(y, x, n); }          \
  [[gnu::target(isa)]] void gelu_backward_##suffix(float* gx, const float* g, const float* x, int64_t n) {     \
    gelu_backward_run(gx, g, x, n);                                                                             \
  }
PLEXUS_GELU_COPY(avx512, "avx512f,avx512vl,fma")
PLEXUS_GELU_COPY(avx2, "avx2,fma")
#undef PLEXUS_GELU_COPY
#endif

}  // namespace

void gelu(float* y, const float* x, int64_t n) {
#ifdef PLEXUS_CPU_ISA_COPIES
  if (kAvx512) return gelu_avx512(y, x, n);
  if (kAvx2) return gelu_avx2(y, x, n);
#endif
  gelu_baseline(y, x, n);
}

void gelu_backward(float* gx, const float* g, const float* x, int64_t n) {
#ifdef PLEXUS_CPU_ISA_COPIES
  if (kAvx512) return gelu_backward_avx512(gx, g, x, n);
  if (kAvx2) return gelu_backward_avx2(gx, g, x, n);
#endif
  gelu_backward_baseline(gx, g, x, n);
}

}  // namespace plexus::cpu
