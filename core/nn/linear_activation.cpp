#include "nn/linear_activation.h"

#include "nn/activation.h"
#include "nn/exactly.h"

namespace plexus::nn {

Linear* fusable_linear(Module* m) { return is_exactly<Linear>(m) ? static_cast<Linear*>(m) : nullptr; }

std::optional<Activation> fused_activation(const Module* m) {
  if (is_exactly<ReLU>(m)) return Activation::Relu;
  if (is_exactly<GELU>(m)) return Activation::Gelu;
  return std::nullopt;
}

Tensor forward_fused(Linear& linear, const Tensor& x, Activation act) {
  return linear_activation(x, linear.weight, linear.bias, act);
}

}  // namespace plexus::nn
