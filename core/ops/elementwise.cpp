// Elementwise ops and their derivatives. Gradients w.r.t. broadcast inputs are returned
// at the output's shape; the engine sums them back to each input's shape.
#include <atomic>
#include <cmath>
#include <limits>

#include "autograd/node.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus {

Tensor broadcast_view(const Tensor& a, const Shape& shape, const char* op) {
  if (a.shape() == shape) return a;
  const int64_t nd = int64_t(shape.size()), lead = nd - a.dim();
  if (lead < 0)
    throw ShapeError(std::string(op) + ": cannot broadcast shape " + to_string(a.shape()) + " to " + to_string(shape));
  Strides st(nd, 0);
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (a.shape()[d] == shape[lead + d]) st[lead + d] = a.strides()[d];
    else if (a.shape()[d] != 1)
      throw ShapeError(std::string(op) + ": cannot broadcast shape " + to_string(a.shape()) + " to " +
                       to_string(shape) + " (dim " + std::to_string(d) + ")");
  }
  return make_view(a, shape, std::move(st), a.offset());
}

void check_same_device(const char* op, std::initializer_list<Tensor> ts) {
  const Tensor* first = nullptr;
  for (const Tensor& t : ts) {
    if (!t.defined()) continue;
    if (!first) first = &t;
    else if (!(t.device() == first->device()))
      throw DeviceError(std::string(op) + ": tensors are on different devices (" + first->device().str() + " and " +
                        t.device().str() + ")");
  }
}

namespace {
std::atomic<int64_t> g_hidden_copies{0}, g_hidden_copy_elements{0};
}  // namespace

void note_hidden_copy(int64_t elements) {
  g_hidden_copies.fetch_add(1, std::memory_order_relaxed);
  g_hidden_copy_elements.fetch_add(elements, std::memory_order_relaxed);
}

HiddenCopies hidden_copies() { return {g_hidden_copies.load(), g_hidden_copy_elements.load()}; }

Tensor contiguous_data(const Tensor& a) {
  if (a.is_contiguous()) return a;
  note_hidden_copy(a.numel());
  Tensor out = empty(a.shape(), a.device());
  backend(a.device()).unary(UnaryOp::Copy, out, a, 0, 0);
  return out;
}

Tensor run_unary(UnaryOp op, const Tensor& a, float p0, float p1) {
  Tensor out = empty(a.shape(), a.device());
  backend(a.device()).unary(op, out, a, p0, p1);
  return out;
}

Tensor run_binary(BinaryOp op, const Tensor& a, const Tensor& b, const char* name, float p0, float p1) {
  check_same_device(name, {a, b});
  const Shape s = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = empty(s, a.device());
  backend(a.device()).binary(op, out, broadcast_view(a, s, name), broadcast_view(b, s, name), p0, p1);
  return out;
}

// ---- arithmetic --------------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = run_binary(BinaryOp::Add, a, b, "add", 1.f);
  if (needs_grad(a, b)) record(out, "add", {a, b}, [](const Tensor& g) -> Grads { return {g, g}; });
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = run_binary(BinaryOp::Sub, a, b, "sub");
  if (needs_grad(a, b)) record(out, "sub", {a, b}, [](const Tensor& g) -> Grads { return {g, -g}; });
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = run_binary(BinaryOp::Mul, a, b, "mul");
  if (needs_grad(a, b))
    record(out, "mul", {a, b}, [sa = Saved(a), sb = Saved(b), ga = a.requires_grad(), gb = b.requires_grad()](const Tensor& g) -> Grads {
      return {ga ? g * sb.get() : Tensor(), gb ? g * sa.get() : Tensor()};
    });
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = run_binary(BinaryOp::Div, a, b, "div");
  if (needs_grad(a, b))
    record(out, "div", {a, b}, [sa = Saved(a), sb = Saved(b), gb = b.requires_grad()](const Tensor& g) -> Grads {
      const Tensor ga = g / sb.get();  // d(a/b)/da = 1/b
      return {ga, gb ? -ga * sa.get() / sb.get() : Tensor()};  // d(a/b)/db = -a/b^2
    });
  return out;
}

Tensor neg(const Tensor& a) {
  Tensor out = run_unary(UnaryOp::Neg, a);
  if (needs_grad(a)) record(out, "neg", {a}, [](const Tensor& g) -> Grads { return {-g}; });
  return out;
}

Tensor add(const Tensor& a, float s) {
  Tensor out = run_unary(UnaryOp::AddScalar, a, s);
  if (needs_grad(a)) record(out, "add_scalar", {a}, [](const Tensor& g) -> Grads { return {g}; });
  return out;
}

Tensor mul(const Tensor& a, float s) {
  Tensor out = run_unary(UnaryOp::MulScalar, a, s);
  if (needs_grad(a)) record(out, "mul_scalar", {a}, [s](const Tensor& g) -> Grads { return {g * s}; });
  return out;
}

Tensor pow(const Tensor& a, float p) {
  Tensor out = run_unary(UnaryOp::Pow, a, p);
  if (needs_grad(a))
    record(out, "pow", {a}, [sa = Saved(a), p](const Tensor& g) -> Grads {
      return {run_binary(BinaryOp::PowGrad, g, sa.get(), "pow_backward", p)};  // p * a^(p-1)
    });
  return out;
}

// Where a == b the subgradient is split evenly, as for max/min reductions.
static Tensor extremum(const Tensor& a, const Tensor& b, bool is_max) {
  const char* name = is_max ? "maximum" : "minimum";
  Tensor out = run_binary(is_max ? BinaryOp::Maximum : BinaryOp::Minimum, a, b, name);
  if (needs_grad(a, b))
    record(out, name, {a, b}, [sa = Saved(a), sb = Saved(b), is_max](const Tensor& g) -> Grads {
      const Tensor x = sa.get(), y = sb.get();
      const Tensor wa = (is_max ? gt(x, y) : lt(x, y)) + eq(x, y) * 0.5f;
      const Tensor ga = g * wa;
      return {ga, g - ga};
    });
  return out;
}
Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(a, b, true); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(a, b, false); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, float s) { return add(a, s); }
Tensor operator+(float s, const Tensor& a) { return add(a, s); }
Tensor operator-(const Tensor& a, float s) { return add(a, -s); }
Tensor operator-(float s, const Tensor& a) { return add(neg(a), s); }
Tensor operator*(const Tensor& a, float s) { return mul(a, s); }
Tensor operator*(float s, const Tensor& a) { return mul(a, s); }
Tensor operator/(const Tensor& a, float s) { return mul(a, 1.f / s); }
Tensor operator/(float s, const Tensor& a) { return mul(pow(a, -1.f), s); }

// ---- functions: forward kernel, derivative from the saved input x or output y -----------
Tensor exp(const Tensor& a) {
  Tensor out = run_unary(UnaryOp::Exp, a);
  if (needs_grad(a)) record(out, "exp", {a}, [y = Saved(out)](const Tensor& g) -> Grads { return {g * y.get()}; });
  return out;
}

Tensor log(const Tensor& a) {
  Tensor out = run_unary(UnaryOp::Log, a);
  if (needs_grad(a)) record(out, "log", {a}, [x = Saved(a)](const Tensor& g) -> Grads { return {g / x.get()}; });
  return out;
}

Tensor sqrt(const Tensor& a) {
  Tensor out = run_unary(UnaryOp::Sqrt, a);
  if (needs_grad(a))
    record(out, "sqrt", {a}, [y = Saved(out)](const Tensor& g) -> Grads { return {g * 0.5f / y.get()}; });
  return out;
}

// Unary ops whose derivative is one fused kernel of (g, x or y).
static Tensor unary_with_grad(const char* name, UnaryOp op, BinaryOp grad_op, bool grad_uses_output,
                              const Tensor& a, float p0 = 0, float p1 = 0) {
  Tensor out = run_unary(op, a, p0, p1);
  if (needs_grad(a))
    record(out, name, {a}, [s = Saved(grad_uses_output ? out : a), grad_op, p0, p1, name](const Tensor& g) -> Grads {
      return {run_binary(grad_op, g, s.get(), name, p0, p1)};
    });
  return out;
}

Tensor abs(const Tensor& a) { return unary_with_grad("abs", UnaryOp::Abs, BinaryOp::AbsGrad, false, a); }
Tensor relu(const Tensor& a) { return unary_with_grad("relu", UnaryOp::Relu, BinaryOp::ReluGrad, false, a); }
Tensor leaky_relu(const Tensor& a, float slope) {
  return unary_with_grad("leaky_relu", UnaryOp::LeakyRelu, BinaryOp::LeakyReluGrad, false, a, slope);
}
Tensor sigmoid(const Tensor& a) { return unary_with_grad("sigmoid", UnaryOp::Sigmoid, BinaryOp::SigmoidGrad, true, a); }
Tensor tanh(const Tensor& a) { return unary_with_grad("tanh", UnaryOp::Tanh, BinaryOp::TanhGrad, true, a); }
Tensor gelu(const Tensor& a) { return unary_with_grad("gelu", UnaryOp::Gelu, BinaryOp::GeluGrad, false, a); }
Tensor softplus(const Tensor& a, float beta, float threshold) {
  if (beta <= 0) throw ValueError("softplus: beta must be positive, got " + std::to_string(beta));
  return unary_with_grad("softplus", UnaryOp::Softplus, BinaryOp::SoftplusGrad, false, a, beta, threshold);
}
Tensor elu(const Tensor& a, float alpha) {
  return unary_with_grad("elu", UnaryOp::Elu, BinaryOp::EluGrad, false, a, alpha, 1.f);
}
Tensor selu(const Tensor& a) {
  // PyTorch's constants (Klambauer et al. 2017), rounded to float as its kernels use them.
  constexpr float alpha = 1.6732632423543772848170429916717f, scale = 1.0507009873554804934193349852946f;
  return unary_with_grad("selu", UnaryOp::Elu, BinaryOp::EluGrad, false, a, alpha, scale);
}
Tensor silu(const Tensor& a) { return unary_with_grad("silu", UnaryOp::Silu, BinaryOp::SiluGrad, false, a); }
Tensor mish(const Tensor& a) { return unary_with_grad("mish", UnaryOp::Mish, BinaryOp::MishGrad, false, a); }
Tensor hardswish(const Tensor& a) {
  return unary_with_grad("hardswish", UnaryOp::Hardswish, BinaryOp::HardswishGrad, false, a);
}
Tensor hardsigmoid(const Tensor& a) {
  return unary_with_grad("hardsigmoid", UnaryOp::Hardsigmoid, BinaryOp::HardsigmoidGrad, false, a);
}

// The slopes as a tensor that broadcasts against x: one for every element, or one per channel
// of dim 1 ([C] viewed as [C, 1, ..., 1]), so that the engine sums each slope's gradient.
static Tensor prelu_slopes(const Tensor& x, const Tensor& weight) {
  if (weight.dim() != 1)
    throw ShapeError("prelu: weight must be 1-D [num_parameters], got " + to_string(weight.shape()));
  if (weight.numel() == 1) return reshape(weight, {});  // a 0-d slope keeps x's shape, even 0-d
  const int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
  if (weight.numel() != channels)
    throw ShapeError("prelu: " + std::to_string(weight.numel()) + " slopes for input " + to_string(x.shape()) +
                     ", which has " + std::to_string(channels) + " channel" + (channels == 1 ? "" : "s") +
                     " (dim 1): num_parameters must be 1 or the channel count");
  Shape s(size_t(x.dim() - 1), 1);
  s[0] = channels;
  return reshape(weight, s);
}

Tensor prelu(const Tensor& a, const Tensor& weight) {
  const Tensor w = prelu_slopes(a, weight);
  Tensor out = run_binary(BinaryOp::Prelu, a, w, "prelu");
  if (needs_grad(a, w))
    record(out, "prelu", {a, w},
           [sx = Saved(a), sw = Saved(w), ga = a.requires_grad(), gw = w.requires_grad()](const Tensor& g) -> Grads {
             const Tensor x = sx.get(), zero = zeros({}, x.device()), positive = gt(x, zero);
             // x > 0: the identity's; otherwise the slope's, and x for the slope.
             return {ga ? where(positive, g, g * sw.get()) : Tensor(), gw ? where(positive, zero, g * x) : Tensor()};
           });
  return out;
}

Tensor clamp(const Tensor& a, std::optional<float> lo, std::optional<float> hi) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const float l = lo.value_or(-inf), h = hi.value_or(inf);
  if (l > h) throw ValueError("clamp: min " + std::to_string(l) + " is greater than max " + std::to_string(h));
  return unary_with_grad("clamp", UnaryOp::Clamp, BinaryOp::ClampGrad, false, a, l, h);
}

// ---- comparisons and selection -------------------------------------------------------------
Tensor eq(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::Eq, a, b, "eq"); }
Tensor ne(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::Ne, a, b, "ne"); }
Tensor lt(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::Lt, a, b, "lt"); }
Tensor le(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::Le, a, b, "le"); }
Tensor gt(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::Gt, a, b, "gt"); }
Tensor ge(const Tensor& a, const Tensor& b) { return run_binary(BinaryOp::Ge, a, b, "ge"); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same_device("where", {cond, a, b});
  const Shape s = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = empty(s, a.device());
  backend(a.device()).where(out, broadcast_view(cond, s, "where"), broadcast_view(a, s, "where"),
                            broadcast_view(b, s, "where"));
  if (needs_grad(a, b))
    record(out, "where", {cond, a, b}, [c = Saved(cond)](const Tensor& g) -> Grads {
      const Tensor zero = zeros({}, g.device());
      return {Tensor(), where(c.get(), g, zero), where(c.get(), zero, g)};
    });
  return out;
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, float value) {
  return where(mask, full({}, value, a.device()), a);
}

}  // namespace plexus
