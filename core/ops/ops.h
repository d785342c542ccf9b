#pragma once
// Every differentiable op of the core. Each is defined next to its derivative in ops/*.cpp;
// docs/ops.md lists them with their gradient-check status. Broadcasting follows NumPy.
#include <optional>
#include <vector>

#include "tensor/tensor.h"

namespace plexus {

// ---- elementwise arithmetic (broadcasting) -------------------------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& a);
Tensor add(const Tensor& a, float s);
Tensor mul(const Tensor& a, float s);
Tensor pow(const Tensor& a, float exponent);
Tensor maximum(const Tensor& a, const Tensor& b);  // elementwise; ties split the gradient
Tensor minimum(const Tensor& a, const Tensor& b);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, float s);
Tensor operator+(float s, const Tensor& a);
Tensor operator-(const Tensor& a, float s);
Tensor operator-(float s, const Tensor& a);
Tensor operator*(const Tensor& a, float s);
Tensor operator*(float s, const Tensor& a);
Tensor operator/(const Tensor& a, float s);
Tensor operator/(float s, const Tensor& a);

// ---- elementwise functions -----------------------------------------------------------
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor clamp(const Tensor& a, std::optional<float> lo, std::optional<float> hi);
Tensor relu(const Tensor& a);
Tensor leaky_relu(const Tensor& a, float negative_slope = 0.01f);
Tensor sigmoid(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor gelu(const Tensor& a);  // exact (erf) form
Tensor softplus(const Tensor& a, float beta = 1.f, float threshold = 20.f);
Tensor elu(const Tensor& a, float alpha = 1.f);
Tensor selu(const Tensor& a);
Tensor silu(const Tensor& a);         // x·σ(x)
Tensor mish(const Tensor& a);         // x·tanh(softplus(x))
Tensor hardswish(const Tensor& a);    // x·relu6(x + 3)/6
Tensor hardsigmoid(const Tensor& a);  // relu6(x + 3)/6
// x for x > 0, weight·x otherwise; weight [1] for every element or [C], one per channel of
// dim 1 (PyTorch's prelu). Its gradient is summed over the elements each slope serves.
Tensor prelu(const Tensor& a, const Tensor& weight);

// ---- comparisons and selection (no gradient through the mask) -------------------------
Tensor eq(const Tensor& a, const Tensor& b);  // 1.0 where true, 0.0 where false
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);  // cond != 0 picks a
Tensor masked_fill(const Tensor& a, const Tensor& mask, float value);

// ---- reductions (empty dims = all dims) --------------------------------------------------
Tensor sum(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor max(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor min(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// Sums a broadcast result back to `shape` (the adjoint of expand).
Tensor sum_to(const Tensor& a, const Shape& shape);

// ---- linear algebra --------------------------------------------------------------------
// 1-D, 2-D and batched (broadcast batch dims) products through sgemm; transposed views
// are passed to BLAS as transposes, not copied.
Tensor matmul(const Tensor& a, const Tensor& b);
// x [..., in] · weightᵀ [in, out] + bias [out] (undefined = none), as one product.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// ---- shape and indexing ----------------------------------------------------------------
Tensor reshape(const Tensor& a, const Shape& shape);  // a view when strides allow, else a copy
Tensor view(const Tensor& a, const Shape& shape);     // a view or a ShapeError
Tensor transpose(const Tensor& a, int64_t d0, int64_t d1);
Tensor permute(const Tensor& a, const std::vector<int64_t>& dims);
Tensor flatten(const Tensor& a, int64_t start = 0, int64_t end = -1);
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, int64_t dim);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor expand(const Tensor& a, const Shape& shape);  // -1 keeps a dim
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
// torch.split with a list: consecutive views of `sizes` along dim, which must sum to its size.
std::vector<Tensor> split(const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim);
// torch.chunk: views of ceil(size / chunks) along dim, the last smaller; so fewer than `chunks`
// pieces where that size covers dim sooner (6 in 4 chunks: three of 2).
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim);
Tensor contiguous(const Tensor& a);
Tensor concat(const std::vector<Tensor>& ts, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& ts, int64_t dim = 0);
// Indices are float tensors holding whole numbers (exact up to 2^24); they are checked.
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index);

// ---- neural-network ops ------------------------------------------------------------------
Tensor softmax(const Tensor& a, int64_t dim);
Tensor log_softmax(const Tensor& a, int64_t dim);
Tensor dropout(const Tensor& a, float p, bool training, Generator* gen = nullptr);
// Zeroes whole channels of a [N, C, H, W]: each (example, channel) kept with probability 1-p and
// scaled by 1/(1-p) in training; identity in eval (PyTorch's dropout2d on 4-D input).
Tensor dropout2d(const Tensor& a, float p, bool training, Generator* gen = nullptr);

struct Conv2dOptions {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
};
// x: [N, C, H, W], weight: [O, C/groups, kH, kW], bias: [O] or undefined.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              const Conv2dOptions& opt = {});
// conv2d, then relu when `relu`, then max_pool2d with a 2x2 window at stride 2 when
// `max_pool`: the same values and gradients as those ops, as one op whose epilogue folds
// them into the convolution where the backend can (the CPU's with AVX-512), without storing
// the full-size activations in between. nn::Sequential picks it for Conv2d → ReLU → MaxPool2d(2).
Tensor conv2d_relu_max_pool2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dOptions& opt,
                              bool relu, bool max_pool);

// x: [N, C, L], weight: [O, C/groups, k], bias: [O] or undefined: conv2d over [N, C, 1, L].
struct Conv1dOptions {
  int64_t stride = 1, pad = 0, dilation = 1, groups = 1;
};
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), const Conv1dOptions& opt = {});
// The transpose of conv2d (a "deconvolution"), PyTorch's conv_transpose2d: x [N, C, H, W],
// weight [C, O/groups, kH, kW], bias [O] or undefined -> [N, O, H', W'] with
// H' = (H - 1)·stride - 2·pad + dilation·(kH - 1) + output_pad + 1; output_pad < stride.
struct ConvTranspose2dOptions {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t output_pad_h = 0, output_pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
};
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        const ConvTranspose2dOptions& opt = {});

struct Pool2dOptions {
  int64_t kernel_h = 2, kernel_w = 2;
  int64_t stride_h = 0, stride_w = 0;  // 0 = kernel size
  int64_t pad_h = 0, pad_w = 0;
  bool count_include_pad = true;  // avg_pool2d only
};
Tensor max_pool2d(const Tensor& x, const Pool2dOptions& opt);
Tensor avg_pool2d(const Tensor& x, const Pool2dOptions& opt);
// x: [N, C, L]; the 2-D pooling of [N, C, 1, L] with a 1 x kernel window.
struct Pool1dOptions {
  int64_t kernel = 2;
  int64_t stride = 0;  // 0 = kernel size
  int64_t pad = 0;
  bool count_include_pad = true;  // avg_pool1d only
};
Tensor max_pool1d(const Tensor& x, const Pool1dOptions& opt);
Tensor avg_pool1d(const Tensor& x, const Pool1dOptions& opt);
// x: [N, C, H, W] enlarged by whole factors: each cell repeated (nearest), or interpolated
// linearly between its neighbours (bilinear: PyTorch's half-pixel source coordinates, or the
// corners aligned with align_corners).
Tensor upsample_nearest2d(const Tensor& x, int64_t scale_h, int64_t scale_w);
Tensor upsample_bilinear2d(const Tensor& x, int64_t scale_h, int64_t scale_w, bool align_corners = false);
// x: [N, C, H, W] with zero columns added left and right and zero rows on top and at the bottom
// (PyTorch's F.pad order).
Tensor zero_pad2d(const Tensor& x, int64_t left, int64_t right, int64_t top, int64_t bottom);
// x: [N, C, H, W] -> [N, C, out_h, out_w] with PyTorch's adaptive windows (out 1 x 1 is global
// pooling); an output larger than the input repeats cells, as PyTorch's does.
Tensor adaptive_max_pool2d(const Tensor& x, int64_t out_h, int64_t out_w);
Tensor adaptive_avg_pool2d(const Tensor& x, int64_t out_h, int64_t out_w);

// x: [N, C] or [N, C, *]. In training the batch statistics normalise and the running
// buffers (if defined) are updated in place with `momentum`; in eval the running ones are used.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, float momentum = 0.1f,
                  float eps = 1e-5f);
// x [N, C, *]: the C channels in num_groups groups (which must divide C), each (example, group)
// normalised over its channels' values to mean 0, variance 1 (biased, + eps), then * weight +
// bias ([C] each, undefined = none); as PyTorch's group_norm.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  float eps = 1e-5f);
// x [N, C, *] (at least one dim of positions): with use_input_stats each (example, channel)
// normalised over its positions (group_norm with C groups), the running statistics ([C], if
// defined) updated in place with the batch's mean of the instances' mean and unbiased
// variance; without, the running statistics normalise (as batch_norm in eval). Then * weight
// + bias ([C]). As PyTorch's instance_norm.
Tensor instance_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                     const Tensor& weight, const Tensor& bias, bool use_input_stats, float momentum = 0.1f,
                     float eps = 1e-5f);
// x / sqrt(mean(x² over the last dim D) + eps) * weight ([D], undefined = none).
Tensor rms_norm(const Tensor& x, const Tensor& weight, float eps);

// ---- sequence models ----------------------------------------------------------------------
// Normalises each row of the last dim D of x [..., D] to mean 0, variance 1 (biased, + eps),
// then * weight + bias ([D] each, undefined = none); as PyTorch's layer_norm over one dim.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps = 1e-5f);
// softmax over the last dim of scores [..., T, T] where query i attends to keys j <= i only:
// later keys are excluded from the sum exactly (probability 0, gradient 0), not by -inf adding.
Tensor causal_softmax(const Tensor& scores);

// ---- losses ------------------------------------------------------------------------------
enum class Reduction { None, Mean, Sum };
// logits [N, C] or [N, ..., C] (classes last), target [N] or [N, ...] of class indices: every
// position is a row; log-softmax and NLL fused. PyTorch's semantics for the rest: class weights
// `weight` [C] (undefined = none; they get no gradient) scale a row by its target's weight, a row
// whose target is `ignore_index` counts for nothing, and Mean divides by the total weight of the
// rows counted. With weights the smoothed part is weighted per class, as in PyTorch 1.13.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, float label_smoothing = 0.f,
                     Reduction reduction = Reduction::Mean, const Tensor& weight = Tensor(),
                     int64_t ignore_index = -100);
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction = Reduction::Mean,
                const Tensor& weight = Tensor(), int64_t ignore_index = -100);
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// ½·d²/beta where |d| < beta, |d| - ½·beta beyond (d = input - target); beta 0 is l1_loss.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      float beta = 1.f);
// ½·d² where |d| < delta, delta·(|d| - ½·delta) beyond; delta > 0.
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                  float delta = 1.f);
// KL divergence of the distribution `target` from log-probabilities `input`, pointwise
// target·(log target - input) (exp(target)·(target - input) with log_target), 0 where the
// target is 0. PyTorch's 'batchmean' (KLDivLoss's proper mean) is Sum over the batch size.
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
              bool log_target = false);
// pos_weight scales the loss of the positive targets (PyTorch's pos_weight, one number for all).
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        Reduction reduction = Reduction::Mean, float pos_weight = 1.f);

// ---- diagnostics ------------------------------------------------------------------------
// Copies made on the way rather than asked for: an operand made contiguous for a kernel (or
// by contiguous()), a gradient copied because it aliases another. clone(), copy_() and
// device transfers are not counted. A training step of the built-in models makes none
// (tests/test_step_invariants.cpp).
struct HiddenCopies {
  int64_t copies = 0;
  int64_t elements = 0;
};
HiddenCopies hidden_copies();  // totals since the process started, all threads

}  // namespace plexus
