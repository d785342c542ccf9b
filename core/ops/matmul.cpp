// Matrix products through sgemm. A transposed (column-major) view is handed to BLAS with
// the transpose flag and its own leading dimension, so t() and transpose() never copy.
// Derivatives: dA = dC · Bᵀ, dB = Aᵀ · dC (broadcast batch dims are summed by the engine).
#include "autograd/node.h"
#include "ops/cpu/linear_activation.h"
#include "ops/kernels.h"
#include "ops/linear.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus {
namespace {

struct GemmOperand {
  bool trans = false;
  int64_t ld = 1;
};

// How a rows×cols matrix with the given strides can be read by row-major BLAS, if at all.
std::optional<GemmOperand> gemm_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if ((cols <= 1 || cs == 1) && (rows <= 1 || rs >= std::max<int64_t>(1, cols)))
    return GemmOperand{false, rows <= 1 ? std::max<int64_t>(1, cols) : rs};
  if ((rows <= 1 || rs == 1) && (cols <= 1 || cs >= std::max<int64_t>(1, rows)))
    return GemmOperand{true, cols <= 1 ? std::max<int64_t>(1, rows) : cs};
  return std::nullopt;
}

// dA = dC · Bᵀ, dB = Aᵀ · dC.
void record_matmul(Tensor& out, const Tensor& a, const Tensor& b) {
  if (needs_grad(a, b))
    record(out, "matmul", {a, b},
           [sa = Saved(a), sb = Saved(b), ga = a.requires_grad(), gb = b.requires_grad()](const Tensor& g) -> Grads {
             return {ga ? matmul(g, sb.get().transpose(-1, -2)) : Tensor(),
                     gb ? matmul(sa.get().transpose(-1, -2), g) : Tensor()};
           });
}

// The one stride that walks a view's batch dims in order (flat batch index i at i · stride),
// if there is one: dims of size 1 aside, each dim's stride is the next one's times its size.
std::optional<int64_t> flat_batch_stride(const Tensor& v, const Shape& batch) {
  std::optional<int64_t> stride;
  int64_t span = 1;  // batch positions inside the dims seen so far
  for (int64_t d = int64_t(batch.size()) - 1; d >= 0; --d) {
    if (batch[size_t(d)] == 1) continue;
    if (!stride) stride = v.strides()[size_t(d)];
    else if (v.strides()[size_t(d)] != *stride * span) return std::nullopt;
    span *= batch[size_t(d)];
  }
  return stride.value_or(0);
}

// Batched product of tensors with at least 2 dims: one batched gemm when each operand's batch
// dims are walked by one stride; on a GPU an operand that is not (heads cut out of a wider
// tensor, say) is copied first, as one launch beats one per product. Otherwise (the CPU, or a
// batch broadcast in some dims only) one gemm per product.
Tensor matmul_nd(const Tensor& a, const Tensor& b) {
  const int64_t m = a.shape()[a.dim() - 2], k = a.shape()[a.dim() - 1];
  const int64_t kb = b.shape()[b.dim() - 2], n = b.shape()[b.dim() - 1];
  if (k != kb)
    throw ShapeError("matmul: inner dims differ: " + to_string(a.shape()) + " @ " + to_string(b.shape()) + " (" +
                     std::to_string(k) + " vs " + std::to_string(kb) + ")");
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(a_batch, b_batch, "matmul (batch dims)");

  auto prepare = [&](const Tensor& t, int64_t rows, int64_t cols) {
    Shape full = batch;
    full.push_back(rows);
    full.push_back(cols);
    Tensor v = broadcast_view(t, full, "matmul");
    auto layout = gemm_layout(rows, cols, v.strides()[v.dim() - 2], v.strides()[v.dim() - 1]);
    if (!layout || (t.device().is_cuda() && numel(batch) > 1 && !flat_batch_stride(v, batch))) {
      v = broadcast_view(contiguous_data(t), full, "matmul");
      layout = gemm_layout(rows, cols, v.strides()[v.dim() - 2], v.strides()[v.dim() - 1]);
    }
    return std::pair{v, *layout};
  };
  const auto [av, la] = prepare(a, m, k);
  const auto [bv, lb] = prepare(b, k, n);

  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Tensor out = empty(out_shape, a.device());
  Backend& be = backend(a.device());
  const int64_t batches = numel(batch), nb = int64_t(batch.size());
  const std::optional<int64_t> stride_a = flat_batch_stride(av, batch), stride_b = flat_batch_stride(bv, batch);
  if (stride_a && stride_b) {
    be.gemm_batched(la.trans, lb.trans, m, n, k, av.data(), la.ld, *stride_a, bv.data(), lb.ld, *stride_b, 0.f,
                    out.data(), std::max<int64_t>(1, n), m * n, batches);
  } else {
    std::vector<int64_t> idx(nb, 0);
    for (int64_t i = 0; i < batches; ++i) {
      int64_t oa = 0, ob = 0;
      for (int64_t d = 0; d < nb; ++d) {
        oa += idx[d] * av.strides()[d];
        ob += idx[d] * bv.strides()[d];
      }
      be.gemm(la.trans, lb.trans, m, n, k, 1.f, av.data() + oa, la.ld, bv.data() + ob, lb.ld, 0.f,
              out.data() + i * m * n, std::max<int64_t>(1, n));
      for (int64_t d = nb - 1; d >= 0; --d) {
        if (++idx[d] < batch[d]) break;
        idx[d] = 0;
      }
    }
  }
  record_matmul(out, a, b);
  return out;
}

}  // namespace

LinearShape linear_shape(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_same_device(op, {x, weight, bias});
  if (weight.dim() != 2)
    throw ShapeError(std::string(op) + ": weight must be [out, in], got " + to_string(weight.shape()));
  const int64_t out = weight.shape()[0], in = weight.shape()[1];
  if (x.dim() < 1 || x.shape().back() != in)
    throw ShapeError(std::string(op) + ": input " + to_string(x.shape()) + " does not end in " + std::to_string(in) +
                     " features (weight " + to_string(weight.shape()) + ")");
  if (bias.defined() && bias.shape() != Shape{out})
    throw ShapeError(std::string(op) + ": bias must have shape [" + std::to_string(out) + "], got " +
                     to_string(bias.shape()));
  return {x.numel() / in, in, out};
}

Grads linear_grads(const Tensor& dy, const Tensor& x, const Tensor& weight, const LinearShape& s, bool need_x,
                   bool need_w, bool need_b) {
  Backend& be = backend(dy.device());
  Tensor dx, dw, db;
  if (need_x) {
    dx = empty(x.shape(), dy.device());
    be.gemm(false, false, s.rows, s.in, s.out, 1.f, dy.data(), s.out, weight.data(), s.in, 0.f, dx.data(), s.in);
  }
  if (need_w) {
    dw = empty({s.out, s.in}, dy.device());
    be.gemm(true, false, s.out, s.in, s.rows, 1.f, dy.data(), s.out, x.data(), s.in, 0.f, dw.data(), s.in);
  }
  if (need_b) db = sum(dy.view({s.rows, s.out}), {0});
  return {dx, dw, db};
}

// One product for the whole layer: sgemm adds x·Wᵀ onto the bias rows (beta = 1). With many rows
// and a small weight (a transformer's projections) the CPU writes them block by block of rows
// just before each block's product (cpu::linear_forward_fused), which packs the weight again for
// every block: that pays only while the weight stays in cache and the blocks are many (an MLP
// layer of 784 x 1024 on a batch of 128 ran 30 % slower). Otherwise all at once first.
constexpr int64_t kSmallWeight = 1 << 16, kManyRows = 1024;
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const LinearShape s = linear_shape("linear", x, weight, bias);
  const Tensor xc = contiguous_data(x), wc = contiguous_data(weight);
  Shape y_shape = x.shape();
  y_shape.back() = s.out;
  Tensor y = empty(y_shape, x.device());
  Backend& be = backend(x.device());
  if (bias.defined() && x.device().is_cpu() && s.in > 0 && s.out > 0 && s.in * s.out <= kSmallWeight &&
      s.rows >= kManyRows) {
    const Tensor bc = contiguous_data(bias);
    cpu::linear_forward_fused(y.data(), nullptr, xc.data(), wc.data(), bc.data(), UnaryOp::Copy, s.rows, s.in, s.out);
  } else {
    if (bias.defined())
      be.unary(UnaryOp::Copy, y.view({s.rows, s.out}), broadcast_view(bias, {s.rows, s.out}, "linear"), 0, 0);
    be.gemm(false, true, s.rows, s.out, s.in, 1.f, xc.data(), s.in, wc.data(), s.in, bias.defined() ? 1.f : 0.f,
            y.data(), s.out);
  }
  if (needs_grad(x, weight, bias))
    record(y, "linear", {x, weight, bias},
           [sx = Saved(xc), sw = Saved(wc), s, need_x = x.requires_grad(), need_w = weight.requires_grad(),
            need_b = bias.defined() && bias.requires_grad()](const Tensor& g) -> Grads {
             return linear_grads(contiguous_data(g), sx.get(), sw.get(), s, need_x, need_w, need_b);
           });
  return y;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_same_device("matmul", {a, b});
  if (a.dim() == 0 || b.dim() == 0)
    throw ShapeError("matmul: both operands need at least 1 dim, got " + to_string(a.shape()) + " and " +
                     to_string(b.shape()));
  if (a.dim() == 1 && b.dim() == 1) return matmul_nd(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
  if (a.dim() == 1) return matmul_nd(a.unsqueeze(0), b).squeeze(-2);
  if (b.dim() == 1) return matmul_nd(a, b.unsqueeze(1)).squeeze(-1);
  return matmul_nd(a, b);
}

}  // namespace plexus
