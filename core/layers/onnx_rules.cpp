#include "layers/onnx_rules.h"

namespace plexus::layers {

std::string OnnxContext::parameter(const std::string& param) const {
  const std::string full = node.id + "." + param;
  out.add_initializer(full, out.weights(full));
  return full;
}

}  // namespace plexus::layers
