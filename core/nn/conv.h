#pragma once
#include "nn/module.h"
#include "ops/ops.h"

namespace plexus::nn {

// How a convolution pads: the options' zeros on both sides, or PyTorch's padding="same" (stride 1
// only; the options' padding is replaced): dilation × (kernel − 1) zeros along each axis, half on
// each side and the odd one of an odd total at the end (bottom, right), so that the output keeps
// the input's size.
enum class Padding { Explicit, Same };

// 2-D convolution over [N, C, H, W]; weight [out, in/groups, kh, kw] starts as PyTorch's.
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_h, int64_t kernel_w,
         const Conv2dOptions& options = {}, bool bias = true, Generator* gen = nullptr,
         Padding padding = Padding::Explicit);
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, const Conv2dOptions& options = {},
         bool bias = true, Generator* gen = nullptr)
      : Conv2d(in_channels, out_channels, kernel, kernel, options, bias, gen) {}
  Tensor forward(const Tensor& x) override;
  // forward, then a ReLU and / or 2x2 max pooling at stride 2 folded into the convolution
  // (conv2d_relu_max_pool2d): what nn::Sequential runs for Conv2d → ReLU → MaxPool2d(2).
  Tensor forward_fused(const Tensor& x, bool relu, bool max_pool);
  std::string type_name() const override { return "Conv2d"; }
  std::string extra_repr() const override;
  const Conv2dOptions& options() const { return opt_; }
  Tensor weight, bias;

 private:
  Tensor pad_end(const Tensor& x) const;
  Conv2dOptions opt_;
  int64_t end_h_ = 0, end_w_ = 0;  // padding="same"'s odd zero row (bottom) and column (right)
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(const Pool2dOptions& options) : opt_(options) {}
  explicit MaxPool2d(int64_t kernel) : opt_{.kernel_h = kernel, .kernel_w = kernel} {}
  Tensor forward(const Tensor& x) override { return max_pool2d(x, opt_); }
  std::string type_name() const override { return "MaxPool2d"; }
  const Pool2dOptions& options() const { return opt_; }
  std::string extra_repr() const override;

 private:
  Pool2dOptions opt_;
};

// The chains Conv2d::forward_fused runs as one op, whoever finds them (nn::Sequential, the
// graph compiler's models): a Conv2d itself (not a subclass), then a ReLU and / or a max
// pooling of 2x2 windows at stride 2 without padding. Null when `m` is not such a module.
Conv2d* fusable_conv(Module* m);
bool fuses_as_relu(const Module* m);
bool fuses_as_max_pool(const Module* m);

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(const Pool2dOptions& options) : opt_(options) {}
  explicit AvgPool2d(int64_t kernel) : opt_{.kernel_h = kernel, .kernel_w = kernel} {}
  Tensor forward(const Tensor& x) override { return avg_pool2d(x, opt_); }
  std::string type_name() const override { return "AvgPool2d"; }
  std::string extra_repr() const override;

 private:
  Pool2dOptions opt_;
};

// 1-D convolution over [N, C, L]; weight [out, in/groups, k] starts as PyTorch's.
class Conv1d : public Module {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel, const Conv1dOptions& options = {},
         bool bias = true, Generator* gen = nullptr, Padding padding = Padding::Explicit);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Conv1d"; }
  std::string extra_repr() const override;
  Tensor weight, bias;

 private:
  Conv1dOptions opt_;
  int64_t end_ = 0;  // padding="same"'s odd zero at the end
};

// The transpose of Conv2d over [N, C, H, W]; weight [in, out/groups, kh, kw] starts as PyTorch's.
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel_h, int64_t kernel_w,
                  const ConvTranspose2dOptions& options = {}, bool bias = true, Generator* gen = nullptr);
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel, const ConvTranspose2dOptions& options = {},
                  bool bias = true, Generator* gen = nullptr)
      : ConvTranspose2d(in_channels, out_channels, kernel, kernel, options, bias, gen) {}
  Tensor forward(const Tensor& x) override { return conv_transpose2d(x, weight, bias, opt_); }
  std::string type_name() const override { return "ConvTranspose2d"; }
  std::string extra_repr() const override;
  Tensor weight, bias;

 private:
  ConvTranspose2dOptions opt_;
};

// x [N, C, L].
class MaxPool1d : public Module {
 public:
  explicit MaxPool1d(const Pool1dOptions& options) : opt_(options) {}
  Tensor forward(const Tensor& x) override { return max_pool1d(x, opt_); }
  std::string type_name() const override { return "MaxPool1d"; }
  std::string extra_repr() const override;

 private:
  Pool1dOptions opt_;
};

class AvgPool1d : public Module {
 public:
  explicit AvgPool1d(const Pool1dOptions& options) : opt_(options) {}
  Tensor forward(const Tensor& x) override { return avg_pool1d(x, opt_); }
  std::string type_name() const override { return "AvgPool1d"; }
  std::string extra_repr() const override;

 private:
  Pool1dOptions opt_;
};

// x [N, C, H, W] -> [N, C, out_h, out_w]; 1x1 is global pooling (a ResNet's head).
class AdaptiveMaxPool2d : public Module {
 public:
  AdaptiveMaxPool2d(int64_t out_h, int64_t out_w) : out_h_(out_h), out_w_(out_w) {}
  Tensor forward(const Tensor& x) override { return adaptive_max_pool2d(x, out_h_, out_w_); }
  std::string type_name() const override { return "AdaptiveMaxPool2d"; }
  std::string extra_repr() const override;

 private:
  int64_t out_h_, out_w_;
};

class AdaptiveAvgPool2d : public Module {
 public:
  AdaptiveAvgPool2d(int64_t out_h, int64_t out_w) : out_h_(out_h), out_w_(out_w) {}
  Tensor forward(const Tensor& x) override { return adaptive_avg_pool2d(x, out_h_, out_w_); }
  std::string type_name() const override { return "AdaptiveAvgPool2d"; }
  std::string extra_repr() const override;

 private:
  int64_t out_h_, out_w_;
};

}  // namespace plexus::nn
