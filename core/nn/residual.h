#pragma once
// Dropout → Add → LayerNorm run as one op (ops/residual.h), whoever finds the pattern (the
// graph compiler's models): the Dropout on the residual branch and the LayerNorm reading the sum.
#include <vector>

#include "nn/activation.h"
#include "nn/normalization.h"

namespace plexus::nn {

// A Dropout / LayerNorm itself (not a subclass, whose forward may differ); null otherwise.
Dropout* fusable_dropout(Module* m);
LayerNorm* fusable_layer_norm(Module* m);

// Whether models run the pattern fused: yes, unless PLEXUS_RESIDUAL=unfused is in the
// environment at start (how a benchmark compares the two paths in one build).
bool fused_residual_enabled();

// a + drop(b) and, with `norm`, norm of that sum: {sum} or {sum, normed}, as the modules run
// one after another would give them (the mask drawn differently).
std::vector<Tensor> residual_forward(const Tensor& a, const Tensor& b, const Dropout& drop, const LayerNorm* norm);

}  // namespace plexus::nn
