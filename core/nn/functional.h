#pragma once
// The functional layer: layers as free functions taking their weights explicitly
// (PyTorch's torch.nn.functional). Most are the core ops themselves; linear and embedding
// are composed here. Modules in nn/layers.h are thin owners of weights around these.
#include "ops/ops.h"

namespace plexus::nn::functional {

using plexus::adaptive_avg_pool2d;
using plexus::adaptive_max_pool2d;
using plexus::avg_pool1d;
using plexus::avg_pool2d;
using plexus::batch_norm;
using plexus::binary_cross_entropy_with_logits;
using plexus::conv1d;
using plexus::conv2d;
using plexus::conv_transpose2d;
using plexus::cross_entropy;
using plexus::dropout;
using plexus::dropout2d;
using plexus::elu;
using plexus::gelu;
using plexus::group_norm;
using plexus::hardsigmoid;
using plexus::hardswish;
using plexus::huber_loss;
using plexus::instance_norm;
using plexus::kl_div;
using plexus::l1_loss;
using plexus::leaky_relu;
using plexus::log_softmax;
using plexus::max_pool1d;
using plexus::max_pool2d;
using plexus::mish;
using plexus::mse_loss;
using plexus::nll_loss;
using plexus::prelu;
using plexus::relu;
using plexus::rms_norm;
using plexus::selu;
using plexus::sigmoid;
using plexus::silu;
using plexus::smooth_l1_loss;
using plexus::softmax;
using plexus::softplus;
using plexus::tanh;
using plexus::upsample_bilinear2d;
using plexus::upsample_nearest2d;
using plexus::zero_pad2d;

// x [*, in] · weightᵀ [in, out] + bias [out]; the transpose is a view folded into sgemm.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
// Rows of weight [num, dim] picked by whole-number indices of any shape -> [*idx, dim].
Tensor embedding(const Tensor& indices, const Tensor& weight);

}  // namespace plexus::nn::functional

namespace plexus {
namespace F = nn::functional;
}
