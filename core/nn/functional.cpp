#include "nn/functional.h"

#include "util/error.h"

namespace plexus::nn::functional {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) { return plexus::linear(x, weight, bias); }

Tensor embedding(const Tensor& indices, const Tensor& weight) {
  if (weight.dim() != 2) throw ShapeError("embedding: weight must be [num, dim], got " + to_string(weight.shape()));
  Shape out = indices.shape();
  out.push_back(weight.shape()[1]);
  return index_select(weight, 0, indices.reshape({-1})).reshape(out);
}

}  // namespace plexus::nn::functional
