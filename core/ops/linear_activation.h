#pragma once
// act(x·Wᵀ + b) as one op: a Linear and the ReLU or GELU that alone reads it
// (ops/linear_activation.cpp).
#include "tensor/tensor.h"

namespace plexus {

enum class Activation { Relu, Gelu };

// act(linear(x, weight, bias)) with linear's checks, values and gradients.
Tensor linear_activation(const Tensor& x, const Tensor& weight, const Tensor& bias, Activation act);

}  // namespace plexus
