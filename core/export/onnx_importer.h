#pragma once
// The state of one ONNX import (export/onnx_import.h), shared by the reader (onnx_import.cpp)
// and the op mappings (onnx_import_ops.cpp): what every ONNX tensor has become so far — a port
// of a Plexus node, or a constant — and the Plexus graph and weights being built.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "nn/module.h"
#include "tensor/tensor.h"

namespace plexus::exporter::onnx_import {

// A constant tensor: an initializer or a Constant node's value. Floats, or whole numbers (shapes,
// axes); `dims` its ONNX shape.
struct Constant {
  std::vector<int64_t> dims;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  bool integer = false;
  int64_t numel() const;
  Tensor tensor() const;  // float32 with `dims`
};

// An ONNX tensor computed by the graph: a port of a Plexus node, and its per-example shape
// (ONNX's shape inference, without the batch dimension) when known.
struct Value {
  graph::PortRef port;
  std::optional<Shape> shape;
};

// Thrown by a mapping for a node it cannot express; the importer lists it with the node's name.
struct Unmappable {
  std::string reason;
};

class Importer {
 public:
  // What an op's mapping is given: the node, and its inputs as values or constants.
  const onnx::NodeProto* node = nullptr;

  bool is_constant(size_t input) const;
  bool has_input(size_t input) const;  // present and not the empty name of an optional input
  const Constant& constant(size_t input) const;
  const Value& value(size_t input) const;
  std::optional<Shape> output_shape(size_t output = 0) const;  // per example, from shape inference

  // Attributes of `node`, with defaults.
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  float attr_float(const std::string& name, float fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& fallback = {}) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  bool has_attr(const std::string& name) const;

  // A new Plexus node of `type` fed by `inputs` (in order onto the type's ports: a variadic port
  // takes all of them); its output ports become this ONNX node's outputs in order. Returns its id.
  std::string add_node(const std::string& type, std::map<std::string, graph::ParamValue> params,
                       const std::vector<Value>& inputs);
  // The weight "<id>.<param>".
  void set_weight(const std::string& id, const std::string& param, const Tensor& value);
  // The ONNX output `output` is the value `v` (Identity, Dropout, a Cast that changes nothing).
  void alias(size_t output, const Value& v);
  void alias_constant(size_t output, const Constant& c);
  // How many ONNX nodes (and graph outputs) read the tensor.
  int consumers(const std::string& tensor) const;

  Tensor* weight(const std::string& full_name);  // null when it has none

  // Filled by the reader (onnx_import.cpp) before the nodes are mapped.
  std::map<std::string, Constant> constants;
  std::map<std::string, Value> values;
  std::map<std::string, Shape> inferred;  // tensor -> per-example shape
  std::map<std::string, int> consumer_count;
  std::set<std::string> containers;  // module paths that contain other modules' nodes
  graph::Graph built;
  nn::NamedTensors weights;
  // A MatMul's output -> the bias-less Linear it became, which the Add after it may give its bias.
  std::map<std::string, std::string> open_linear;
  // What exporters compute around a recurrent layer, which Plexus's LSTM and GRU do themselves:
  // tensors computed from a Shape (never materialised), tensors of zeros (ConstantOfShape 0: an
  // initial state), time-major transposes [T, N, F] of a batch-major value, and the raw outputs Y
  // [T, directions, N, H] of a recurrent node (the value its output port holds, batch-major).
  std::set<std::string> shape_values, zeros;
  // The nodes reading each tensor; nodes a mapping took in with an earlier one (a LayerNorm's
  // ReduceMean, Sub, Pow, ...), which the reader then skips.
  std::multimap<std::string, const onnx::NodeProto*> readers;
  std::set<const onnx::NodeProto*> absorbed;
  std::map<std::string, Value> time_major, recurrent_y, recurrent_y_tn;
  // A recurrent node's final hidden state Y_h [directions, N, H], and its transpose [N, directions, H]:
  // the value of its state port once reshaped to [N, directions * H] (Plexus's own export).
  std::map<std::string, Value> recurrent_h, recurrent_h_t;
  // Plexus's export of a recurrent layer's lengths input: the lengths clamped to [1, steps] (Max,
  // Min, then a Cast to int32, ONNX's sequence_lens), which Plexus's layers clamp themselves.
  struct ClampedLengths {
    Value lengths;
    float steps = 0;
  };
  std::map<std::string, ClampedLengths> sequence_lens;

  // Whether the mapping so far says what the tensor is (a value, a constant or one of the above).
  bool accounted_for(const std::string& tensor) const;

  // A fresh node or block id from `wanted` (sanitised to graph.h's rules, made unique).
  std::string unique_id(const std::string& wanted);
  std::string node_name();  // the Plexus name of a node made for `node`: its module path, or path.op

 private:
  std::set<std::string> used_ids_, used_names_;
};

using OpMapping = std::function<void(Importer&)>;
// The mapping of each supported op type (onnx_import_ops.cpp).
const std::map<std::string, OpMapping>& op_mappings();

// Multi-head self-attention from its first projection, the MatMul `im.node`
// (onnx_import_attention.cpp): as PyTorch 1.13 exports nn.MultiheadAttention (a time-major input
// by a constant [E, 3E]), and as Plexus's export writes its MultiheadAttention (the query's
// [E, E] projection into heads). False when the MatMul is not such a projection; Unmappable
// where the subgraph differs from what they map.
bool torch_attention(Importer& im);
bool plexus_attention(Importer& im);

// The node writing `tensor`, if any.
const onnx::NodeProto* producer(const Importer& im, const std::string& tensor);

// Module path of an ONNX node name: PyTorch's "/layer1/layer1.0/conv1/Conv" -> "layer1.0.conv1",
// Plexus's "conv1/Conv" -> "conv1", anything else -> "".
std::string module_path(const std::string& onnx_name);

}  // namespace plexus::exporter::onnx_import
