#pragma once
// A Linear with its activation folded into the product's epilogue on the CPU (the kernel of
// ops/linear_activation.h): y = act(x·Wᵀ + b) with x [rows, in], weight [out, in] and bias [out]
// (null: none), all contiguous; pre, when not null, receives x·Wᵀ + b (what GELU's derivative
// reads). act is UnaryOp::Relu or UnaryOp::Gelu, or UnaryOp::Copy for none (a plain Linear with
// a bias: the bias rows are written block by block in cache, not over the whole output first);
// in > 0 and out > 0. Defined beside the CPU backend's products (cpu_backend.cpp), whose
// precision (bf16 or FP32) and kernels it uses.
#include <cstdint>

#include "ops/backend.h"

namespace plexus::cpu {

void linear_forward_fused(float* y, float* pre, const float* x, const float* weight, const float* bias, UnaryOp act,
                          int64_t rows, int64_t in, int64_t out);

}  // namespace plexus::cpu
