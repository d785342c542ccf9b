#pragma once
// Compares the gradients backward() computes with central differences. The output is
// projected on fixed random weights r, so one backward(r) checks the whole Jacobian-vector
// product; each input element that requires grad is perturbed by ±eps.
#include <functional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace plexus {

struct GradcheckOptions {
  float eps = 3e-3f;   // float32: large enough to beat rounding, small enough for curvature
  float atol = 2e-3f;
  float rtol = 1e-2f;
  uint64_t seed = 1234;  // of the projection weights
};

struct GradcheckResult {
  bool ok = true;
  std::string message;   // names the input, element, analytical and numerical values
  double max_error = 0;  // largest |analytical - numerical|
  int64_t checked = 0;   // elements compared
};

using TensorFunction = std::function<Tensor(const std::vector<Tensor>&)>;

GradcheckResult gradcheck(const TensorFunction& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

}  // namespace plexus
