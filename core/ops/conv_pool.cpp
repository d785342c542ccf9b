// 2-D convolution and pooling, with derivatives. The backends lower convolution to
// im2col + gemm (dW += dY · colsᵀ, dX = col2im(Wᵀ · dY)), the CPU's to an implicit product
// that also folds in the bias, a ReLU and 2x2 max pooling (Backend::conv2d_*_fused);
// pooling routes gradients to the argmax cell (max) or spreads them over the window (avg).
// The 1-D poolings are the 2-D ones over a plane of height 1.
#include "autograd/node.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus {
namespace {

using Geometry = Backend::ConvGeometry;

// Windows that fit; 0 when even one does not (division would round a negative span up to 0).
int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation) {
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

std::string dims4(const char* op, const Tensor& x) {
  return std::string(op) + ": expected input [N, C, H, W], got " + to_string(x.shape());
}

}  // namespace

namespace {

Backend::ConvProblem conv_problem(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dOptions& o) {
  check_same_device("conv2d", {x, weight, bias});
  if (x.dim() != 4) throw ShapeError(dims4("conv2d", x));
  if (weight.dim() != 4) throw ShapeError("conv2d: expected weight [O, C/groups, kH, kW], got " + to_string(weight.shape()));
  if (o.stride_h < 1 || o.stride_w < 1 || o.dilation_h < 1 || o.dilation_w < 1 || o.pad_h < 0 || o.pad_w < 0 ||
      o.groups < 1)
    throw ValueError("conv2d: stride and dilation must be >= 1, padding >= 0, groups >= 1");
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t oc = weight.shape()[0], kh = weight.shape()[2], kw = weight.shape()[3], groups = o.groups;
  if (c % groups || oc % groups)
    throw ShapeError("conv2d: groups=" + std::to_string(groups) + " must divide the input channels (" +
                     std::to_string(c) + ") and output channels (" + std::to_string(oc) + ")");
  if (weight.shape()[1] != c / groups)
    throw ShapeError("conv2d: weight " + to_string(weight.shape()) + " expects " + std::to_string(weight.shape()[1] * groups) +
                     " input channels, input " + to_string(x.shape()) + " has " + std::to_string(c));
  if (bias.defined() && bias.shape() != Shape{oc})
    throw ShapeError("conv2d: bias must have shape [" + std::to_string(oc) + "], got " + to_string(bias.shape()));
  const int64_t oh = out_size(h, kh, o.stride_h, o.pad_h, o.dilation_h);
  const int64_t ow = out_size(w, kw, o.stride_w, o.pad_w, o.dilation_w);
  if (oh < 1 || ow < 1)
    throw ShapeError("conv2d: a " + std::to_string(kh) + "x" + std::to_string(kw) + " kernel does not fit input " +
                     to_string(x.shape()) + " with this padding and dilation");
  return {n, c, oc, groups, Geometry{c / groups, h, w, kh, kw, oh, ow, o.stride_h, o.stride_w, o.pad_h, o.pad_w, o.dilation_h, o.dilation_w}};
}

// The convolution with its epilogue (bias, ReLU, 2x2 max pooling) in the backend's fused
// kernels (be.has_fused_conv2d()), differentiated as one node.
Tensor fused_conv(Backend& be, const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Backend::ConvProblem& prob, const Backend::ConvEpilogue& e) {
  const Geometry& g = prob.geo;
  const Tensor xc = contiguous_data(x), wc = contiguous_data(weight);
  const Tensor bc = bias.defined() ? contiguous_data(bias) : Tensor();
  const Shape shape = e.max_pool ? Shape{prob.n, prob.oc, g.oh / 2, g.ow / 2} : Shape{prob.n, prob.oc, g.oh, g.ow};
  Tensor out = empty(shape, x.device());
  const Tensor argmax = e.max_pool ? empty(shape, x.device()) : Tensor();
  be.conv2d_forward_fused(out.data(), e.max_pool ? argmax.data() : nullptr, xc.data(), wc.data(),
                          bc.defined() ? bc.data() : nullptr, e, prob);
  if (needs_grad(x, weight, bias))
    record(out, e.max_pool ? "conv2d_relu_max_pool2d" : e.relu ? "conv2d_relu" : "conv2d", {x, weight, bias},
           [sx = Saved(xc), sw = Saved(wc), so = e.relu || e.max_pool ? Saved(out) : Saved(), argmax, prob, e,
            need_x = x.requires_grad(), need_w = weight.requires_grad(),
            need_b = bias.defined() && bias.requires_grad()](const Tensor& gout) -> Grads {
             const Tensor g = contiguous_data(gout), xv = sx.get(), wv = sw.get();
             const Tensor ov = so.defined() ? so.get() : Tensor();
             Tensor gx = need_x ? empty(xv.shape(), g.device()) : Tensor();
             Tensor gw = need_w ? empty(wv.shape(), g.device()) : Tensor();
             Tensor gb = need_b ? empty({prob.oc}, g.device()) : Tensor();
             backend(g.device()).conv2d_backward_fused(
                 need_x ? gx.data() : nullptr, need_w ? gw.data() : nullptr, need_b ? gb.data() : nullptr, g.data(),
                 ov.defined() ? ov.data() : nullptr, argmax.defined() ? argmax.data() : nullptr, xv.data(), wv.data(), e,
                 prob);
             return {gx, gw, gb};
           });
  return out;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dOptions& o) {
  const Backend::ConvProblem prob = conv_problem(x, weight, bias, o);
  Backend& be = backend(x.device());
  if (be.has_fused_conv2d()) return fused_conv(be, x, weight, bias, prob, {});
  const int64_t oc = prob.oc;
  const Tensor xc = contiguous_data(x), wc = contiguous_data(weight);
  Tensor out = empty({prob.n, oc, prob.geo.oh, prob.geo.ow}, x.device());
  be.conv2d_forward(out.data(), xc.data(), wc.data(), prob);
  // The bias is added in place and differentiated here: no second output, no extra node.
  if (bias.defined())
    be.binary(BinaryOp::Add, out, out, broadcast_view(bias.detach().reshape({1, oc, 1, 1}), out.shape(), "conv2d"), 1.f, 0.f);
  if (needs_grad(x, weight, bias))
    record(out, "conv2d", {x, weight, bias},
           [sx = Saved(xc), sw = Saved(wc), prob, need_x = x.requires_grad(), need_w = weight.requires_grad(),
            need_b = bias.defined() && bias.requires_grad()](const Tensor& gout) -> Grads {
             const Tensor g = contiguous_data(gout), xv = sx.get(), wv = sw.get();
             Tensor gx = need_x ? zeros(xv.shape(), g.device()) : Tensor();
             Tensor gw = need_w ? zeros(wv.shape(), g.device()) : Tensor();
             backend(g.device()).conv2d_backward(need_x ? gx.data() : nullptr, need_w ? gw.data() : nullptr, g.data(),
                                                 xv.data(), wv.data(), prob);
             return {gx, gw, need_b ? sum(g, {0, 2, 3}) : Tensor()};
           });
  return out;
}

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv1dOptions& o) {
  if (x.dim() != 3) throw ShapeError("conv1d: expected input [N, C, L], got " + to_string(x.shape()));
  if (weight.dim() != 3) throw ShapeError("conv1d: expected weight [O, C/groups, k], got " + to_string(weight.shape()));
  const Conv2dOptions o2{1, o.stride, 0, o.pad, 1, o.dilation, o.groups};
  return squeeze(conv2d(unsqueeze(x, 2), unsqueeze(weight, 2), bias, o2), 2);
}

namespace {

// The convolution conv_transpose2d transposes: its input has our output's shape, its output our
// input's, and the same weight; our forward is its input gradient, our input gradient its forward.
Backend::ConvProblem transposed_problem(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                        const ConvTranspose2dOptions& o) {
  check_same_device("conv_transpose2d", {x, weight, bias});
  if (x.dim() != 4) throw ShapeError(dims4("conv_transpose2d", x));
  if (weight.dim() != 4)
    throw ShapeError("conv_transpose2d: expected weight [C, O/groups, kH, kW], got " + to_string(weight.shape()));
  if (o.stride_h < 1 || o.stride_w < 1 || o.dilation_h < 1 || o.dilation_w < 1 || o.pad_h < 0 || o.pad_w < 0 ||
      o.groups < 1 || o.output_pad_h < 0 || o.output_pad_w < 0)
    throw ValueError("conv_transpose2d: stride and dilation must be >= 1, padding and output padding >= 0, groups >= 1");
  if (o.output_pad_h >= o.stride_h || o.output_pad_w >= o.stride_w)
    throw ValueError("conv_transpose2d: output padding " + std::to_string(o.output_pad_h) + "x" +
                     std::to_string(o.output_pad_w) + " must be smaller than the stride " + std::to_string(o.stride_h) +
                     "x" + std::to_string(o.stride_w));
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t kh = weight.shape()[2], kw = weight.shape()[3], groups = o.groups;
  if (weight.shape()[0] != c || c % groups)
    throw ShapeError("conv_transpose2d: weight " + to_string(weight.shape()) + " expects " +
                     std::to_string(weight.shape()[0]) + " input channels in groups of " + std::to_string(groups) +
                     ", input " + to_string(x.shape()) + " has " + std::to_string(c));
  const int64_t oc = weight.shape()[1] * groups;
  if (bias.defined() && bias.shape() != Shape{oc})
    throw ShapeError("conv_transpose2d: bias must have shape [" + std::to_string(oc) + "], got " + to_string(bias.shape()));
  const int64_t oh = (h - 1) * o.stride_h - 2 * o.pad_h + o.dilation_h * (kh - 1) + o.output_pad_h + 1;
  const int64_t ow = (w - 1) * o.stride_w - 2 * o.pad_w + o.dilation_w * (kw - 1) + o.output_pad_w + 1;
  if (oh < 1 || ow < 1)
    throw ShapeError("conv_transpose2d: padding " + std::to_string(o.pad_h) + "x" + std::to_string(o.pad_w) +
                     " leaves no output of input " + to_string(x.shape()) + " with a " + std::to_string(kh) + "x" +
                     std::to_string(kw) + " kernel");
  return {n, oc, c, groups,
          Geometry{oc / groups, oh, ow, kh, kw, h, w, o.stride_h, o.stride_w, o.pad_h, o.pad_w, o.dilation_h,
                   o.dilation_w}};
}

}  // namespace

Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const ConvTranspose2dOptions& o) {
  const Backend::ConvProblem prob = transposed_problem(x, weight, bias, o);
  Backend& be = backend(x.device());
  const Tensor xc = contiguous_data(x), wc = contiguous_data(weight);
  Tensor out = zeros({prob.n, prob.c, prob.geo.h, prob.geo.w}, x.device());
  be.conv2d_backward(out.data(), nullptr, xc.data(), nullptr, wc.data(), prob);
  if (bias.defined())
    be.binary(BinaryOp::Add, out, out,
              broadcast_view(bias.detach().reshape({1, prob.c, 1, 1}), out.shape(), "conv_transpose2d"), 1.f, 0.f);
  if (needs_grad(x, weight, bias))
    record(out, "conv_transpose2d", {x, weight, bias},
           [sx = Saved(xc), sw = Saved(wc), prob, need_x = x.requires_grad(), need_w = weight.requires_grad(),
            need_b = bias.defined() && bias.requires_grad()](const Tensor& gout) -> Grads {
             const Tensor g = contiguous_data(gout), xv = sx.get(), wv = sw.get();
             Backend& b = backend(g.device());
             Tensor gx = need_x ? empty(xv.shape(), g.device()) : Tensor();
             if (need_x) b.conv2d_forward(gx.data(), g.data(), wv.data(), prob);
             Tensor gw = need_w ? zeros(wv.shape(), g.device()) : Tensor();
             if (need_w) b.conv2d_backward(nullptr, gw.data(), xv.data(), g.data(), wv.data(), prob);
             return {gx, gw, need_b ? sum(g, {0, 2, 3}) : Tensor()};
           });
  return out;
}

Tensor conv2d_relu_max_pool2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dOptions& o,
                              bool relu, bool max_pool) {
  const Backend::ConvProblem prob = conv_problem(x, weight, bias, o);
  Backend& be = backend(x.device());
  // A plane too small to pool takes the composed path, which reports it as max_pool2d does.
  if (be.has_fused_conv2d() && (!max_pool || (prob.geo.oh >= 2 && prob.geo.ow >= 2)))
    return fused_conv(be, x, weight, bias, prob, {relu, max_pool});
  Tensor y = conv2d(x, weight, bias, o);
  if (relu) y = plexus::relu(y);
  return max_pool ? max_pool2d(y, {2, 2}) : y;
}

namespace {

Geometry pool_geometry(const char* op, const Tensor& x, const Pool2dOptions& o) {
  if (x.dim() != 4) throw ShapeError(dims4(op, x));
  const int64_t sh = o.stride_h ? o.stride_h : o.kernel_h, sw = o.stride_w ? o.stride_w : o.kernel_w;
  if (o.kernel_h < 1 || o.kernel_w < 1 || sh < 1 || sw < 1 || o.pad_h < 0 || o.pad_w < 0)
    throw ValueError(std::string(op) + ": kernel and stride must be >= 1 and padding >= 0");
  if (o.pad_h * 2 > o.kernel_h || o.pad_w * 2 > o.kernel_w)
    throw ValueError(std::string(op) + ": padding must be at most half the kernel size");
  const int64_t h = x.shape()[2], w = x.shape()[3];
  const int64_t oh = out_size(h, o.kernel_h, sh, o.pad_h, 1), ow = out_size(w, o.kernel_w, sw, o.pad_w, 1);
  if (oh < 1 || ow < 1)
    throw ShapeError(std::string(op) + ": a " + std::to_string(o.kernel_h) + "x" + std::to_string(o.kernel_w) +
                     " window does not fit input " + to_string(x.shape()));
  return Geometry{1, h, w, o.kernel_h, o.kernel_w, oh, ow, sh, sw, o.pad_h, o.pad_w, 1, 1};
}

}  // namespace

namespace {

Tensor max_pool(const char* op, const Tensor& x, const Pool2dOptions& o) {
  const Geometry geo = pool_geometry(op, x, o);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const Tensor xc = contiguous_data(x);
  Tensor out = empty({x.shape()[0], x.shape()[1], geo.oh, geo.ow}, x.device());
  Tensor argmax = empty(out.shape(), x.device());
  backend(x.device()).max_pool2d(out.data(), argmax.data(), xc.data(), planes, geo);
  if (needs_grad(x))
    record(out, op, {x}, [argmax, geo, planes, in = x.shape()](const Tensor& g) -> Grads {
      Tensor gx = zeros(in, g.device());
      const Tensor gc = contiguous_data(g);
      backend(g.device()).max_pool2d_backward(gx.data(), gc.data(), argmax.data(), planes, geo);
      return {gx};
    });
  return out;
}

Tensor avg_pool(const char* op, const Tensor& x, const Pool2dOptions& o) {
  const Geometry geo = pool_geometry(op, x, o);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const Tensor xc = contiguous_data(x);
  Tensor out = empty({x.shape()[0], x.shape()[1], geo.oh, geo.ow}, x.device());
  backend(x.device()).avg_pool2d(out.data(), xc.data(), planes, geo, o.count_include_pad);
  if (needs_grad(x))
    record(out, op, {x}, [geo, planes, in = x.shape(), inc = o.count_include_pad](const Tensor& g) -> Grads {
      Tensor gx = zeros(in, g.device());
      const Tensor gc = contiguous_data(g);
      backend(g.device()).avg_pool2d_backward(gx.data(), gc.data(), planes, geo, inc);
      return {gx};
    });
  return out;
}

Tensor pool1d(const char* op, const Tensor& x, const Pool1dOptions& o,
              Tensor (*pool)(const char*, const Tensor&, const Pool2dOptions&)) {
  if (x.dim() != 3) throw ShapeError(std::string(op) + ": expected input [N, C, L], got " + to_string(x.shape()));
  const Pool2dOptions o2{1, o.kernel, 1, o.stride ? o.stride : o.kernel, 0, o.pad, o.count_include_pad};
  return squeeze(pool(op, unsqueeze(x, 2), o2), 2);
}

// Both adaptive poolings: max when `max`, else average.
Tensor adaptive_pool(const char* op, const Tensor& x, int64_t out_h, int64_t out_w, bool max) {
  if (x.dim() != 4) throw ShapeError(dims4(op, x));
  if (out_h < 1 || out_w < 1)
    throw ValueError(std::string(op) + ": the output size must be at least 1x1, got " + std::to_string(out_h) + "x" +
                     std::to_string(out_w));
  const int64_t h = x.shape()[2], w = x.shape()[3];
  if (h < 1 || w < 1) throw ShapeError(std::string(op) + ": input " + to_string(x.shape()) + " has no cells to pool");
  const Backend::AdaptiveGeometry geo{h, w, out_h, out_w};
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const Tensor xc = contiguous_data(x);
  Tensor out = empty({x.shape()[0], x.shape()[1], out_h, out_w}, x.device());
  const Tensor argmax = max ? empty(out.shape(), x.device()) : Tensor();
  backend(x.device()).adaptive_pool2d(out.data(), max ? argmax.data() : nullptr, xc.data(), planes, geo);
  if (needs_grad(x))
    record(out, op, {x}, [argmax, geo, planes, in = x.shape()](const Tensor& g) -> Grads {
      Tensor gx = zeros(in, g.device());
      const Tensor gc = contiguous_data(g);
      backend(g.device()).adaptive_pool2d_backward(gx.data(), gc.data(),
                                                   argmax.defined() ? argmax.data() : nullptr, planes, geo);
      return {gx};
    });
  return out;
}

}  // namespace

Tensor max_pool2d(const Tensor& x, const Pool2dOptions& o) { return max_pool("max_pool2d", x, o); }
Tensor avg_pool2d(const Tensor& x, const Pool2dOptions& o) { return avg_pool("avg_pool2d", x, o); }
Tensor max_pool1d(const Tensor& x, const Pool1dOptions& o) { return pool1d("max_pool1d", x, o, max_pool); }
Tensor avg_pool1d(const Tensor& x, const Pool1dOptions& o) { return pool1d("avg_pool1d", x, o, avg_pool); }
Tensor adaptive_max_pool2d(const Tensor& x, int64_t out_h, int64_t out_w) {
  return adaptive_pool("adaptive_max_pool2d", x, out_h, out_w, true);
}
Tensor adaptive_avg_pool2d(const Tensor& x, int64_t out_h, int64_t out_w) {
  return adaptive_pool("adaptive_avg_pool2d", x, out_h, out_w, false);
}

}  // namespace plexus
