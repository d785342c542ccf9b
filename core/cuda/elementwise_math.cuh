#pragma once
// The scalar formulas of every UnaryOp / BinaryOp on the device, written as the CPU backend's
// lambdas (core/ops/cpu/cpu_backend.cpp) so both devices agree: two-branch sigmoid, exact erf
// GELU, softplus with threshold, NaN of the first operand winning Maximum / Minimum, std::min /
// std::max's comparison order in Clamp. Included by backend.cu only.
#include <cmath>

#include "ops/backend.h"

namespace plexus::cuda {
namespace {

constexpr float kSqrt1_2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = float(0.5 * 1.12837916709551257390 * 0.70710678118654752440);  // 0.5 * M_2_SQRTPI * M_SQRT1_2

__device__ __forceinline__ float sigmoid_f(float x) {
  // Two branches keep exp's argument non-positive: no overflow for large |x|.
  if (x >= 0) return 1.f / (1.f + expf(-x));
  const float e = expf(x);
  return e / (1.f + e);
}

__device__ __forceinline__ float gelu_f(float x) { return 0.5f * x * (1.f + erff(x * kSqrt1_2)); }

__device__ __forceinline__ float gelu_grad_f(float x) {
  const float cdf = 0.5f * (1.f + erff(x * kSqrt1_2));
  const float pdf = expf(-0.5f * x * x) * kInvSqrt2Pi;
  return cdf + x * pdf;
}

__device__ __forceinline__ float softplus_f(float x, float beta, float threshold) {
  const float bx = beta * x;
  return bx > threshold ? x : log1pf(expf(bx)) / beta;
}

__device__ __forceinline__ float sign_f(float x) { return float((x > 0) - (x < 0)); }

// std::max(a, b) is (a < b) ? b : a and std::min(a, b) is (b < a) ? b : a: a NaN `x` survives.
__device__ __forceinline__ float clamp_f(float x, float lo, float hi) {
  const float m = x < lo ? lo : x;
  return hi < m ? hi : m;
}

// The op is the same for every element of a launch, so the switch is a uniform branch.
__device__ __forceinline__ float unary_math(UnaryOp op, float x, float p0, float p1) {
  switch (op) {
    case UnaryOp::Copy: return x;
    case UnaryOp::Neg: return -x;
    case UnaryOp::Exp: return expf(x);
    case UnaryOp::Log: return logf(x);
    case UnaryOp::Sqrt: return sqrtf(x);
    case UnaryOp::Abs: return fabsf(x);
    case UnaryOp::Sign: return sign_f(x);
    case UnaryOp::Relu: return x > 0 ? x : 0.f;
    case UnaryOp::LeakyRelu: return x > 0 ? x : p0 * x;
    case UnaryOp::Sigmoid: return sigmoid_f(x);
    case UnaryOp::Tanh: return tanhf(x);
    case UnaryOp::Gelu: return gelu_f(x);
    case UnaryOp::Softplus: return softplus_f(x, p0, p1);
    case UnaryOp::Pow: return p0 == 2.f ? x * x : powf(x, p0);
    case UnaryOp::Clamp: return clamp_f(x, p0, p1);
    case UnaryOp::AddScalar: return x + p0;
    case UnaryOp::MulScalar: return x * p0;
  }
  return x;
}

__device__ __forceinline__ float binary_math(BinaryOp op, float x, float y, float p0, float p1) {
  switch (op) {
    // a + p0*b; __fmul_rn keeps the product rounded on its own (no FMA), as on the CPU.
    case BinaryOp::Add: return p0 == 1.f ? x + y : __fadd_rn(x, __fmul_rn(p0, y));
    case BinaryOp::Sub: return x - y;
    case BinaryOp::Mul: return x * y;
    case BinaryOp::Div: return x / y;
    case BinaryOp::Maximum: return isnan(x) || x > y ? x : y;
    case BinaryOp::Minimum: return isnan(x) || x < y ? x : y;
    case BinaryOp::Eq: return float(x == y);
    case BinaryOp::Ne: return float(x != y);
    case BinaryOp::Lt: return float(x < y);
    case BinaryOp::Le: return float(x <= y);
    case BinaryOp::Gt: return float(x > y);
    case BinaryOp::Ge: return float(x >= y);
    case BinaryOp::ReluGrad: return y > 0 ? x : 0.f;
    case BinaryOp::LeakyReluGrad: return y > 0 ? x : p0 * x;
    case BinaryOp::SigmoidGrad: return x * y * (1.f - y);
    case BinaryOp::TanhGrad: return x * (1.f - y * y);
    case BinaryOp::GeluGrad: return x * gelu_grad_f(y);
    case BinaryOp::SoftplusGrad: return p0 * y > p1 ? x : x * sigmoid_f(p0 * y);
    case BinaryOp::PowGrad: return x * p0 * powf(y, p0 - 1.f);
    case BinaryOp::ClampGrad: return y >= p0 && y <= p1 ? x : 0.f;
    case BinaryOp::AbsGrad: return x * sign_f(y);
  }
  return x;
}

}  // namespace
}  // namespace plexus::cuda
