#include "graph/onnx_rules.h"

namespace plexus::graph {

std::string OnnxContext::parameter(const std::string& param) const {
  const std::string full = node.id + "." + param;
  out.add_initializer(full, out.weights(full));
  return full;
}

OnnxRule onnx_op(std::string op_type, OnnxAttributes attributes) {
  return [op_type = std::move(op_type), attributes = std::move(attributes)](const OnnxContext& c) {
    c.out.add_node(op_type, c.input_names, c.output_names, attributes);
  };
}

}  // namespace plexus::graph
