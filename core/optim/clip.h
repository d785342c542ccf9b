#pragma once
// Gradient clipping, as torch.nn.utils.clip_grad_norm_ / clip_grad_value_. Parameters whose
// grad() is undefined are skipped; the gradients are changed in place.
#include <vector>

#include "tensor/tensor.h"

namespace plexus::optim {

// Scales the gradients so that their total norm (the norm of the per-tensor norms, i.e. of
// all gradients concatenated) is at most max_norm: every grad is multiplied by
// max_norm / (total + 1e-6) when that is below 1. norm_type is p > 0 or INFINITY (max |g|).
// Returns the total norm before clipping (0 when no parameter has a gradient). If that norm
// is not finite the gradients are left untouched and the caller decides (skip the step,
// lower a loss scale, ...). ValueError for max_norm < 0 or an unsupported norm_type.
float clip_grad_norm_(const std::vector<Tensor>& params, float max_norm, float norm_type = 2);

// Clamps every gradient element into [-clip, clip]; ValueError for clip < 0.
void clip_grad_value_(const std::vector<Tensor>& params, float clip);

}  // namespace plexus::optim
