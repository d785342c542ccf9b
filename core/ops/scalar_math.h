#pragma once
// Scalar formulas both backends share, so the CPU and the GPU compute the same numbers: every
// UnaryOp and BinaryOp (unary<Op>, binary<Op>, reached from a runtime op through visit), the
// smooth nonlinearities with their derivatives, the windows of pooling, a row's cross-entropy
// and the optimizer steps per element. The host compiler builds them into the CPU backend;
// nvcc builds them for the device into the CUDA backend.
#include <math.h>

#include <cstdint>

#include "ops/backend.h"

#ifdef __CUDACC__
#define PLEXUS_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define PLEXUS_HOST_DEVICE inline
#endif

namespace plexus::math {

PLEXUS_HOST_DEVICE float sigmoid(float x) {
  // Two branches keep exp's argument non-positive: no overflow for large |x|.
  if (x >= 0) return 1.f / (1.f + expf(-x));
  const float e = expf(x);
  return e / (1.f + e);
}

// Exact (erf) GELU and its derivative Φ(x) + x φ(x).
PLEXUS_HOST_DEVICE float gelu(float x) { return 0.5f * x * (1.f + erff(x * float(M_SQRT1_2))); }
PLEXUS_HOST_DEVICE float gelu_grad(float x) {
  const float cdf = 0.5f * (1.f + erff(x * float(M_SQRT1_2)));
  const float pdf = expf(-0.5f * x * x) * float(0.5 * M_2_SQRTPI * M_SQRT1_2);
  return cdf + x * pdf;
}

// log(1 + exp(beta x)) / beta, linear above the threshold (as PyTorch).
PLEXUS_HOST_DEVICE float softplus(float x, float beta, float threshold) {
  const float bx = beta * x;
  return bx > threshold ? x : log1pf(expf(bx)) / beta;
}

PLEXUS_HOST_DEVICE float sign(float x) { return float((x > 0) - (x < 0)); }

// std::min(std::max(x, lo), hi) spelled out, in std's comparison order: a NaN x survives.
PLEXUS_HOST_DEVICE float clamp(float x, float lo, float hi) {
  const float m = x < lo ? lo : x;
  return hi < m ? hi : m;
}

// ELU with SELU's scale folded in, as PyTorch's elu(x, alpha, scale): scale·x for x > 0,
// scale·alpha·(e^x − 1) otherwise (expm1: accurate for small |x|), and its derivative.
PLEXUS_HOST_DEVICE float elu(float x, float alpha, float scale) {
  return x <= 0 ? scale * alpha * expm1f(x) : scale * x;
}
PLEXUS_HOST_DEVICE float elu_grad(float x, float alpha, float scale) {
  return x <= 0 ? scale * alpha * expf(x) : scale;
}

// SiLU x·σ(x) and its derivative σ(x)·(1 + x·(1 − σ(x))), through the stable sigmoid.
PLEXUS_HOST_DEVICE float silu(float x) { return x * sigmoid(x); }
PLEXUS_HOST_DEVICE float silu_grad(float x) {
  const float s = sigmoid(x);
  return s * (1.f + x * (1.f - s));
}

// Mish x·tanh(softplus(x)), softplus linear above 20 as PyTorch's (no overflow), and its
// derivative tanh(sp) + x·σ(x)·(1 − tanh²(sp)), as PyTorch computes it.
PLEXUS_HOST_DEVICE float mish(float x) { return x * tanhf(softplus(x, 1.f, 20.f)); }
PLEXUS_HOST_DEVICE float mish_grad(float x) {
  const float t = tanhf(softplus(x, 1.f, 20.f));
  return t + x * sigmoid(x) * (1.f - t * t);
}

// Hardsigmoid relu6(x + 3) / 6 and Hardswish x·relu6(x + 3) / 6, written as PyTorch's; their
// derivatives take PyTorch's sides at the kinks ±3.
PLEXUS_HOST_DEVICE float hardsigmoid(float x) { return clamp(x + 3.f, 0.f, 6.f) / 6.f; }
PLEXUS_HOST_DEVICE float hardsigmoid_grad(float x) { return x > -3.f && x < 3.f ? 1.f / 6.f : 0.f; }
PLEXUS_HOST_DEVICE float hardswish(float x) { return x * clamp(x + 3.f, 0.f, 6.f) / 6.f; }
PLEXUS_HOST_DEVICE float hardswish_grad(float x) { return x < -3.f ? 0.f : x <= 3.f ? x / 3.f + 0.5f : 1.f; }

// Arithmetic rounded op by op on both devices. nvcc fuses a product and a sum into one FMA
// (rounding once) where the host build (ISO C++: no contraction) rounds each; the _rn
// intrinsics forbid that on the device. Formulas whose GPU result must equal the CPU's bit for
// bit are spelled with these: Add's a + p0*b and the optimizer steps.
#ifdef __CUDA_ARCH__
PLEXUS_HOST_DEVICE float mul_rn(float a, float b) { return __fmul_rn(a, b); }
PLEXUS_HOST_DEVICE float add_rn(float a, float b) { return __fadd_rn(a, b); }
PLEXUS_HOST_DEVICE float sub_rn(float a, float b) { return __fsub_rn(a, b); }
PLEXUS_HOST_DEVICE float div_rn(float a, float b) { return __fdiv_rn(a, b); }
PLEXUS_HOST_DEVICE float sqrt_rn(float a) { return __fsqrt_rn(a); }
#else
PLEXUS_HOST_DEVICE float mul_rn(float a, float b) { return a * b; }
PLEXUS_HOST_DEVICE float add_rn(float a, float b) { return a + b; }
PLEXUS_HOST_DEVICE float sub_rn(float a, float b) { return a - b; }
PLEXUS_HOST_DEVICE float div_rn(float a, float b) { return a / b; }
PLEXUS_HOST_DEVICE float sqrt_rn(float a) { return sqrtf(a); }
#endif

// False for every op: the static_asserts below fire only for an op without a formula.
template <auto Op>
constexpr bool kNoFormula = false;

// Each UnaryOp on either device (on the host, expf, logf, ... are what std::exp etc. call for
// a float).
template <UnaryOp Op>
PLEXUS_HOST_DEVICE float unary(float x, [[maybe_unused]] float p0, [[maybe_unused]] float p1) {
  using enum UnaryOp;
  if constexpr (Op == Copy) return x;
  else if constexpr (Op == Neg) return -x;
  else if constexpr (Op == Exp) return expf(x);
  else if constexpr (Op == Log) return logf(x);
  else if constexpr (Op == Sqrt) return sqrtf(x);
  else if constexpr (Op == Abs) return fabsf(x);
  else if constexpr (Op == Sign) return sign(x);
  else if constexpr (Op == Relu) return x <= 0 ? 0.f : x;  // NaN stays NaN, as in PyTorch
  else if constexpr (Op == LeakyRelu) return x <= 0 ? p0 * x : x;
  else if constexpr (Op == Sigmoid) return sigmoid(x);
  else if constexpr (Op == Tanh) return tanhf(x);
  else if constexpr (Op == Gelu) return gelu(x);
  else if constexpr (Op == Softplus) return softplus(x, p0, p1);
  // x² exactly (powf need not round it correctly). p0 is the same for every element: the
  // CPU loop is unswitched on it, the GPU branch is uniform.
  else if constexpr (Op == Pow) return p0 == 2.f ? x * x : powf(x, p0);
  else if constexpr (Op == Clamp) return clamp(x, p0, p1);
  else if constexpr (Op == AddScalar) return x + p0;
  else if constexpr (Op == MulScalar) return x * p0;
  else if constexpr (Op == Elu) return elu(x, p0, p1);
  else if constexpr (Op == Silu) return silu(x);
  else if constexpr (Op == Mish) return mish(x);
  else if constexpr (Op == Hardswish) return hardswish(x);
  else if constexpr (Op == Hardsigmoid) return hardsigmoid(x);
  else static_assert(kNoFormula<Op>, "a UnaryOp without a formula");
}

// Each BinaryOp on either device; a NaN `a` wins Maximum / Minimum.
template <BinaryOp Op>
PLEXUS_HOST_DEVICE float binary(float a, float b, [[maybe_unused]] float p0, [[maybe_unused]] float p1) {
  using enum BinaryOp;
  if constexpr (Op == Add) return p0 == 1.f ? a + b : add_rn(a, mul_rn(p0, b));  // p0 == 1: one op less, same sum
  else if constexpr (Op == Sub) return a - b;
  else if constexpr (Op == Mul) return a * b;
  else if constexpr (Op == Div) return a / b;
  else if constexpr (Op == Maximum) return isnan(a) || a > b ? a : b;
  else if constexpr (Op == Minimum) return isnan(a) || a < b ? a : b;
  else if constexpr (Op == Eq) return float(a == b);
  else if constexpr (Op == Ne) return float(a != b);
  else if constexpr (Op == Lt) return float(a < b);
  else if constexpr (Op == Le) return float(a <= b);
  else if constexpr (Op == Gt) return float(a > b);
  else if constexpr (Op == Ge) return float(a >= b);
  else if constexpr (Op == Prelu) return a > 0 ? a : b * a;  // NaN stays NaN, as in PyTorch
  else if constexpr (Op == ReluGrad) return b > 0 ? a : 0.f;
  else if constexpr (Op == LeakyReluGrad) return b > 0 ? a : p0 * a;
  else if constexpr (Op == SigmoidGrad) return a * b * (1.f - b);
  else if constexpr (Op == TanhGrad) return a * (1.f - b * b);
  else if constexpr (Op == GeluGrad) return a * gelu_grad(b);
  else if constexpr (Op == SoftplusGrad) return p0 * b > p1 ? a : a * sigmoid(p0 * b);
  else if constexpr (Op == PowGrad) return a * p0 * powf(b, p0 - 1.f);
  else if constexpr (Op == ClampGrad) return b >= p0 && b <= p1 ? a : 0.f;
  else if constexpr (Op == AbsGrad) return a * sign(b);
  else if constexpr (Op == EluGrad) return a * elu_grad(b, p0, p1);
  else if constexpr (Op == SiluGrad) return a * silu_grad(b);
  else if constexpr (Op == MishGrad) return a * mish_grad(b);
  else if constexpr (Op == HardswishGrad) return a * hardswish_grad(b);
  else if constexpr (Op == HardsigmoidGrad) return a * hardsigmoid_grad(b);
  else static_assert(kNoFormula<Op>, "a BinaryOp without a formula");
}

// Calls f.template operator()<Op>() for the runtime `op`, one case per entry of the op lists
// (ops/backend.h). A CPU loop inside f is instantiated per op with its formula inlined; in a
// kernel the switch is one uniform branch.
#define PLEXUS_VISIT_CASE(name) \
  case decltype(op)::name: return f.template operator()<decltype(op)::name>();
template <class F>
PLEXUS_HOST_DEVICE decltype(auto) visit(UnaryOp op, F&& f) {
  switch (op) { PLEXUS_UNARY_OPS(PLEXUS_VISIT_CASE) }
  __builtin_unreachable();  // op is always one of the enumerators
}
template <class F>
PLEXUS_HOST_DEVICE decltype(auto) visit(BinaryOp op, F&& f) {
  switch (op) { PLEXUS_BINARY_OPS(PLEXUS_VISIT_CASE) }
  __builtin_unreachable();
}
#undef PLEXUS_VISIT_CASE

// One row's cross-entropy with label smoothing s, from the row's log-sum-exp, its target's
// logit and the sum of its c logits: (1 - s) (lse - x_t) + s (lse - mean(x)), in double.
PLEXUS_HOST_DEVICE float cross_entropy_loss(double lse, float target_logit, double logit_sum, int64_t c,
                                            float smoothing) {
  return float((1.0 - smoothing) * (lse - target_logit) + smoothing * (lse - logit_sum / double(c)));
}

// PyTorch's SGD for one element, with momentum buffer *buf (null without momentum): the new
// parameter.
PLEXUS_HOST_DEVICE float sgd_update(float p, float g, float* buf, const Backend::SgdStep& s) {
  float d = mul_rn(s.maximize ? -1.f : 1.f, g);
  if (s.weight_decay != 0.f) d = add_rn(d, mul_rn(s.weight_decay, p));
  if (buf) {
    const float b = s.first ? d : add_rn(mul_rn(s.momentum, *buf), mul_rn(1.f - s.dampening, d));
    *buf = b;
    d = s.nesterov ? add_rn(d, mul_rn(s.momentum, b)) : b;
  }
  return sub_rn(p, mul_rn(s.lr, d));
}

// PyTorch's Adam / AdamW for one element, with the scalars of Backend::adam_scalars and sign -1
// to maximize: updates the moments m, v (and *vmax, v's running maximum, unless null: amsgrad)
// and returns the new parameter. decay_grad is k.weight_decay != 0: a constant in the CPU's
// loops, which then have no branch.
PLEXUS_HOST_DEVICE float adam_update(float p, float g, float& m, float& v, float* vmax, const Backend::AdamScalars& k,
                                     float sign, bool decay_grad) {
  float d = mul_rn(sign, g);
  if (decay_grad) d = add_rn(d, mul_rn(k.weight_decay, p));
  m = add_rn(mul_rn(k.beta1, m), mul_rn(k.one_minus_beta1, d));
  v = add_rn(mul_rn(k.beta2, v), mul_rn(k.one_minus_beta2, mul_rn(d, d)));
  float denom = v;
  if (vmax) denom = *vmax = *vmax < v ? v : *vmax;  // std::max(*vmax, v)
  return sub_rn(mul_rn(p, k.decay), mul_rn(k.step, div_rn(m, add_rn(sqrt_rn(denom), k.eps))));
}

// The largest cell of output (y, x)'s pooling window over one [h, w] plane and its index in
// the plane (-1 when the window covers no cell); a NaN wins, as in PyTorch.
struct WindowMax {
  float value;
  int64_t at;
};
PLEXUS_HOST_DEVICE WindowMax window_max(const float* plane, const Backend::ConvGeometry& g, int64_t y, int64_t x) {
  WindowMax best{-INFINITY, -1};
  for (int64_t ki = 0; ki < g.kh; ++ki) {
    const int64_t iy = y * g.sh - g.ph + ki;
    if (iy < 0 || iy >= g.h) continue;
    for (int64_t kj = 0; kj < g.kw; ++kj) {
      const int64_t ix = x * g.sw - g.pw + kj;
      if (ix < 0 || ix >= g.w) continue;
      const float v = plane[iy * g.w + ix];
      if (best.at < 0 || v > best.value || v != v) best = {v, iy * g.w + ix};
    }
  }
  return best;
}

// Cells averaged at output (y, x): the window clipped to the padded image, or to the image
// itself when padding does not count (PyTorch's count_include_pad).
PLEXUS_HOST_DEVICE int64_t pool_count(const Backend::ConvGeometry& g, int64_t y, int64_t x, bool include_pad) {
  const int64_t y0 = y * g.sh - g.ph, x0 = x * g.sw - g.pw;
  const int64_t y1 = y0 + g.kh < g.h + g.ph ? y0 + g.kh : g.h + g.ph;
  const int64_t x1 = x0 + g.kw < g.w + g.pw ? x0 + g.kw : g.w + g.pw;
  if (include_pad) return (y1 - y0) * (x1 - x0);
  return ((y1 < g.h ? y1 : g.h) - (y0 > 0 ? y0 : 0)) * ((x1 < g.w ? x1 : g.w) - (x0 > 0 ? x0 : 0));
}

// Adaptive pooling's windows, PyTorch's: output i of `out` along an axis of `in` cells covers
// [floor(i * in / out), ceil((i + 1) * in / out)); neighbouring windows overlap when out does not
// divide in. adaptive_covering inverts it: the outputs whose windows hold input i.
struct Span {
  int64_t begin, end;
};
PLEXUS_HOST_DEVICE Span adaptive_span(int64_t i, int64_t in, int64_t out) {
  return {i * in / out, ((i + 1) * in + out - 1) / out};
}
PLEXUS_HOST_DEVICE Span adaptive_covering(int64_t i, int64_t in, int64_t out) {
  return {i * out / in, ((i + 1) * out + in - 1) / in};
}

// Output (y, x) of adaptive pooling over one [h, w] plane: the window's max and its index in the
// plane (scanned as window_max, a NaN wins), or its mean (summed in double) where argmax is null.
PLEXUS_HOST_DEVICE void adaptive_pool_cell(float* out, float* argmax, const float* plane,
                                           const Backend::AdaptiveGeometry& g, int64_t y, int64_t x) {
  const Span ys = adaptive_span(y, g.h, g.oh), xs = adaptive_span(x, g.w, g.ow);
  const int64_t o = y * g.ow + x;
  if (argmax) {
    WindowMax best{-INFINITY, -1};
    for (int64_t iy = ys.begin; iy < ys.end; ++iy)
      for (int64_t ix = xs.begin; ix < xs.end; ++ix) {
        const float v = plane[iy * g.w + ix];
        if (best.at < 0 || v > best.value || v != v) best = {v, iy * g.w + ix};
      }
    out[o] = best.value;
    argmax[o] = float(best.at);
    return;
  }
  double s = 0;
  for (int64_t iy = ys.begin; iy < ys.end; ++iy)
    for (int64_t ix = xs.begin; ix < xs.end; ++ix) s += plane[iy * g.w + ix];
  out[o] = float(s / double((ys.end - ys.begin) * (xs.end - xs.begin)));
}

// The gradient of input cell (iy, ix) of one plane, gathered from the outputs whose windows hold
// it in (y, x) order, so that both backends add in the same order without atomics: the outputs
// whose argmax it is (max), or each covering output's share (average, argmax null).
PLEXUS_HOST_DEVICE float adaptive_pool_grad(const float* grad_out, const float* argmax,
                                            const Backend::AdaptiveGeometry& g, int64_t iy, int64_t ix) {
  const Span ys = adaptive_covering(iy, g.h, g.oh), xs = adaptive_covering(ix, g.w, g.ow);
  const int64_t cell = iy * g.w + ix;
  float acc = 0.f;
  for (int64_t y = ys.begin; y < ys.end; ++y)
    for (int64_t x = xs.begin; x < xs.end; ++x) {
      const int64_t o = y * g.ow + x;
      if (argmax) {
        if (int64_t(argmax[o]) == cell) acc += grad_out[o];
      } else {
        const Span wy = adaptive_span(y, g.h, g.oh), wx = adaptive_span(x, g.w, g.ow);
        acc += grad_out[o] / float((wy.end - wy.begin) * (wx.end - wx.begin));
      }
    }
  return acc;
}

}  // namespace plexus::math
