#pragma once
// The residual step of a transformer block, Dropout → Add → LayerNorm, as one op: sum = a +
// dropout(b, p) and normed = layer_norm(sum) in one pass over each row on the CPU
// (ops/cpu/residual.cpp). Both outputs are differentiable: in a pre-norm block the next residual
// Add reads the sum, the next sublayer its norm.
#include <optional>

#include "tensor/generator.h"
#include "tensor/tensor.h"

namespace plexus {

// The LayerNorm applied to the sum (as layer_norm's arguments).
struct ResidualNorm {
  Tensor weight, bias;  // [D] each, undefined = none
  float eps = 1e-5f;
};

struct ResidualOutputs {
  Tensor sum;
  Tensor normed;  // undefined without a norm
};

// a and b of one shape; p in [0, 1]. The mask is counter-based: one number drawn from `gen`
// (default_generator() when null) keys it, so a seed reproduces a run, and backward recomputes
// it instead of keeping it. In evaluation (or with p = 0) the sum is exactly a + b. Off the CPU
// the unfused ops run (a + dropout(b), then layer_norm).
ResidualOutputs residual_dropout(const Tensor& a, const Tensor& b, float p, bool training, Generator* gen = nullptr,
                                 const std::optional<ResidualNorm>& norm = std::nullopt);

}  // namespace plexus
