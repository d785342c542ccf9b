// The Convolution family: Conv2d and Conv1d, the transposed convolution and the poolings, windows sliding over images [N, C, H, W] and
// sequences [N, C, L], and the adaptive poolings whose windows follow the output size.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"

namespace plexus::layers {
namespace {

using graph::Padding2;
using graph::Size2;

// "3" for a square, "[5, 1]" for height 5 and width 1: a pair as a project file writes it.
std::string text(const Size2& s) {
  return s.h == s.w ? std::to_string(s.h) : "[" + std::to_string(s.h) + ", " + std::to_string(s.w) + "]";
}
// "3x3 kernel", "5x1 kernel"; along one axis "kernel of 5".
std::string kernel_text(const Size2& k, bool two_d) {
  return two_d ? std::to_string(k.h) + "x" + std::to_string(k.w) + " kernel" : "kernel of " + std::to_string(k.w);
}

struct ConvParams {
  int64_t in_channels, out_channels;
  Size2 kernel_size, stride;
  Padding2 padding;
  Size2 dilation;
  int64_t groups;
  bool bias;
  // The zeros before and after each axis, as ONNX orders them: [top, left, bottom, right], or
  // [start, end] along one axis. padding="same" puts the odd one of an odd total at the end, as
  // PyTorch does.
  std::vector<int64_t> pads(bool two_d) const {
    const auto before = [this](int64_t k, int64_t d, int64_t pad) { return padding.same ? d * (k - 1) / 2 : pad; };
    const auto after = [this](int64_t k, int64_t d, int64_t pad) {
      return padding.same ? d * (k - 1) - d * (k - 1) / 2 : pad;
    };
    const int64_t kh = kernel_size.h, kw = kernel_size.w, dh = dilation.h, dw = dilation.w;
    if (!two_d) return {before(kw, dw, padding.w), after(kw, dw, padding.w)};
    return {before(kh, dh, padding.h), before(kw, dw, padding.w), after(kh, dh, padding.h), after(kw, dw, padding.w)};
  }
  double taps(bool two_d) const { return double(kernel_size.w) * (two_d ? double(kernel_size.h) : 1.0); }
};

// Conv2d over images [N, C, H, W] or Conv1d over sequences of channels [N, C, L]: the same
// parameters, a kernel of [h, w] or a line of taps.
void add_conv(Registrar& r, bool two_d) {
  using P = ConvParams;
  Layer<P> t;
  t.name = two_d ? "Conv2d" : "Conv1d";
  t.category = "Convolution";
  t.display_name = two_d ? "2-D convolution" : "1-D convolution";
  t.description = two_d ? "Slides learned kernels over images [N, C, H, W]."
                        : "Slides learned kernels along sequences of channels [N, C, L] (signals, or embeddings "
                          "permuted to [N, E, T]).";
  t.inputs = {{"input", two_d ? "[N, in_channels, H, W]" : "[N, in_channels, L]"}};
  t.outputs = {{"output", two_d ? "[N, out_channels, H', W']" : "[N, out_channels, L']"}};
  const std::string pair = two_d ? " One number for both, or [height, width]." : "";
  t.params = {graph::zero_param("in_channels", "Input channels", &P::in_channels, graph::kBig,
                                "The channels of the input; 0 = taken from the input.", "auto"),
              graph::param("out_channels", "Output channels", &P::out_channels, 16, 1, graph::kBig,
                           "The number of kernels, one channel of the output each."),
              graph::param("kernel_size", "Kernel size", &P::kernel_size, 3, 1, 64,
                           (two_d ? "The kernel's height and width." : "The kernel's length.") + pair, two_d),
              graph::param("stride", "Stride", &P::stride, 1, 1, 64, "The step between windows." + pair, two_d),
              graph::param("padding", "Padding", &P::padding, 0, 0, 64,
                           "Zeros added on every side." + pair +
                               " \"same\" keeps the input's size (stride 1 only; an odd total of zeros puts the extra "
                               "one at the end), \"valid\" adds none.",
                           two_d),
              graph::param("dilation", "Dilation", &P::dilation, 1, 1, 64, "The spacing of the kernel's taps." + pair,
                           two_d),
              graph::param("groups", "Groups", &P::groups, 1, 1, graph::kBig,
                           "Channel groups, each convolved on its own (must divide both channel counts)."),
              graph::param("bias", "Bias", &P::bias, true, "Learns an additive bias.")};
  t.shape = [two_d](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    if (two_d) require_rank(c, 3, "[N, C, H, W]");
    else require_rank(c, 2, "[N, C, L]");
    const Shape& s = one_input(c);
    if (p.in_channels && p.in_channels != s[0])
      fail("input", c.node.label() + " expects " + std::to_string(p.in_channels) + " input channels but receives " +
                        std::to_string(s[0]) + from(c, 0));
    if (s[0] % p.groups || p.out_channels % p.groups)
      fail("", c.node.label() + ": groups = " + std::to_string(p.groups) + " must divide the input channels (" +
                   std::to_string(s[0]) + ") and out_channels (" + std::to_string(p.out_channels) + ")");
    // Same padding keeps every size, so no window can be too large.
    if (p.padding.same) {
      if (p.stride.h != 1 || p.stride.w != 1)
        fail("", c.node.label() + ": padding \"same\" needs stride 1, got stride " + text(p.stride) +
                     " (PyTorch refuses it: a strided output cannot keep the input's size; give the padding as a "
                     "number)");
      return {two_d ? Shape{p.out_channels, s[1], s[2]} : Shape{p.out_channels, s[1]}};
    }
    const std::string kernel = kernel_text(p.kernel_size, two_d);
    const Size2 &k = p.kernel_size, &st = p.stride, &d = p.dilation;
    if (!two_d) return {{p.out_channels, window_out(c, s[1], k.w, st.w, p.padding.w, d.w, "length", kernel)}};
    return {{p.out_channels, window_out(c, s[1], k.h, st.h, p.padding.h, d.h, "height", kernel),
             window_out(c, s[2], k.w, st.w, p.padding.w, d.w, "width", kernel)}};
  };
  t.parameter_count = [two_d](const P& p, const std::vector<Shape>& in) {
    const double oc = double(p.out_channels);
    return oc * double(in.at(0)[0] / p.groups) * p.taps(two_d) + (p.bias ? oc : 0);
  };
  // Every output value is a dot product over one kernel's window: its group's channels × taps.
  t.macs = [two_d](const P& p, const std::vector<Shape>& in, const std::vector<Shape>& out) {
    return double(numel(out.at(0))) * double(in.at(0)[0] / p.groups) * p.taps(two_d);
  };
  t.build = [two_d](const BuildContext& b, const P& p) -> BuiltNode {
    const int64_t in = b.inputs.at(0)[0];
    const nn::Padding padding = p.padding.same ? nn::Padding::Same : nn::Padding::Explicit;
    const Size2 &k = p.kernel_size, &st = p.stride, &d = p.dilation;
    if (!two_d)
      return single(std::make_shared<nn::Conv1d>(in, p.out_channels, k.w,
                                                 Conv1dOptions{st.w, p.padding.w, d.w, p.groups}, p.bias, b.gen,
                                                 padding));
    const Conv2dOptions o{st.h, st.w, p.padding.h, p.padding.w, d.h, d.w, p.groups};
    return single(std::make_shared<nn::Conv2d>(in, p.out_channels, k.h, k.w, o, p.bias, b.gen, padding));
  };
  t.onnx = [two_d](const OnnxContext& c, const P& p) {
    const auto axes = [two_d](const Size2& s) {
      return two_d ? std::vector<int64_t>{s.h, s.w} : std::vector<int64_t>{s.w};
    };
    std::vector<std::string> in{c.input_names[0], c.parameter("weight")};
    if (p.bias) in.push_back(c.parameter("bias"));
    c.out.add_node("Conv", in, c.output_names,
                   {{"kernel_shape", axes(p.kernel_size)},
                    {"strides", axes(p.stride)},
                    {"pads", p.pads(two_d)},
                    {"dilations", axes(p.dilation)},
                    {"group", p.groups}});
  };
  t.pytorch = [two_d](const CodeContext& c, const P& p) {
    const auto size = [two_d](const Size2& s) { return two_d ? py_size(s.h, s.w) : std::to_string(s.w); };
    const std::string padding = p.padding.same ? "\"same\"" : size({p.padding.h, p.padding.w});
    module_call(c, std::string(two_d ? "nn.Conv2d(" : "nn.Conv1d(") + std::to_string(c.inputs[0][0]) + ", " +
                        std::to_string(p.out_channels) + ", " + size(p.kernel_size) +
                        py_kwarg("stride", size(p.stride), "1") + py_kwarg("padding", padding, "0") +
                        py_kwarg("dilation", size(p.dilation), "1") +
                        py_kwarg("groups", std::to_string(p.groups), "1") + py_kwarg("bias", py(p.bias), "True") + ")");
  };
  t.cpp = [two_d](const CodeContext& c, const P& p) {
    const Size2 &k = p.kernel_size, &st = p.stride, &d = p.dilation;
    const std::string padding = std::string(", nullptr, nn::Padding::") + (p.padding.same ? "Same" : "Explicit") + ")";
    if (!two_d)
      return module_call(c, "nn::Conv1d(" + std::to_string(c.inputs[0][0]) + ", " + std::to_string(p.out_channels) +
                                ", " + std::to_string(k.w) + ", Conv1dOptions{" + std::to_string(st.w) + ", " +
                                std::to_string(p.padding.w) + ", " + std::to_string(d.w) + ", " +
                                std::to_string(p.groups) + "}, " + cpp(p.bias) + padding);
    const std::string options = "Conv2dOptions{" + std::to_string(st.h) + ", " + std::to_string(st.w) + ", " +
                                std::to_string(p.padding.h) + ", " + std::to_string(p.padding.w) + ", " +
                                std::to_string(d.h) + ", " + std::to_string(d.w) + ", " + std::to_string(p.groups) + "}";
    module_call(c, "nn::Conv2d(" + std::to_string(c.inputs[0][0]) + ", " + std::to_string(p.out_channels) + ", " +
                       std::to_string(k.h) + ", " + std::to_string(k.w) + ", " + options + ", " + cpp(p.bias) +
                       padding);
  };
  r.add(std::move(t));
}

struct ConvTranspose2dParams {
  int64_t in_channels, out_channels;
  Size2 kernel_size, stride, padding, output_padding, dilation;
  int64_t groups;
  bool bias;
  ConvTranspose2dOptions options() const {
    return {stride.h, stride.w, padding.h, padding.w, output_padding.h, output_padding.w, dilation.h, dilation.w, groups};
  }
  // PyTorch's output size along one axis of `in` cells.
  static int64_t out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t output_pad, int64_t dilation) {
    return (in - 1) * stride - 2 * pad + dilation * (k - 1) + output_pad + 1;
  }
  int64_t out_h(int64_t in) const { return out(in, kernel_size.h, stride.h, padding.h, output_padding.h, dilation.h); }
  int64_t out_w(int64_t in) const { return out(in, kernel_size.w, stride.w, padding.w, output_padding.w, dilation.w); }
};

void add_conv_transpose2d(Registrar& r) {
  using P = ConvTranspose2dParams;
  Layer<P> t;
  t.name = "ConvTranspose2d";
  t.category = "Convolution";
  t.display_name = "2-D transposed convolution";
  t.description = "The transpose of a convolution: each input value spreads a learned kernel over the output, "
                  "enlarging images (stride 2 doubles them), as decoders and U-Nets do.";
  t.inputs = {{"input", "[N, in_channels, H, W]"}};
  t.outputs = {{"output", "[N, out_channels, H', W']"}};
  const std::string pair = " One number for both, or [height, width].";
  t.params = {graph::zero_param("in_channels", "Input channels", &P::in_channels, graph::kBig,
                                "The channels of the input; 0 = taken from the input.", "auto"),
              graph::param("out_channels", "Output channels", &P::out_channels, 16, 1, graph::kBig,
                           "The channels of the output."),
              graph::param("kernel_size", "Kernel size", &P::kernel_size, 3, 1, 64,
                           "The kernel's height and width." + pair),
              graph::param("stride", "Stride", &P::stride, 1, 1, 64,
                           "The step between the kernels' placements on the output: the enlargement." + pair),
              graph::param("padding", "Padding", &P::padding, 0, 0, 64,
                           "Cells trimmed from every side of the output (dilation × (kernel − 1) − padding zeros "
                           "pad the input)." +
                               pair),
              graph::param("output_padding", "Output padding", &P::output_padding, 0, 0, 63,
                           "Cells added to one side of the output (smaller than the stride), to reach an exact size." +
                               pair),
              graph::param("dilation", "Dilation", &P::dilation, 1, 1, 64, "The spacing of the kernel's taps." + pair),
              graph::param("groups", "Groups", &P::groups, 1, 1, graph::kBig,
                           "Channel groups, each transposed on its own (must divide both channel counts)."),
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
    if (p.output_padding.h >= p.stride.h || p.output_padding.w >= p.stride.w)
      fail("", c.node.label() + ": output_padding " + text(p.output_padding) + " must be smaller than the stride " +
                   text(p.stride) + (p.output_padding.h == p.output_padding.w && p.stride.h == p.stride.w
                                         ? ""
                                         : " along each axis"));
    const int64_t oh = p.out_h(s[1]), ow = p.out_w(s[2]);
    if (oh < 1 || ow < 1)
      fail("", c.node.label() + ": padding " + text(p.padding) + " trims the whole output of input " + batched(s) +
                   from(c, 0) + " (the output would be " + std::to_string(oh) + "x" + std::to_string(ow) + ")");
    return {{p.out_channels, oh, ow}};
  };
  t.parameter_count = [](const P& p, const std::vector<Shape>& in) {
    const double taps = double(p.kernel_size.h) * double(p.kernel_size.w);
    return double(in.at(0)[0]) * double(p.out_channels / p.groups) * taps + (p.bias ? double(p.out_channels) : 0);
  };
  // Every input value meets one kernel per output channel of its group: out_channels/groups × kh × kw.
  t.macs = [](const P& p, const std::vector<Shape>& in, const std::vector<Shape>&) {
    const double taps = double(p.kernel_size.h) * double(p.kernel_size.w);
    return double(numel(in.at(0))) * double(p.out_channels / p.groups) * taps;
  };
  t.build = [](const BuildContext& b, const P& p) {
    return single(std::make_shared<nn::ConvTranspose2d>(b.inputs.at(0)[0], p.out_channels, p.kernel_size.h,
                                                        p.kernel_size.w, p.options(), p.bias, b.gen));
  };
  t.onnx = [](const OnnxContext& c, const P& p) {
    const auto hw = [](const Size2& s) { return std::vector<int64_t>{s.h, s.w}; };
    std::vector<std::string> in{c.input_names[0], c.parameter("weight")};
    if (p.bias) in.push_back(c.parameter("bias"));
    c.out.add_node("ConvTranspose", in, c.output_names,
                   {{"kernel_shape", hw(p.kernel_size)},
                    {"strides", hw(p.stride)},
                    {"pads", std::vector<int64_t>{p.padding.h, p.padding.w, p.padding.h, p.padding.w}},
                    {"output_padding", hw(p.output_padding)},
                    {"dilations", hw(p.dilation)},
                    {"group", p.groups}});
  };
  t.pytorch = [](const CodeContext& c, const P& p) {
    const auto size = [](const Size2& s) { return py_size(s.h, s.w); };
    module_call(c, "nn.ConvTranspose2d(" + std::to_string(c.inputs[0][0]) + ", " + std::to_string(p.out_channels) +
                        ", " + size(p.kernel_size) + py_kwarg("stride", size(p.stride), "1") +
                        py_kwarg("padding", size(p.padding), "0") +
                        py_kwarg("output_padding", size(p.output_padding), "0") +
                        py_kwarg("groups", std::to_string(p.groups), "1") + py_kwarg("bias", py(p.bias), "True") +
                        py_kwarg("dilation", size(p.dilation), "1") + ")");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    const ConvTranspose2dOptions o = p.options();
    const std::vector<int64_t> fields{o.stride_h,     o.stride_w,     o.pad_h,      o.pad_w, o.output_pad_h,
                                      o.output_pad_w, o.dilation_h, o.dilation_w, o.groups};
    const std::string options = "ConvTranspose2dOptions" + cpp(fields);
    module_call(c, "nn::ConvTranspose2d(" + std::to_string(c.inputs[0][0]) + ", " + std::to_string(p.out_channels) +
                       ", " + std::to_string(p.kernel_size.h) + ", " + std::to_string(p.kernel_size.w) + ", " +
                       options + ", " + cpp(p.bias) + ")");
  };
  r.add(std::move(t));
}

struct PoolParams {
  Size2 kernel_size, stride, padding;
  // The stride along each axis; 0 = the kernel's size there.
  Size2 step() const { return {stride.h ? stride.h : kernel_size.h, stride.w ? stride.w : kernel_size.w}; }
};

// Max or average pooling over one (L) or two (H, W) trailing dims, windows of kernel_size.
void add_pool(Registrar& r, bool is_max, bool two_d) {
  using P = PoolParams;
  Layer<P> t;
  t.name = std::string(is_max ? "MaxPool" : "AvgPool") + (two_d ? "2d" : "1d");
  t.category = "Convolution";
  t.display_name = std::string(two_d ? "2-D " : "1-D ") + (is_max ? "max pooling" : "average pooling");
  t.description = std::string(is_max ? "Keeps the largest value of each window" : "Averages each window") +
                  (two_d ? " of an image." : " along a sequence [N, C, L].");
  t.inputs = {{"input", two_d ? "[N, C, H, W]" : "[N, C, L]"}};
  t.outputs = {{"output", two_d ? "[N, C, H', W']" : "[N, C, L']"}};
  const std::string pair = two_d ? " One number for both, or [height, width]." : "";
  t.params = {
      graph::param("kernel_size", "Kernel size", &P::kernel_size, 2, 1, 64,
                   (two_d ? "The window's height and width." : "The window's length.") + pair, two_d),
      graph::zero_param("stride", "Stride", &P::stride, 64, "The step between windows; 0 = the kernel size." + pair,
                        "= kernel", two_d),
      graph::param("padding", "Padding", &P::padding, 0, 0, 32,
                   "Padding on every side (at most half the kernel)." + pair, two_d)};
  t.shape = [two_d](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    if (two_d) require_rank(c, 3, "[N, C, H, W]");
    else require_rank(c, 2, "[N, C, L]");
    const Shape& s = one_input(c);
    const Size2 &k = p.kernel_size, &pad = p.padding, st = p.step();
    if (2 * pad.h > k.h || 2 * pad.w > k.w)
      fail("", c.node.label() + ": padding " + text(pad) + " is more than half the kernel size " + text(k) +
                   " (at most " + text({k.h / 2, k.w / 2}) + ")");
    const std::string kernel = kernel_text(k, two_d);
    if (!two_d) return {{s[0], window_out(c, s[1], k.w, st.w, pad.w, 1, "length", kernel)}};
    return {{s[0], window_out(c, s[1], k.h, st.h, pad.h, 1, "height", kernel),
             window_out(c, s[2], k.w, st.w, pad.w, 1, "width", kernel)}};
  };
  t.build = [is_max, two_d](const BuildContext&, const P& p) -> BuiltNode {
    const Size2 &k = p.kernel_size, &pad = p.padding, st = p.step();
    if (!two_d) {
      const Pool1dOptions o{k.w, st.w, pad.w, true};
      return single(is_max ? std::shared_ptr<nn::Module>(std::make_shared<nn::MaxPool1d>(o))
                           : std::make_shared<nn::AvgPool1d>(o));
    }
    const Pool2dOptions o{k.h, k.w, st.h, st.w, pad.h, pad.w, true};
    return single(is_max ? std::shared_ptr<nn::Module>(std::make_shared<nn::MaxPool2d>(o))
                         : std::make_shared<nn::AvgPool2d>(o));
  };
  // Windows that fit (ceil_mode 0); padding is skipped by max and counted by average.
  t.onnx = [is_max, two_d](const OnnxContext& c, const P& p) {
    const Size2 &k = p.kernel_size, &pad = p.padding, st = p.step();
    OnnxAttributes a;
    if (two_d)
      a = {{"kernel_shape", std::vector<int64_t>{k.h, k.w}},
           {"strides", std::vector<int64_t>{st.h, st.w}},
           {"pads", std::vector<int64_t>{pad.h, pad.w, pad.h, pad.w}}};
    else
      a = {{"kernel_shape", std::vector<int64_t>{k.w}},
           {"strides", std::vector<int64_t>{st.w}},
           {"pads", std::vector<int64_t>{pad.w, pad.w}}};
    if (!is_max) a.emplace_back("count_include_pad", int64_t(1));
    c.out.add_node(is_max ? "MaxPool" : "AveragePool", c.input_names, c.output_names, a);
  };
  // torch.nn's defaults are Plexus': floor mode, average counting the padding.
  t.pytorch = [name = t.name, two_d](const CodeContext& c, const P& p) {
    const Size2 &k = p.kernel_size, &pad = p.padding, st = p.step();
    const auto size = [two_d](const Size2& s) { return two_d ? py_size(s.h, s.w) : std::to_string(s.w); };
    module_call(c, "nn." + name + "(" + size(k) + py_kwarg("stride", size(st), size(k)) +
                        py_kwarg("padding", size(pad), "0") + ")");
  };
  t.cpp = [name = t.name, two_d](const CodeContext& c, const P& p) {
    const Size2 &k = p.kernel_size, &pad = p.padding, st = p.step();
    const std::string options =
        two_d ? "Pool2dOptions{" + std::to_string(k.h) + ", " + std::to_string(k.w) + ", " + std::to_string(st.h) +
                    ", " + std::to_string(st.w) + ", " + std::to_string(pad.h) + ", " + std::to_string(pad.w) + ", true}"
              : "Pool1dOptions{" + std::to_string(k.w) + ", " + std::to_string(st.w) + ", " + std::to_string(pad.w) +
                    ", true}";
    module_call(c, "nn::" + name + "(" + options + ")");
  };
  r.add(std::move(t));
}

struct AdaptivePoolParams {
  std::vector<int64_t> output_size;
  // [h, w]: one entry stands for a square.
  int64_t h() const { return output_size.at(0); }
  int64_t w() const { return output_size.at(output_size.size() - 1); }
};

void add_adaptive_pool(Registrar& r, bool is_max) {
  using P = AdaptivePoolParams;
  Layer<P> t;
  t.name = is_max ? "AdaptiveMaxPool2d" : "AdaptiveAvgPool2d";
  t.category = "Convolution";
  t.display_name = is_max ? "Adaptive max pooling" : "Adaptive average pooling";
  t.description = std::string(is_max ? "Keeps the largest value of" : "Averages") +
                  " each window of a grid of output_size windows spread over the image, whatever its size; [1, 1] is "
                  "global " +
                  (is_max ? "max" : "average") + " pooling.";
  t.inputs = {{"input", "[N, C, H, W]"}};
  t.outputs = {{"output", "[N, C, output height, output width]"}};
  t.params = {graph::param("output_size", "Output size", &P::output_size, {1, 1}, 1, 4096,
                           "The output's [height, width] (one number: a square); [1, 1] pools each channel to one "
                           "value.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    require_rank(c, 3, "[N, C, H, W]");
    const std::string size = graph::to_string(graph::ParamValue(p.output_size));
    if (p.output_size.empty() || p.output_size.size() > 2)
      fail("", c.node.label() + ": output_size " + size + " must be [height, width] or one number");
    const Shape& s = one_input(c);
    if (p.h() > s[1] || p.w() > s[2])
      fail("input", c.node.label() + " pools to " + std::to_string(p.h()) + "x" + std::to_string(p.w()) +
                        ", larger than its input " + std::to_string(s[1]) + "x" + std::to_string(s[2]) + from(c, 0) +
                        ": pooling cannot enlarge (use Upsample)");
    return {{s[0], p.h(), p.w()}};
  };
  t.build = [is_max](const BuildContext&, const P& p) {
    return single(is_max ? std::shared_ptr<nn::Module>(std::make_shared<nn::AdaptiveMaxPool2d>(p.h(), p.w()))
                         : std::make_shared<nn::AdaptiveAvgPool2d>(p.h(), p.w()));
  };
  // ONNX has no adaptive pooling: global pooling, or, where the output divides the input,
  // windows of input / output at that stride (what PyTorch's exporter does too).
  t.onnx = [is_max](const OnnxContext& c, const P& p) {
    const Shape& s = c.inputs.at(0);
    if (p.h() == 1 && p.w() == 1) {
      c.out.add_node(is_max ? "GlobalMaxPool" : "GlobalAveragePool", c.input_names, c.output_names);
      return;
    }
    if (s[1] % p.h() || s[2] % p.w())
      throw OnnxUnsupported{"ONNX has no adaptive pooling, and output_size " + std::to_string(p.h()) + "x" +
                            std::to_string(p.w()) + " does not divide the input " + std::to_string(s[1]) + "x" +
                            std::to_string(s[2]) + " into equal windows"};
    const std::vector<int64_t> k{s[1] / p.h(), s[2] / p.w()};
    c.out.add_node(is_max ? "MaxPool" : "AveragePool", c.input_names, c.output_names,
                   {{"kernel_shape", k}, {"strides", k}});
  };
  t.pytorch = [name = t.name](const CodeContext& c, const P& p) {
    module_call(c, "nn." + name + "(" + py_size(p.h(), p.w()) + ")");
  };
  t.cpp = [name = t.name](const CodeContext& c, const P& p) {
    module_call(c, "nn::" + name + "(" + std::to_string(p.h()) + ", " + std::to_string(p.w()) + ")");
  };
  r.add(std::move(t));
}

}  // namespace

void add_conv_layers(Registrar& r) {
  add_conv(r, /*two_d=*/true);
  add_conv(r, /*two_d=*/false);
  add_conv_transpose2d(r);
  add_pool(r, /*is_max=*/true, /*two_d=*/true);
  add_pool(r, /*is_max=*/false, /*two_d=*/true);
  add_pool(r, /*is_max=*/true, /*two_d=*/false);
  add_pool(r, /*is_max=*/false, /*two_d=*/false);
  add_adaptive_pool(r, /*is_max=*/true);
  add_adaptive_pool(r, /*is_max=*/false);
}

}  // namespace plexus::layers
