#pragma once
// Gradients with respect to chosen tensors, returned rather than accumulated: PyTorch's
// torch.autograd.grad, s4nnc's backward(to:). No tensor's .grad is read or written.
#include <vector>

#include "tensor/tensor.h"

namespace plexus::autograd {

// d(Σ_i ⟨outputs[i], grad_outputs[i]⟩) / d inputs[j], one tensor per input, each of the
// input's shape. inputs may be leaves or intermediate results (the gradient reaching that
// tensor). grad_outputs empty, or an undefined entry, means 1 for a one-element output.
// Without retain_graph the graph's traversed part is freed, as by backward(). An input the
// outputs do not depend on is an AutogradError, or with allow_unused an undefined tensor.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool allow_unused = false);

}  // namespace plexus::autograd
