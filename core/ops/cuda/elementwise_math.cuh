#pragma once
// Every UnaryOp / BinaryOp on the device, as the CPU backend's lambdas: the smooth functions
// come from ops/scalar_math.h (shared with the CPU); NaN of the first operand wins Maximum /
// Minimum; Clamp keeps std::min / std::max's comparison order. Included by backend.cu only.
#include <cmath>

#include "ops/backend.h"
#include "ops/scalar_math.h"

namespace plexus::cuda {
namespace {

using math::gelu;
using math::gelu_grad;
using math::sigmoid;
using math::sign;
using math::softplus;

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
    case UnaryOp::Sign: return sign(x);
    case UnaryOp::Relu: return x > 0 ? x : 0.f;
    case UnaryOp::LeakyRelu: return x > 0 ? x : p0 * x;
    case UnaryOp::Sigmoid: return sigmoid(x);
    case UnaryOp::Tanh: return tanhf(x);
    case UnaryOp::Gelu: return gelu(x);
    case UnaryOp::Softplus: return softplus(x, p0, p1);
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
    case BinaryOp::GeluGrad: return x * gelu_grad(y);
    case BinaryOp::SoftplusGrad: return p0 * y > p1 ? x : x * sigmoid(p0 * y);
    case BinaryOp::PowGrad: return x * p0 * powf(y, p0 - 1.f);
    case BinaryOp::ClampGrad: return y >= p0 && y <= p1 ? x : 0.f;
    case BinaryOp::AbsGrad: return x * sign(y);
  }
  return x;
}

}  // namespace
}  // namespace plexus::cuda
