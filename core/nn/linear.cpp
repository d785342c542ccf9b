#include "nn/linear.h"

#include <cmath>

#include "nn/functional.h"
#include "nn/init.h"
#include "util/error.h"

namespace plexus::nn {

Linear::Linear(int64_t in, int64_t out, bool with_bias, Generator* gen) : in_(in), out_(out) {
  if (in < 1 || out < 1)
    throw ValueError("Linear: feature counts must be positive, got in=" + std::to_string(in) + ", out=" +
                     std::to_string(out));
  weight = register_parameter("weight", empty({out, in}));
  init::kaiming_uniform_(weight, std::sqrt(5.f), gen);
  if (with_bias) {
    bias = register_parameter("bias", empty({out}));
    const float bound = 1.f / std::sqrt(float(in));
    init::uniform_(bias, -bound, bound, gen);
  }
}

Tensor Linear::forward(const Tensor& x) { return functional::linear(x, weight, bias); }

std::string Linear::extra_repr() const {
  return "in=" + std::to_string(in_) + ", out=" + std::to_string(out_) + ", bias=" + (bias.defined() ? "true" : "false");
}

Embedding::Embedding(int64_t num, int64_t dim, Generator* gen) {
  if (num < 1 || dim < 1) throw ValueError("Embedding: sizes must be positive");
  weight = register_parameter("weight", empty({num, dim}));
  init::normal_(weight, 0.f, 1.f, gen);
}

Tensor Embedding::forward(const Tensor& indices) { return functional::embedding(indices, weight); }

std::string Embedding::extra_repr() const {
  return "num=" + std::to_string(weight.shape()[0]) + ", dim=" + std::to_string(weight.shape()[1]);
}

}  // namespace plexus::nn
