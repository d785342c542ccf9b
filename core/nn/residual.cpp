#include "nn/residual.h"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <typeinfo>

#include "ops/residual.h"

namespace plexus::nn {

Dropout* fusable_dropout(Module* m) { return m && typeid(*m) == typeid(Dropout) ? static_cast<Dropout*>(m) : nullptr; }

LayerNorm* fusable_layer_norm(Module* m) {
  return m && typeid(*m) == typeid(LayerNorm) ? static_cast<LayerNorm*>(m) : nullptr;
}

bool fused_residual_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("PLEXUS_RESIDUAL");
    return !(e && std::strcmp(e, "unfused") == 0);
  }();
  return on;
}

std::vector<Tensor> residual_forward(const Tensor& a, const Tensor& b, const Dropout& drop, const LayerNorm* norm) {
  std::optional<ResidualNorm> n;
  if (norm) n = ResidualNorm{norm->weight, norm->bias, norm->eps()};
  const ResidualOutputs out = residual_dropout(a, b, drop.p(), drop.is_training(), drop.generator(), n);
  if (!norm) return {out.sum};
  return {out.sum, out.normed};
}

}  // namespace plexus::nn
