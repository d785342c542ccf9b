// The Convolution family: Conv2d and the two 2-D poolings, windows sliding over images [N, C, H, W].
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"

namespace plexus::layers {
namespace {

struct Conv2dParams {
  int64_t in_channels, out_channels, kernel_size, stride, padding, dilation, groups;
  bool bias;
  // The layer options the parameters stand for: its module and its ONNX rule both read them.
  Conv2dOptions options() const { return {stride, stride, padding, padding, dilation, dilation, groups}; }
};

void add_conv2d(Registrar& r) {
  using P = Conv2dParams;
  Layer<P> t;
  t.name = "Conv2d";
  t.category = "Convolution";
  t.display_name = "2-D convolution";
  t.description = "Slides learned kernels over images [N, C, H, W].";
  t.inputs = {{"input", "[N, in_channels, H, W]"}};
  t.outputs = {{"output", "[N, out_channels, H', W']"}};
  t.params = {graph::zero_param("in_channels", "Input channels", &P::in_channels, graph::kBig,
                                "The channels of the input; 0 = taken from the input.", "auto"),
              graph::param("out_channels", "Output channels", &P::out_channels, 16, 1, graph::kBig,
                           "The number of kernels, one channel of the output each."),
              graph::param("kernel_size", "Kernel size", &P::kernel_size, 3, 1, 64, "The kernel's height and width."),
              graph::param("stride", "Stride", &P::stride, 1, 1, 64, "The step between windows."),
              graph::param("padding", "Padding", &P::padding, 0, 0, 64, "Zeros added on every side."),
              graph::param("dilation", "Dilation", &P::dilation, 1, 1, 64, "The spacing of the kernel's taps."),
              graph::param("groups", "Groups", &P::groups, 1, 1, graph::kBig,
                           "Channel groups, each convolved on its own (must divide both channel counts)."),
              graph::param("bias", "Bias", &P::bias, true, "Learns an additive bias.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    require_rank(c, 3, "[N, C, H, W]");
    const Shape& s = one_input(c);
    if (p.in_channels && p.in_channels != s[0])
      fail("input", c.node.label() + " expects " + std::to_string(p.in_channels) + " input channels but receives " +
                        std::to_string(s[0]) + from(c, 0));
    if (s[0] % p.groups || p.out_channels % p.groups)
      fail("", c.node.label() + ": groups = " + std::to_string(p.groups) + " must divide the input channels (" +
                   std::to_string(s[0]) + ") and out_channels (" + std::to_string(p.out_channels) + ")");
    const int64_t k = p.kernel_size, st = p.stride, pad = p.padding, d = p.dilation;
    return {{p.out_channels, window_out(c, s[1], k, st, pad, d, "height"), window_out(c, s[2], k, st, pad, d, "width")}};
  };
  t.parameter_count = [](const P& p, const std::vector<Shape>& in) {
    const double oc = double(p.out_channels), k = double(p.kernel_size);
    const double per_kernel = double(in.at(0)[0] / p.groups) * k * k;
    return oc * per_kernel + (p.bias ? oc : 0);
  };
  // Every output value is a dot product over one kernel's window: its group's channels × k × k.
  t.macs = [](const P& p, const std::vector<Shape>& in, const std::vector<Shape>& out) {
    const double k = double(p.kernel_size);
    return double(numel(out.at(0))) * double(in.at(0)[0] / p.groups) * k * k;
  };
  t.build = [](const BuildContext& b, const P& p) {
    return single(
        std::make_shared<nn::Conv2d>(b.inputs.at(0)[0], p.out_channels, p.kernel_size, p.options(), p.bias, b.gen));
  };
  t.onnx = [](const OnnxContext& c, const P& p) {
    const Conv2dOptions o = p.options();
    const int64_t k = p.kernel_size;
    std::vector<std::string> in{c.input_names[0], c.parameter("weight")};
    if (p.bias) in.push_back(c.parameter("bias"));
    c.out.add_node("Conv", in, c.output_names,
                   {{"kernel_shape", std::vector<int64_t>{k, k}},
                    {"strides", std::vector<int64_t>{o.stride_h, o.stride_w}},
                    {"pads", std::vector<int64_t>{o.pad_h, o.pad_w, o.pad_h, o.pad_w}},
                    {"dilations", std::vector<int64_t>{o.dilation_h, o.dilation_w}},
                    {"group", o.groups}});
  };
  r.add(std::move(t));
}

struct Pool2dParams {
  int64_t kernel_size, stride, padding;
  Pool2dOptions options() const { return {kernel_size, kernel_size, stride, stride, padding, padding, true}; }
};

void add_pool2d(Registrar& r, bool is_max) {
  using P = Pool2dParams;
  Layer<P> t;
  t.name = is_max ? "MaxPool2d" : "AvgPool2d";
  t.category = "Convolution";
  t.display_name = is_max ? "2-D max pooling" : "2-D average pooling";
  t.description = is_max ? "Keeps the largest value of each window." : "Averages each window.";
  t.inputs = {{"input", "[N, C, H, W]"}};
  t.outputs = {{"output", "[N, C, H', W']"}};
  t.params = {
      graph::param("kernel_size", "Kernel size", &P::kernel_size, 2, 1, 64, "The window's height and width."),
      graph::zero_param("stride", "Stride", &P::stride, 64, "The step between windows; 0 = the kernel size.",
                        "= kernel"),
      graph::param("padding", "Padding", &P::padding, 0, 0, 32, "Padding on every side (at most half the kernel).")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    require_rank(c, 3, "[N, C, H, W]");
    const Shape& s = one_input(c);
    const int64_t k = p.kernel_size, pad = p.padding;
    const int64_t st = p.stride ? p.stride : k;
    if (2 * pad > k)
      fail("", c.node.label() + ": padding " + std::to_string(pad) + " is more than half the kernel size " +
                   std::to_string(k) + " (at most " + std::to_string(k / 2) + ")");
    return {{s[0], window_out(c, s[1], k, st, pad, 1, "height"), window_out(c, s[2], k, st, pad, 1, "width")}};
  };
  t.build = [is_max](const BuildContext&, const P& p) {
    const Pool2dOptions o = p.options();
    return single(is_max ? std::shared_ptr<nn::Module>(std::make_shared<nn::MaxPool2d>(o))
                         : std::make_shared<nn::AvgPool2d>(o));
  };
  // Windows that fit (ceil_mode 0); padding is skipped by max and counted by average.
  t.onnx = [is_max](const OnnxContext& c, const P& p) {
    const Pool2dOptions o = p.options();
    OnnxAttributes a{{"kernel_shape", std::vector<int64_t>{o.kernel_h, o.kernel_w}},
                     {"strides", std::vector<int64_t>{o.stride_h ? o.stride_h : o.kernel_h,
                                                      o.stride_w ? o.stride_w : o.kernel_w}},
                     {"pads", std::vector<int64_t>{o.pad_h, o.pad_w, o.pad_h, o.pad_w}}};
    if (!is_max) a.emplace_back("count_include_pad", int64_t(o.count_include_pad));
    c.out.add_node(is_max ? "MaxPool" : "AveragePool", c.input_names, c.output_names, a);
  };
  r.add(std::move(t));
}

}  // namespace

void add_conv_layers(Registrar& r) {
  add_conv2d(r);
  add_pool2d(r, /*is_max=*/true);
  add_pool2d(r, /*is_max=*/false);
}

}  // namespace plexus::layers
