#pragma once
// Module: a layer or a model. It registers named parameters (trainable leaves), buffers
// (state such as running statistics) and submodules, so that parameters(), state saving,
// train()/eval() and to(device) work recursively over a whole model, as in PyTorch.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace plexus::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;

  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }

  virtual std::string type_name() const = 0;   // "Linear"
  virtual std::string extra_repr() const { return ""; }  // "in=784, out=128"
  std::string str() const;                      // the module tree, PyTorch style

  // Recursive, in registration order; names are dotted paths ("0.weight", "features.1.bias").
  std::vector<Tensor> parameters() const;
  NamedTensors named_parameters() const;
  std::vector<Tensor> buffers() const;
  NamedTensors named_buffers() const;
  NamedTensors state() const;  // parameters then buffers: what a checkpoint holds
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const { return children_; }
  int64_t num_parameters() const;
  // Those of the parameters that train: the ones that require grad (frozen modules' do not).
  int64_t num_trainable_parameters() const;

  // A frozen module stays in evaluation mode.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Fine-tuning: this module and its submodules keep their values. Their parameters stop
  // requiring grad, so backward computes no gradient for them (nor for anything before them
  // that only they need) and an optimizer cannot take them; they run as in evaluation whatever
  // train() says, so BatchNorm normalises with its running statistics and leaves them as they
  // are (PyTorch's recipe: requires_grad_(False) and eval() on the frozen part).
  void freeze();
  bool is_frozen() const { return frozen_; }
  void zero_grad();
  // Moves every parameter and buffer; the Tensor handles stay valid (their storage is
  // replaced in place), so optimizers and layers keep working. The seam for CUDA.
  void to(Device device);
  // Where the parameters are (a run sends its batches there); the CPU for a model without any.
  Device device() const;

  // Hidden state a layer keeps from one forward call to the next: recurrent layers carry it
  // (detached) across consecutive batches of a text stream for truncated backpropagation
  // through time, in training mode only. Both apply to this module and every submodule; a
  // run turns carrying on for stateful training and resets the state at each epoch's start.
  void set_carry_state(bool on);
  void reset_state();
  // The carried state by dotted name ("1.h.0"): what the next training batch starts from, for a
  // checkpoint taken between two batches. load_carried_state gives it back to a model of the
  // same structure (carrying on); names it does not know are an error (ValueError).
  NamedTensors carried_state() const;
  void load_carried_state(const NamedTensors& state);

 protected:
  // What set_carry_state / reset_state do to this module alone; layers without state ignore them.
  virtual void on_carry_state(bool) {}
  virtual void on_reset_state() {}
  // This module's own carried tensors, named without its prefix, and back.
  virtual void own_carried_state(NamedTensors&) const {}
  virtual void load_own_carried_state(const NamedTensors& state);
  // Registers `t` as a trainable leaf and returns the handle the layer keeps.
  Tensor register_parameter(std::string name, Tensor t);
  Tensor register_buffer(std::string name, Tensor t);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> m) {
    add_child(std::move(name), m);
    return m;
  }
  void add_child(std::string name, std::shared_ptr<Module> m);

 private:
  void collect(const std::string& prefix, bool params, NamedTensors& out) const;
  void collect_carried(const std::string& prefix, NamedTensors& out) const;
  void check_name(const std::string& name) const;

  NamedTensors params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  bool frozen_ = false;
};

using ModulePtr = std::shared_ptr<Module>;

}  // namespace plexus::nn
