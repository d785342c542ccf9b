#pragma once
// How a layer type exports as PyTorch code (core/export/pytorch_code.h). Each layer entry's
// `pytorch` rule (layers/lowering.h) writes what its node becomes in the exported nn.Module:
// a submodule made in __init__ (a torch.nn layer, named after the node) and the lines of
// forward that compute the node's outputs from its inputs, in inference mode as its ONNX rule
// computes them (Dropout a module that eval() turns off, BatchNorm its running statistics).
// The submodule keeps Plexus' parameter names: "<node id>.<param>" loads into
// "<submodule>.<param>", so a rule makes only modules whose state names and layouts are
// Plexus' own (torch.nn's Linear, Conv2d, LSTM, MultiheadAttention, ... are). A rule refuses a
// node it cannot express exactly by throwing CodeUnsupported; it never writes an approximation.
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "tensor/shape.h"

namespace plexus::layers {

class PytorchEmitter {
 public:
  virtual ~PytorchEmitter() = default;
  // `self.<submodule> = <constructor>` in __init__; the node's tensors load into it.
  virtual void module(const std::string& constructor) = 0;
  // One line of forward.
  virtual void line(const std::string& code) = 0;
  // A top-level definition (a helper class or function) the lines use, written once per name.
  virtual void helper(const std::string& name, const std::string& code) = 0;
};

// What a rule is given. Shapes are per example (the batch is dim 0 of every tensor).
struct PytorchContext {
  const graph::Node& node;
  const std::vector<Shape>& inputs;              // in port order, variadic ports expanded
  const std::vector<Shape>& outputs;             // one per output port
  const std::vector<std::string>& input_names;   // the Python variables holding the inputs
  const std::vector<std::string>& output_names;  // the variables to assign; "_" for an unused port
  const std::string& name;                       // the node's Python name: its submodule's and variables'
  const std::vector<int64_t>& columns;           // an Input's columns among the table's; else empty
  PytorchEmitter& out;

  const std::string& input() const { return input_names.at(0); }
  std::string self() const { return "self." + name; }  // the submodule, once module() made it
  std::string local(const std::string& what) const { return name + "_" + what; }  // a variable of its own
  bool used(size_t port) const { return output_names.at(port) != "_"; }
  // `<output> = <expression>` (nothing when the output already is that variable).
  void assign(const std::string& expression) const {
    if (output_names.at(0) != expression) out.line(output_names[0] + " = " + expression);
  }
};

using PytorchRule = std::function<void(const PytorchContext&)>;

// Thrown by a rule (and the C++ one); the exporter names the node before the reason.
struct CodeUnsupported {
  std::string reason;
};

// A Python literal: "0.1", "1e-05", "True", "(5, 1)".
std::string py(double v);
std::string py(bool v);
std::string py(const std::vector<int64_t>& v);  // a tuple
// A size as torch.nn's constructors take it: "3" for both axes alike, else "(5, 1)".
std::string py_size(int64_t h, int64_t w);
// ", name=value" when value differs from the default: the keyword arguments a hand-written
// constructor would give.
std::string py_kwarg(const std::string& name, const std::string& value, const std::string& default_value);

// A node that is one torch.nn module applied to its inputs: `self.<node> = <constructor>` in
// __init__ and `<output> = self.<node>(<inputs>)` in forward.
void pytorch_call(const PytorchContext& c, const std::string& constructor);

// pytorch_call with a constructor that needs none of the node's parameters, as any layer's typed
// rule (like onnx_op).
struct PytorchModule {
  std::string constructor;
  void operator()(const PytorchContext& c, const auto&...) const { pytorch_call(c, constructor); }
};
inline PytorchModule pytorch_module(std::string constructor) { return {std::move(constructor)}; }

}  // namespace plexus::layers
