#pragma once
// How a layer type exports to ONNX. Each layer entry's `onnx` rule (layers/lowering.h) emits
// the ONNX nodes that compute its node in inference mode (Dropout passes values through,
// BatchNorm uses its running statistics) through OnnxEmitter, an interface: layers/ knows
// ONNX's operator names and attributes but not its file format, which core/export/onnx.cpp
// writes (with ONNX's own protobuf classes). A rule refuses a node it cannot express by
// throwing OnnxUnsupported.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "graph/graph.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace plexus::layers {

// An attribute of an ONNX node: INT, FLOAT, INTS or STRING.
using OnnxAttribute = std::variant<int64_t, float, std::vector<int64_t>, std::string>;
using OnnxAttributes = std::vector<std::pair<std::string, OnnxAttribute>>;

// ONNX's TensorProto.DataType FLOAT, INT32 and INT64, for Cast's `to`.
inline constexpr int64_t kOnnxFloat = 1;
inline constexpr int64_t kOnnxInt32 = 6;
inline constexpr int64_t kOnnxInt64 = 7;

class OnnxEmitter {
 public:
  virtual ~OnnxEmitter() = default;
  // A node computing the tensors `outputs` from the tensors `inputs` (names).
  virtual void add_node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const OnnxAttributes& attributes = {}) = 0;
  // A constant: float32 with the tensor's shape, or a 1-D int64 list (shapes).
  virtual void add_initializer(const std::string& name, const Tensor& value) = 0;
  virtual void add_initializer(const std::string& name, const std::vector<int64_t>& values) = 0;
  // The trained model's tensor of this name ("<node id>.<param>"); ValueError if it has none.
  virtual Tensor weights(const std::string& name) const = 0;
};

// What a rule is given. Shapes are per example (the batch is ONNX's dynamic dimension N).
struct OnnxContext {
  const graph::Node& node;
  const std::vector<Shape>& inputs;               // in port order, variadic ports expanded
  const std::vector<Shape>& outputs;              // one per output port
  const std::vector<std::string>& input_names;    // the ONNX tensors holding the inputs
  const std::vector<std::string>& output_names;   // the tensors the rule must produce
  // The standardisation the model's inputs get before the graph (the Input rule exports it):
  // one mean and std per channel (dim 1), or one for all; empty when there is none.
  const std::vector<float>& input_mean;
  const std::vector<float>& input_std;
  OnnxEmitter& out;  // where the nodes go

  // A name for a tensor of this node's own (an intermediate or a constant).
  std::string name(std::string_view what) const { return node.id + "/" + std::string(what); }
  // Adds the model's tensor "<node id>.<param>" as an initializer of that name; returns it.
  std::string parameter(const std::string& param) const;
};

using OnnxRule = std::function<void(const OnnxContext&)>;

// Thrown by a rule; the exporter names the node before the reason.
struct OnnxUnsupported {
  std::string reason;
};

// A rule of one node `op_type` from the node's inputs to its output, whatever the node's
// parameters (so it serves as any layer's typed rule too, layers/layer.h).
struct OnnxOp {
  std::string op_type;
  OnnxAttributes attributes;
  void operator()(const OnnxContext& c, const auto&...) const {
    c.out.add_node(op_type, c.input_names, c.output_names, attributes);
  }
};
inline OnnxOp onnx_op(std::string op_type, OnnxAttributes attributes = {}) {
  return {std::move(op_type), std::move(attributes)};
}

}  // namespace plexus::layers
