// act(x·Wᵀ + b) as one op, for a Linear whose only reader is its ReLU or GELU (the graph
// compiler's fusion, layers/compiler.cpp): the backend applies the bias and the activation to
// each block of the product while it is in cache (cpu::linear_forward_fused), instead of a
// second and third sweep over the output. Backward: dz = g ⊙ act'(z) on the saved
// pre-activation z (ReLU's on y, positive exactly where z is), then linear's derivatives.
// On a CUDA device linear and the activation run as two ops: the same values and gradients.
#include "ops/linear_activation.h"

#include "autograd/node.h"
#include "ops/cpu/linear_activation.h"
#include "ops/kernels.h"
#include "ops/linear.h"
#include "ops/ops.h"

namespace plexus {

Tensor linear_activation(const Tensor& x, const Tensor& weight, const Tensor& bias, Activation activation) {
  const UnaryOp act = activation == Activation::Gelu ? UnaryOp::Gelu : UnaryOp::Relu;
  const LinearShape s = linear_shape("linear_activation", x, weight, bias);
  if (!x.device().is_cpu() || s.in == 0 || s.out == 0) {  // an empty product: nothing to fuse
    const Tensor z = linear(x, weight, bias);
    return act == UnaryOp::Relu ? relu(z) : gelu(z);
  }
  const Tensor xc = contiguous_data(x), wc = contiguous_data(weight);
  const Tensor bc = bias.defined() ? contiguous_data(bias) : Tensor();
  Shape y_shape = x.shape();
  y_shape.back() = s.out;
  Tensor y = empty(y_shape, x.device());
  const bool grad = needs_grad(x, weight, bias), keep_pre = grad && act == UnaryOp::Gelu;
  const Tensor pre = keep_pre ? empty(y_shape, x.device()) : Tensor();
  cpu::linear_forward_fused(y.data(), keep_pre ? pre.data() : nullptr, xc.data(), wc.data(),
                            bc.defined() ? bc.data() : nullptr, act, s.rows, s.in, s.out);
  if (grad)
    record(
        y, "linear_activation", {x, weight, bias},
        [sx = Saved(xc), sw = Saved(wc), sz = Saved(keep_pre ? pre : y), s, act, need_x = x.requires_grad(),
         need_w = weight.requires_grad(), need_b = bias.defined() && bias.requires_grad()](const Tensor& g) -> Grads {
          const BinaryOp derivative = act == UnaryOp::Gelu ? BinaryOp::GeluGrad : BinaryOp::ReluGrad;
          const Tensor dz = contiguous_data(run_binary(derivative, g, sz.get(), "linear_activation"));
          return linear_grads(dz, sx.get(), sw.get(), s, need_x, need_w, need_b);
        });
  return y;
}

}  // namespace plexus
