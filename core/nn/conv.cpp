#include "nn/conv.h"

#include <cmath>
#include <tuple>
#include <utility>

#include "nn/activation.h"
#include "nn/exactly.h"
#include "nn/init.h"
#include "util/error.h"

namespace plexus::nn {

namespace {

// PyTorch's init of a convolution's weight and bias (fan-in read off dim 1 and the kernel).
void init_conv(Tensor& weight, Tensor& bias, Generator* gen) {
  init::kaiming_uniform_(weight, std::sqrt(5.f), gen);
  if (bias.defined()) {
    const float bound = 1.f / std::sqrt(float(init::fan_in(weight)));
    init::uniform_(bias, -bound, bound, gen);
  }
}

void check_conv(const char* type, int64_t in, int64_t out, int64_t kernel, int64_t groups) {
  if (in < 1 || out < 1 || kernel < 1)
    throw ValueError(std::string(type) + ": channels and kernel sizes must be positive");
  if (groups < 1 || in % groups || out % groups)
    throw ValueError(std::string(type) + ": groups=" + std::to_string(groups) + " must divide in_channels=" +
                     std::to_string(in) + " and out_channels=" + std::to_string(out));
}

// padding="same" along one axis: the zeros on both sides, and the odd one at the end. PyTorch
// refuses it with a stride, whose output could not keep the input's size.
std::pair<int64_t, int64_t> same_padding(const char* type, int64_t kernel, int64_t stride, int64_t dilation) {
  if (stride != 1)
    throw ValueError(std::string(type) + ": padding=\"same\" needs stride 1, got stride " + std::to_string(stride));
  const int64_t total = dilation * (kernel - 1);
  return {total / 2, total % 2};
}

}  // namespace

Conv2d::Conv2d(int64_t in, int64_t out, int64_t kh, int64_t kw, const Conv2dOptions& o, bool with_bias,
               Generator* gen, Padding padding)
    : opt_(o) {
  check_conv("Conv2d", in, out, std::min(kh, kw), o.groups);
  if (padding == Padding::Same) {
    std::tie(opt_.pad_h, end_h_) = same_padding("Conv2d", kh, o.stride_h, o.dilation_h);
    std::tie(opt_.pad_w, end_w_) = same_padding("Conv2d", kw, o.stride_w, o.dilation_w);
  }
  weight = register_parameter("weight", empty({out, in / o.groups, kh, kw}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  init_conv(weight, bias, gen);
}

Conv1d::Conv1d(int64_t in, int64_t out, int64_t k, const Conv1dOptions& o, bool with_bias, Generator* gen,
               Padding padding)
    : opt_(o) {
  check_conv("Conv1d", in, out, k, o.groups);
  if (padding == Padding::Same) std::tie(opt_.pad, end_) = same_padding("Conv1d", k, o.stride, o.dilation);
  weight = register_parameter("weight", empty({out, in / o.groups, k}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  init_conv(weight, bias, gen);
}

// The odd zero of padding="same" added at the end as a zero column of [N, C, 1, L].
Tensor Conv1d::forward(const Tensor& x) {
  return conv1d(end_ ? squeeze(zero_pad2d(unsqueeze(x, 2), 0, end_, 0, 0), 2) : x, weight, bias, opt_);
}

std::string Conv1d::extra_repr() const {
  const Shape& s = weight.shape();
  return std::to_string(s[1] * opt_.groups) + " -> " + std::to_string(s[0]) + ", kernel=" + std::to_string(s[2]) +
         ", stride=" + std::to_string(opt_.stride) + ", padding=" + std::to_string(opt_.pad) +
         (end_ ? "+" + std::to_string(end_) : "") +
         (opt_.dilation > 1 ? ", dilation=" + std::to_string(opt_.dilation) : "") +
         (opt_.groups > 1 ? ", groups=" + std::to_string(opt_.groups) : "") + (bias.defined() ? "" : ", bias=false");
}

Tensor Conv2d::pad_end(const Tensor& x) const { return end_h_ || end_w_ ? zero_pad2d(x, 0, end_w_, 0, end_h_) : x; }

Tensor Conv2d::forward(const Tensor& x) { return conv2d(pad_end(x), weight, bias, opt_); }

ConvTranspose2d::ConvTranspose2d(int64_t in, int64_t out, int64_t kh, int64_t kw, const ConvTranspose2dOptions& o,
                                 bool with_bias, Generator* gen)
    : opt_(o) {
  check_conv("ConvTranspose2d", in, out, std::min(kh, kw), o.groups);
  // Dim 1 is out/groups here: PyTorch's init reads its fan-in there too.
  weight = register_parameter("weight", empty({in, out / o.groups, kh, kw}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  init_conv(weight, bias, gen);
}

std::string ConvTranspose2d::extra_repr() const {
  const Shape& s = weight.shape();
  return std::to_string(s[0]) + " -> " + std::to_string(s[1] * opt_.groups) + ", kernel=" + std::to_string(s[2]) +
         "x" + std::to_string(s[3]) + ", stride=" + std::to_string(opt_.stride_h) + "x" + std::to_string(opt_.stride_w) +
         ", padding=" + std::to_string(opt_.pad_h) + "x" + std::to_string(opt_.pad_w) +
         ", output_padding=" + std::to_string(opt_.output_pad_h) + "x" + std::to_string(opt_.output_pad_w) +
         (opt_.groups > 1 ? ", groups=" + std::to_string(opt_.groups) : "") + (bias.defined() ? "" : ", bias=false");
}

Tensor Conv2d::forward_fused(const Tensor& x, bool relu, bool max_pool) {
  return conv2d_relu_max_pool2d(pad_end(x), weight, bias, opt_, relu, max_pool);
}

Conv2d* fusable_conv(Module* m) { return is_exactly<Conv2d>(m) ? static_cast<Conv2d*>(m) : nullptr; }

bool fuses_as_relu(const Module* m) { return is_exactly<ReLU>(m); }

bool fuses_as_max_pool(const Module* m) {
  if (!is_exactly<MaxPool2d>(m)) return false;
  const Pool2dOptions& o = static_cast<const MaxPool2d*>(m)->options();
  return o.kernel_h == 2 && o.kernel_w == 2 && (o.stride_h == 0 || o.stride_h == 2) &&
         (o.stride_w == 0 || o.stride_w == 2) && o.pad_h == 0 && o.pad_w == 0;
}

std::string Conv2d::extra_repr() const {
  const Shape& s = weight.shape();
  return "in=" + std::to_string(s[1] * opt_.groups) + ", out=" + std::to_string(s[0]) + ", kernel=" +
         std::to_string(s[2]) + "x" + std::to_string(s[3]) + ", stride=" + std::to_string(opt_.stride_h) + "x" +
         std::to_string(opt_.stride_w) + ", padding=" + std::to_string(opt_.pad_h) + "x" + std::to_string(opt_.pad_w) +
         (end_h_ || end_w_ ? "+" + std::to_string(end_h_) + "x" + std::to_string(end_w_) : "") +
         (opt_.groups > 1 ? ", groups=" + std::to_string(opt_.groups) : "") + (bias.defined() ? "" : ", bias=false");
}

static std::string pool_repr(const Pool2dOptions& o) {
  const int64_t sh = o.stride_h ? o.stride_h : o.kernel_h, sw = o.stride_w ? o.stride_w : o.kernel_w;
  return "kernel=" + std::to_string(o.kernel_h) + "x" + std::to_string(o.kernel_w) + ", stride=" + std::to_string(sh) +
         "x" + std::to_string(sw) + ", padding=" + std::to_string(o.pad_h) + "x" + std::to_string(o.pad_w);
}
std::string MaxPool2d::extra_repr() const { return pool_repr(opt_); }
std::string AvgPool2d::extra_repr() const { return pool_repr(opt_); }

static std::string pool1d_repr(const Pool1dOptions& o) {
  return "kernel=" + std::to_string(o.kernel) + ", stride=" + std::to_string(o.stride ? o.stride : o.kernel) +
         ", padding=" + std::to_string(o.pad);
}
std::string MaxPool1d::extra_repr() const { return pool1d_repr(opt_); }
std::string AvgPool1d::extra_repr() const { return pool1d_repr(opt_); }

static std::string output_size_repr(int64_t h, int64_t w) {
  return "output_size=" + std::to_string(h) + "x" + std::to_string(w);
}
std::string AdaptiveMaxPool2d::extra_repr() const { return output_size_repr(out_h_, out_w_); }
std::string AdaptiveAvgPool2d::extra_repr() const { return output_size_repr(out_h_, out_w_); }

}  // namespace plexus::nn
