#include "nn/functional.h"

#include "util/error.h"

namespace plexus::nn::functional {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (weight.dim() != 2) throw ShapeError("linear: weight must be [out, in], got " + to_string(weight.shape()));
  if (x.dim() < 1 || x.shape().back() != weight.shape()[1])
    throw ShapeError("linear: input " + to_string(x.shape()) + " does not end in " +
                     std::to_string(weight.shape()[1]) + " features (weight " + to_string(weight.shape()) + ")");
  const Tensor y = matmul(x, weight.t());
  return bias.defined() ? y + bias : y;
}

Tensor embedding(const Tensor& indices, const Tensor& weight) {
  if (weight.dim() != 2) throw ShapeError("embedding: weight must be [num, dim], got " + to_string(weight.shape()));
  Shape out = indices.shape();
  out.push_back(weight.shape()[1]);
  return index_select(weight, 0, indices.reshape({-1})).reshape(out);
}

}  // namespace plexus::nn::functional
