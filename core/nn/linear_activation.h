#pragma once
// A Linear and the ReLU or GELU that alone reads it, run as one op (ops/linear_activation.h)
// by the graph compiler (layers/compiler.cpp).
#include <optional>

#include "nn/linear.h"
#include "ops/linear_activation.h"

namespace plexus::nn {

// m as a Linear that a fused activation may follow, or null.
Linear* fusable_linear(Module* m);
// The activation m is, when a Linear can take it into its product's epilogue: ReLU or GELU.
std::optional<Activation> fused_activation(const Module* m);
// act(linear.forward(x)) as one op.
Tensor forward_fused(Linear& linear, const Tensor& x, Activation act);

}  // namespace plexus::nn
