#pragma once
// What linear (y = x·Wᵀ + b, ops/matmul.cpp) shares with linear_activation (its activation fused,
// ops/linear_activation.cpp): the checks of its operands and its derivatives.
#include "autograd/node.h"
#include "tensor/tensor.h"

namespace plexus {

// x viewed as [rows, in] against weight [out, in].
struct LinearShape {
  int64_t rows, in, out;
};

// The shape of op(x, weight, bias), or a ShapeError naming `op`.
LinearShape linear_shape(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias);

// dx = dy·W, dW = dyᵀ·x ([out, in]), db = dy summed over rows, each where asked for, from the
// contiguous dy, x and weight: in the parameters' own layouts with no transposed view to copy.
Grads linear_grads(const Tensor& dy, const Tensor& x, const Tensor& weight, const LinearShape& s, bool need_x,
                   bool need_w, bool need_b);

}  // namespace plexus
