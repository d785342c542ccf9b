#pragma once
// How a layer type exports as code: PyTorch (core/export/pytorch_code.h) and C++ against the
// core (core/export/cpp_code.h). Each layer entry's `pytorch` and `cpp` rules
// (layers/lowering.h) write what its node becomes in the exported model: a submodule (a
// torch.nn layer, or the core's nn:: one, named after the node) and the lines of forward that
// compute the node's outputs from its inputs, in inference mode as its ONNX rule computes
// them (Dropout a module that eval() turns off, BatchNorm its running statistics). The
// submodule keeps Plexus' parameter names: "<node id>.<param>" loads into
// "<submodule>.<param>", so a PyTorch rule makes only modules whose state names and layouts
// are Plexus' own (torch.nn's Linear, Conv2d, LSTM, MultiheadAttention, ... are). A rule
// refuses a node it cannot express exactly by throwing CodeUnsupported; it never writes an
// approximation.
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "tensor/shape.h"

namespace plexus::layers {

// Where a rule's code goes: one writer per language.
class CodeEmitter {
 public:
  virtual ~CodeEmitter() = default;
  // The node's submodule, made once from `constructor`, "nn.Linear(784, 128)" in Python (in
  // __init__: `self.<name> = ...`) or "nn::Linear(784, 128)" in C++ (a member registered under
  // the node's id); the node's tensors load into it.
  virtual void module(const std::string& constructor) = 0;
  virtual std::string member(const std::string& name) const = 0;  // the submodule: self.fc1, fc1
  // The submodule applied: self.fc1(x), fc1->forward(x).
  virtual std::string call(const std::string& name, const std::string& arguments) const = 0;
  // `variable = expression`: one line of forward in the language's own form.
  virtual void assign(const std::string& variable, const std::string& expression) = 0;
  // One line of forward, as it is.
  virtual void line(const std::string& code) = 0;
  // A top-level definition (a helper class or function) the lines use, written once per name.
  virtual void helper(const std::string& name, const std::string& code) = 0;
};

// What a rule is given. Shapes are per example (the batch is dim 0 of every tensor).
struct CodeContext {
  const graph::Node& node;
  const std::vector<Shape>& inputs;              // in port order, variadic ports expanded
  const std::vector<Shape>& outputs;             // one per output port
  const std::vector<std::string>& input_names;   // the variables holding the inputs
  const std::vector<std::string>& output_names;  // the variables to assign; "_" for an unused port
  const std::string& name;                       // the node's identifier: its submodule's and variables'
  const std::vector<int64_t>& columns;           // an Input's columns among the table's; else empty
  CodeEmitter& out;

  const std::string& input() const { return input_names.at(0); }
  std::string self() const { return out.member(name); }  // the submodule, once module() made it
  std::string call(const std::string& arguments) const { return out.call(name, arguments); }
  std::string local(const std::string& what) const { return name + "_" + what; }  // a variable of its own
  bool used(size_t port) const { return output_names.at(port) != "_"; }
  // `<output> = <expression>` (nothing when the output already is that variable).
  void assign(const std::string& expression) const {
    if (output_names.at(0) != expression) out.assign(output_names[0], expression);
  }
};

using CodeRule = std::function<void(const CodeContext&)>;

// Thrown by a rule; the exporter names the node before the reason.
struct CodeUnsupported {
  std::string reason;
};

// ---- PyTorch ----

// A Python literal: "0.1", "1e-05", "True", "(5, 1)".
std::string py(double v);
std::string py(bool v);
std::string py(const std::vector<int64_t>& v);  // a tuple
// A size as torch.nn's constructors take it: "3" for both axes alike, else "(5, 1)".
std::string py_size(int64_t h, int64_t w);
// ", name=value" when value differs from the default: the keyword arguments a hand-written
// constructor would give.
std::string py_kwarg(const std::string& name, const std::string& value, const std::string& default_value);

// ---- C++ ----

std::string cpp(double v);                       // a float literal: "0.1f", "1e-05f"
std::string cpp(bool v);                         // "true", "false"
std::string cpp(const std::vector<int64_t>& v);  // a braced list: "{0, 2, 1}"

// ---- both ----

// A node that is one module applied to its inputs: the submodule made from `constructor` and
// `<output> = <submodule>(<inputs>)` in forward.
void module_call(const CodeContext& c, const std::string& constructor);

// module_call with a constructor that needs none of the node's parameters, as any layer's typed
// rule (like onnx_op).
struct ModuleRule {
  std::string constructor;
  void operator()(const CodeContext& c, const auto&...) const { module_call(c, constructor); }
};
inline ModuleRule module_rule(std::string constructor) { return {std::move(constructor)}; }

}  // namespace plexus::layers
