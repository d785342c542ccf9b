// Neural-network ops: softmax / log_softmax, dropout, batch_norm, the losses, layer_norm, the
// group, instance and RMS norms, and the causal softmax of attention.
// Fused where it matters (softmax, cross-entropy, batch_norm: a pass for the statistics and
// one to normalise, two back); composed from differentiable ops where the composition is
// already exact and clear (mse, nll).
#include <cmath>

#include "autograd/node.h"
#include "ops/cpu/layer_norm.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "ops/replica_sum.h"
#include "util/error.h"

namespace plexus {
namespace {

struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};
Split split_at(const Shape& s, int64_t dim) {
  Split r;
  if (s.empty()) return r;
  for (int64_t d = 0; d < dim; ++d) r.outer *= s[d];
  r.n = s[dim];
  for (int64_t d = dim + 1; d < int64_t(s.size()); ++d) r.inner *= s[d];
  return r;
}

Tensor softmax_impl(const Tensor& a, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  dim = wrap_dim(dim, a.dim(), name);
  const Split sp = split_at(a.shape(), dim);
  const Tensor x = contiguous_data(a);
  Tensor out = empty(a.shape(), a.device());
  backend(a.device()).softmax(out.data(), x.data(), sp.outer, sp.n, sp.inner, log);
  if (needs_grad(a))
    record(out, name, {a}, [y = Saved(out), sp, log](const Tensor& g) -> Grads {
      const Tensor gc = contiguous_data(g), yv = y.get();
      Tensor gi = empty(yv.shape(), g.device());
      backend(g.device()).softmax_backward(gi.data(), gc.data(), yv.data(), sp.outer, sp.n, sp.inner, log);
      return {gi};
    });
  return out;
}

Tensor reduce_loss(const Tensor& per_item, Reduction r) {
  switch (r) {
    case Reduction::None: return per_item;
    case Reduction::Sum: return sum(per_item);
    case Reduction::Mean: break;
  }
  return mean(per_item);
}

// input [..., C] (rank >= 2, classes last) and target of the leading shape [...]: every
// position is one row of C scores with one class index, or `ignore_index`. Whether some row may
// be ignored: known on the CPU, where the targets are read; assumed off it (no sync to find out).
bool check_class_targets(const Tensor& input, const Tensor& target, const char* op, int64_t ignore_index) {
  if (input.dim() < 2)
    throw ShapeError(std::string(op) + ": expected input of shape [N, C] or [N, ..., C] (classes last), got " +
                     to_string(input.shape()));
  const Shape lead(input.shape().begin(), input.shape().end() - 1);
  if (target.shape() != lead)
    throw ShapeError(std::string(op) + ": expected target of shape " + to_string(lead) +
                     " (one class index per row of scores " + to_string(input.shape()) + "), got " +
                     to_string(target.shape()));
  if (!target.device().is_cpu()) return true;
  const Tensor t = contiguous_data(target);
  const int64_t c = input.shape().back();
  bool ignored = false;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = t.data()[i];
    if (v == float(ignore_index)) {
      ignored = true;
      continue;
    }
    if (!(v >= 0 && v < float(c)) || v != std::floor(v))
      throw IndexError(std::string(op) + ": target " + std::to_string(v) + " at position " + std::to_string(i) +
                       " is not a class index in [0, " + std::to_string(c) + ")");
  }
  return ignored;
}

void check_class_weight(const Tensor& input, const Tensor& weight, const char* op) {
  if (weight.defined() && weight.shape() != Shape{input.shape().back()})
    throw ShapeError(std::string(op) + ": expected one weight per class, shape [" + std::to_string(input.shape().back()) +
                     "], got " + to_string(weight.shape()));
}

// The rows of class targets that count, as PyTorch's weighted losses see them: `safe` has the
// ignored targets replaced by class 0 (so that every index is valid), `counted` is 1 for a row
// that counts and 0 for an ignored one, and `row_weight` its target's class weight (`counted`
// without class weights). The weights get no gradient, as in PyTorch.
struct CountedTargets {
  Tensor safe, counted, row_weight;
};
CountedTargets counted_targets(const Tensor& target, const Tensor& weight, int64_t ignore_index) {
  NoGradGuard no_grad;
  const Tensor ignored = eq(target, scalar(float(ignore_index), target.device()));
  CountedTargets r;
  r.safe = where(ignored, scalar(0.f, target.device()), target);
  r.counted = 1.f - ignored;
  r.row_weight = r.counted;
  if (weight.defined())
    r.row_weight = r.counted * index_select(weight, 0, r.safe.reshape({target.numel()})).reshape(target.shape());
  return r;
}

// Weighted rows reduced: Mean divides by the total weight of the rows counted.
Tensor reduce_weighted(const Tensor& rows, const Tensor& row_weight, Reduction r) {
  return r == Reduction::Mean ? sum(rows) / sum(row_weight) : reduce_loss(rows, r);
}

void check_same_shape(const Tensor& a, const Tensor& b, const char* op) {
  if (a.shape() != b.shape())
    throw ShapeError(std::string(op) + ": input shape " + to_string(a.shape()) + " and target shape " +
                     to_string(b.shape()) + " differ");
}

// Inverted dropout with one draw per element of a mask of `mask_shape`, broadcast over `a` (its
// shape, or [N, C, 1, 1] to drop whole channels): survivors are scaled by 1/(1-p) so eval needs
// no rescaling.
Tensor inverted_dropout(const Tensor& a, const Shape& mask_shape, float p, bool training, Generator* gen,
                        const char* op) {
  if (!(p >= 0.f && p <= 1.f)) throw ValueError(std::string(op) + ": p must be in [0, 1], got " + std::to_string(p));
  if (!training || p == 0.f) return a;
  if (p == 1.f) return a * zeros({}, a.device());
  Tensor u = empty(mask_shape, a.device());
  backend(a.device()).random_uniform(u, 0.f, 1.f, gen ? *gen : default_generator());
  const Tensor mask = run_unary(UnaryOp::MulScalar, lt(u, full({}, 1.f - p, a.device())), 1.f / (1.f - p));
  return a * mask;
}

// The channel dim 1 of x [N, C, *] and the checks of the per-channel tensors ([C] or undefined).
int64_t channels_of(const Tensor& x, const char* op, std::initializer_list<const Tensor*> per_channel) {
  const int64_t c = x.shape()[1];
  for (const Tensor* t : per_channel)
    if (t->defined() && t->shape() != Shape{c})
      throw ShapeError(std::string(op) + ": weight, bias and running statistics must have shape [" + std::to_string(c) +
                       "] (the channels of " + to_string(x.shape()) + "), got " + to_string(t->shape()));
  return c;
}

// y [N, C, *] * weight + bias, each [C] (undefined = none) broadcast over the channel dim 1.
Tensor per_channel_affine(const Tensor& y, const Tensor& weight, const Tensor& bias) {
  Shape s(size_t(y.dim() - 1), 1);
  s[0] = y.shape()[1];
  Tensor out = y;
  if (weight.defined()) out = out * weight.reshape(s);
  if (bias.defined()) out = out + bias.reshape(s);
  return out;
}

}  // namespace

Tensor softmax(const Tensor& a, int64_t dim) { return softmax_impl(a, dim, false); }
Tensor log_softmax(const Tensor& a, int64_t dim) { return softmax_impl(a, dim, true); }

Tensor dropout(const Tensor& a, float p, bool training, Generator* gen) {
  return inverted_dropout(a, a.shape(), p, training, gen, "dropout");
}

Tensor dropout2d(const Tensor& a, float p, bool training, Generator* gen) {
  if (a.dim() != 4) throw ShapeError("dropout2d: expected input [N, C, H, W], got " + to_string(a.shape()));
  return inverted_dropout(a, {a.shape()[0], a.shape()[1], 1, 1}, p, training, gen, "dropout2d");
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, float momentum, float eps) {
  if (x.dim() < 2) throw ShapeError("batch_norm: expected input [N, C, ...], got " + to_string(x.shape()));
  const int64_t c = x.shape()[1];
  for (const Tensor* t : {&running_mean, &running_var, &weight, &bias})
    if (t->defined() && t->shape() != Shape{c})
      throw ShapeError("batch_norm: parameters and running statistics must have shape [" + std::to_string(c) +
                       "], got " + to_string(t->shape()));
  check_same_device("batch_norm", {x, running_mean, running_var, weight, bias});
  const int64_t n = x.shape()[0], s = n * c == 0 ? 0 : x.numel() / (n * c), count = n * s;
  const Tensor xc = contiguous_data(x);
  Backend& be = backend(x.device());
  const bool batch_stats = training || !running_mean.defined();
  // Synchronised BatchNorm: the statistics of every process's rows (ops/replica_sum.h).
  const ReplicaSum* across = training ? replica_sum() : nullptr;
  ReplicaSum sync = across ? *across : ReplicaSum();
  double total = double(count);  // the rows the statistics are over, on every process
  Tensor mean_t, invstd;
  {
    NoGradGuard no_grad;
    if (batch_stats) {
      mean_t = empty({c}, x.device());
      invstd = empty({c}, x.device());
      Tensor var = empty({c}, x.device());
      if (count > 0) be.batch_norm_stats(mean_t.data(), var.data(), invstd.data(), xc.data(), n, c, s, eps);
      if (sync) {
        // Σx, Σx² and the count over the processes; the mean and biased variance from them.
        Tensor sums = concat({mean_t * float(count), (var + mean_t * mean_t) * float(count), full({1}, float(count), x.device())});
        sync(sums);
        total = double(sums.narrow(0, 2 * c, 1).item());
        mean_t = sums.narrow(0, 0, c) * float(1.0 / total);
        var = clamp(sums.narrow(0, c, c) * float(1.0 / total) - mean_t * mean_t, 0.f, std::nullopt);
        invstd = pow(var + eps, -0.5f);
      }
      if (total <= 1)
        throw ValueError("batch_norm: training needs more than one value per channel, got input " + to_string(x.shape()));
      if (training && running_mean.defined()) {
        Tensor rm = running_mean, rv = running_var;
        rm.mul_(1.f - momentum).add_(mean_t, momentum);
        // The running variance is the unbiased estimate, as in PyTorch.
        rv.mul_(1.f - momentum).add_(var, momentum * float(total / (total - 1)));
      }
    } else {
      mean_t = contiguous_data(running_mean);
      invstd = contiguous_data(pow(running_var + eps, -0.5f));
    }
  }
  const Tensor w = weight.defined() ? contiguous_data(weight) : Tensor();
  const Tensor b = bias.defined() ? contiguous_data(bias) : Tensor();
  Tensor y = empty(x.shape(), x.device());
  be.batch_norm_apply(y.data(), xc.data(), mean_t.data(), invstd.data(), w.defined() ? w.data() : nullptr,
                      b.defined() ? b.data() : nullptr, n, c, s);
  if (needs_grad(x, weight, bias)) {
    // The input's gradient needs the sums of dy and dy·x̂ over the rows the statistics are over
    // (with sync, every process's; the kernel divides by this process's count, hence the
    // scale). The weight's and bias's gradients stay this process's: the gradient reducer sums them.
    const float scale = float(double(count) / total);
    record(y, "batch_norm", {x, weight, bias},
           [sx = Saved(xc), mean_t, invstd, sw = w.defined() ? Saved(w) : Saved(), batch_stats, sync, scale, n, c,
            s](const Tensor& g) -> Grads {
             const Tensor dy = contiguous_data(g), xv = sx.get(), wv = sw.get();
             Backend& bk = backend(dy.device());
             const Tensor sum_dy = empty({c}, dy.device()), sum_dy_xhat = empty({c}, dy.device());
             bk.batch_norm_backward_reduce(sum_dy.data(), sum_dy_xhat.data(), dy.data(), xv.data(), mean_t.data(),
                                           invstd.data(), n, c, s);
             Tensor all_dy = sum_dy, all_dy_xhat = sum_dy_xhat;
             if (sync) {
               NoGradGuard no_grad;
               Tensor both = concat({sum_dy, sum_dy_xhat});
               sync(both);
               all_dy = both.narrow(0, 0, c) * scale;
               all_dy_xhat = both.narrow(0, c, c) * scale;
             }
             Tensor dx = empty(xv.shape(), dy.device());
             bk.batch_norm_backward_input(dx.data(), dy.data(), xv.data(), mean_t.data(), invstd.data(),
                                          wv.defined() ? wv.data() : nullptr, batch_stats ? all_dy.data() : nullptr,
                                          batch_stats ? all_dy_xhat.data() : nullptr, n, c, s);
             return {dx, wv.defined() ? sum_dy_xhat : Tensor(), sum_dy};
           });
  }
  return y;
}

namespace {
// log-softmax and NLL with label smoothing fused, every row counted once.
Tensor fused_cross_entropy(const Tensor& logits, const Tensor& target, float smoothing, Reduction reduction) {
  // Every position is a row: [N, ..., C] is [n, C] to the kernels, the loss has the target's shape.
  const int64_t c = logits.shape().back(), n = target.numel();
  const Tensor x = contiguous_data(logits), t = contiguous_data(target);
  Tensor loss = empty(target.shape(), logits.device()), lse = empty({n}, logits.device());
  backend(logits.device()).cross_entropy(loss.data(), lse.data(), x.data(), t.data(), n, c, smoothing);
  // The reduction is part of the op: its one backward reads the scalar gradient of the sum
  // or mean directly (stride 0), instead of a node that would expand it to n rows first.
  Tensor out;
  {
    NoGradGuard no_grad;
    out = reduce_loss(loss, reduction);
  }
  if (needs_grad(logits)) {
    const float scale = reduction == Reduction::Mean ? 1.f / float(n) : 1.f;
    const int64_t stride = reduction == Reduction::None ? 1 : 0;
    record(out, "cross_entropy", {logits}, [sx = Saved(x), lse, t, n, c, smoothing, scale, stride](const Tensor& g) -> Grads {
      const Tensor gc = contiguous_data(g), xv = sx.get();
      Tensor gx = empty(xv.shape(), g.device());
      backend(g.device()).cross_entropy_backward(gx.data(), gc.data(), stride, scale, xv.data(), lse.data(), t.data(),
                                                 n, c, smoothing);
      return {gx};
    });
  }
  return out;
}
}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& target, float smoothing, Reduction reduction,
                     const Tensor& weight, int64_t ignore_index) {
  check_same_device("cross_entropy", {logits, target, weight});
  const bool may_ignore = check_class_targets(logits, target, "cross_entropy", ignore_index);
  check_class_weight(logits, weight, "cross_entropy");
  if (!(smoothing >= 0.f && smoothing <= 1.f))
    throw ValueError("cross_entropy: label_smoothing must be in [0, 1], got " + std::to_string(smoothing));
  if (!weight.defined() && !may_ignore) return fused_cross_entropy(logits, target, smoothing, reduction);
  // The fused rows on safe targets, scaled by each row's weight (0 for an ignored row). With
  // class weights PyTorch 1.13 weights the smoothed part per class, not by the target's weight:
  // (1 - s)·w[t]·(-log p_t) + (s / C)·Σ_c w[c]·(-log p_c), its Mean over the rows' total weight.
  const CountedTargets ct = counted_targets(target, weight, ignore_index);
  if (!weight.defined())
    return reduce_weighted(fused_cross_entropy(logits, ct.safe, smoothing, Reduction::None) * ct.row_weight,
                           ct.row_weight, reduction);
  Tensor rows = fused_cross_entropy(logits, ct.safe, 0.f, Reduction::None) * (ct.row_weight * (1.f - smoothing));
  if (smoothing > 0.f) {
    const float share = smoothing / float(logits.shape().back());
    rows = rows - sum(log_softmax(logits, -1) * weight, {-1}) * (ct.counted * share);
  }
  return reduce_weighted(rows, ct.row_weight, reduction);
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction, const Tensor& weight,
                int64_t ignore_index) {
  check_same_device("nll_loss", {log_probs, target, weight});
  const bool may_ignore = check_class_targets(log_probs, target, "nll_loss", ignore_index);
  check_class_weight(log_probs, weight, "nll_loss");
  if (!weight.defined() && !may_ignore)
    return reduce_loss(-gather(log_probs, -1, target.unsqueeze(-1)).squeeze(-1), reduction);
  const CountedTargets ct = counted_targets(target, weight, ignore_index);
  const Tensor rows = -gather(log_probs, -1, ct.safe.unsqueeze(-1)).squeeze(-1) * ct.row_weight;
  return reduce_weighted(rows, ct.row_weight, reduction);
}

// ---- sequence models: layer norm and the causal softmax of attention -----------------------

void check_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps) {
  if (x.dim() < 1) throw ShapeError("layer_norm: expected input [..., D], got a scalar");
  const int64_t d = x.shape().back();
  for (const Tensor* p : {&weight, &bias})
    if (p->defined() && p->shape() != Shape{d})
      throw ShapeError("layer_norm: weight and bias must have shape [" + std::to_string(d) + "] (the input's last dim, " +
                       to_string(x.shape()) + "), got " + to_string(p->shape()));
  if (!(eps > 0.f)) throw ValueError("layer_norm: eps must be positive, got " + std::to_string(eps));
  check_same_device("layer_norm", {x, weight, bias});
}

void record_layer_norm(Tensor& y, const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& xc,
                       const Tensor& w, const Tensor& mean_t, const Tensor& invstd) {
  const int64_t d = xc.shape().back(), rows = mean_t.numel();
  record(y, "layer_norm", {x, weight, bias},
         [sx = Saved(xc), mean_t, invstd, sw = w.defined() ? Saved(w) : Saved(), has_bias = bias.defined(), rows,
          d](const Tensor& g) -> Grads {
           const Tensor dy = contiguous_data(g), xv = sx.get(), wv = sw.get();
           Tensor dx = empty(xv.shape(), dy.device());
           backend(dy.device()).layer_norm_backward(dx.data(), dy.data(), xv.data(), mean_t.data(), invstd.data(),
                                                    wv.defined() ? wv.data() : nullptr, rows, d);
           Tensor gw, gb;
           if (dy.device().is_cpu()) {  // one pass over dy and x
             if (wv.defined()) gw = empty({d});
             if (has_bias) gb = empty({d});
             if (gw.defined() || gb.defined())
               cpu::layer_norm_param_grads(gw.defined() ? gw.data() : nullptr, gb.defined() ? gb.data() : nullptr,
                                           dy.data(), xv.data(), mean_t.data(), invstd.data(), rows, d);
             return {dx, gw, gb};
           }
           // Elsewhere the sums over rows, Σ dy·xhat and Σ dy, by the reduce kernels.
           const Tensor dy2 = dy.view({rows, d});
           if (wv.defined()) {
             const Tensor xhat = (xv.view({rows, d}) - mean_t.view({rows, 1})) * invstd.view({rows, 1});
             gw = sum(dy2 * xhat, {0});
           }
           if (has_bias) gb = sum(dy2, {0});
           return {dx, gw, gb};
         });
}

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps) {
  check_layer_norm(x, weight, bias, eps);
  const int64_t d = x.shape().back(), rows = d == 0 ? 0 : x.numel() / d;
  const Tensor xc = contiguous_data(x);
  const Tensor w = weight.defined() ? contiguous_data(weight) : Tensor();
  const Tensor b = bias.defined() ? contiguous_data(bias) : Tensor();
  Tensor y = empty(x.shape(), x.device()), mean_t = empty({rows}, x.device()), invstd = empty({rows}, x.device());
  backend(x.device()).layer_norm(y.data(), mean_t.data(), invstd.data(), xc.data(), w.defined() ? w.data() : nullptr,
                                 b.defined() ? b.data() : nullptr, rows, d, eps);
  if (needs_grad(x, weight, bias)) record_layer_norm(y, x, weight, bias, xc, w, mean_t, invstd);
  return y;
}

// ---- group, instance and RMS normalisation: compositions of layer_norm, batch_norm and the
// elementwise ops, so their derivatives (and the device kernels) are those ops' -------------

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, float eps) {
  if (x.dim() < 2) throw ShapeError("group_norm: expected input [N, C, *], got " + to_string(x.shape()));
  const int64_t c = channels_of(x, "group_norm", {&weight, &bias}), n = x.shape()[0];
  if (num_groups < 1 || c % num_groups != 0)
    throw ShapeError("group_norm: num_groups " + std::to_string(num_groups) + " does not divide the " +
                     std::to_string(c) + " channels of " + to_string(x.shape()));
  check_same_device("group_norm", {x, weight, bias});
  // A group's channels and their positions are adjacent in [N, C, *]: each (example, group) is
  // one row of layer_norm.
  const int64_t row = x.numel() == 0 ? 0 : x.numel() / (n * num_groups);
  const Tensor y = layer_norm(reshape(x, {n, num_groups, row}), Tensor(), Tensor(), eps).reshape(x.shape());
  return per_channel_affine(y, weight, bias);
}

Tensor instance_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                     const Tensor& bias, bool use_input_stats, float momentum, float eps) {
  if (x.dim() < 3)
    throw ShapeError("instance_norm: expected input [N, C, *] with positions, got " + to_string(x.shape()));
  const int64_t c = channels_of(x, "instance_norm", {&running_mean, &running_var, &weight, &bias}), n = x.shape()[0];
  if (running_mean.defined() != running_var.defined())
    throw ValueError("instance_norm: running_mean and running_var go together (both or neither)");
  if (!use_input_stats) {
    if (!running_mean.defined())
      throw ValueError("instance_norm: without the input's statistics it needs running_mean and running_var");
    return batch_norm(x, running_mean, running_var, weight, bias, false, momentum, eps);
  }
  const int64_t positions = n * c == 0 ? 0 : x.numel() / (n * c);
  if (positions <= 1)
    throw ValueError("instance_norm: expected more than 1 position per channel when using the input's statistics, got "
                     "input " + to_string(x.shape()));
  if (running_mean.defined()) {
    // As PyTorch: the running statistics move towards the batch's mean of the instances' mean
    // and unbiased variance.
    NoGradGuard no_grad;
    const Tensor rows = reshape(x, {n, c, positions});
    const Tensor m = mean(rows, {2}, true);
    const Tensor var = mean((rows - m) * (rows - m), {2}) * float(double(positions) / double(positions - 1));
    Tensor rm = running_mean, rv = running_var;
    rm.mul_(1.f - momentum).add_(mean(m.squeeze(2), {0}), momentum);
    rv.mul_(1.f - momentum).add_(mean(var, {0}), momentum);
  }
  return group_norm(x, c, weight, bias, eps);
}

Tensor rms_norm(const Tensor& x, const Tensor& weight, float eps) {
  if (x.dim() < 1) throw ShapeError("rms_norm: expected input [..., D], got a scalar");
  const int64_t d = x.shape().back();
  if (weight.defined() && weight.shape() != Shape{d})
    throw ShapeError("rms_norm: weight must have shape [" + std::to_string(d) + "] (the input's last dim, " +
                     to_string(x.shape()) + "), got " + to_string(weight.shape()));
  if (!(eps > 0.f)) throw ValueError("rms_norm: eps must be positive, got " + std::to_string(eps));
  check_same_device("rms_norm", {x, weight});
  const Tensor y = x * pow(mean(x * x, {x.dim() - 1}, true) + eps, -0.5f);
  return weight.defined() ? y * weight : y;
}

Tensor causal_softmax(const Tensor& scores) {
  if (scores.dim() < 2 || scores.shape()[scores.dim() - 1] != scores.shape()[scores.dim() - 2])
    throw ShapeError("causal_softmax: expected square scores [..., T, T] (queries by keys), got " +
                     to_string(scores.shape()));
  const int64_t t = scores.shape().back(), rows = t == 0 ? 0 : scores.numel() / t;
  const Tensor x = contiguous_data(scores);
  Tensor out = empty(scores.shape(), scores.device());
  backend(scores.device()).causal_softmax(out.data(), x.data(), rows, t);
  if (needs_grad(scores))
    record(out, "causal_softmax", {scores}, [y = Saved(out), rows, t](const Tensor& g) -> Grads {
      // softmax's derivative y·(g - Σ g·y): the masked keys have y = 0, so their gradient is 0.
      const Tensor gc = contiguous_data(g), yv = y.get();
      Tensor gi = empty(yv.shape(), g.device());
      backend(g.device()).softmax_backward(gi.data(), gc.data(), yv.data(), rows, t, 1, false);
      return {gi};
    });
  return out;
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape(input, target, "mse_loss");
  const Tensor d = input - target;
  return reduce_loss(d * d, reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape(input, target, "l1_loss");
  return reduce_loss(abs(input - target), reduction);
}

namespace {
// Huber's rows: ½·d² where |d| < delta, delta·(|d| - ½·delta) beyond (d = input - target).
// `where` passes each element the gradient of its own branch only.
Tensor huber_rows(const Tensor& input, const Tensor& target, float delta) {
  const Tensor d = abs(input - target);
  return where(lt(d, scalar(delta, d.device())), 0.5f * (d * d), delta * (d - 0.5f * delta));
}
}  // namespace

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, float beta) {
  check_same_shape(input, target, "smooth_l1_loss");
  if (!(beta >= 0.f)) throw ValueError("smooth_l1_loss: beta must be at least 0, got " + std::to_string(beta));
  // Huber's loss over beta; beta 0 is L1 (as PyTorch, which would otherwise divide by 0).
  if (beta == 0.f) return l1_loss(input, target, reduction);
  return reduce_loss(huber_rows(input, target, beta) / beta, reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, float delta) {
  check_same_shape(input, target, "huber_loss");
  if (!(delta > 0.f)) throw ValueError("huber_loss: delta must be positive, got " + std::to_string(delta));
  return reduce_loss(huber_rows(input, target, delta), reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  check_same_shape(input, target, "kl_div");
  if (log_target) return reduce_loss(exp(target) * (target - input), reduction);
  // target·(log target - input), 0 where the target is 0 (PyTorch's xlogy): the log reads 1
  // there, so that neither the value nor a gradient is NaN.
  const Tensor safe = where(gt(target, scalar(0.f, target.device())), target, scalar(1.f, target.device()));
  return reduce_loss(target * (log(safe) - input), reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, Reduction reduction,
                                        float pos_weight) {
  check_same_shape(logits, target, "binary_cross_entropy_with_logits");
  if (!(pos_weight >= 0.f))
    throw ValueError("binary_cross_entropy_with_logits: pos_weight must be at least 0, got " + std::to_string(pos_weight));
  // -(p·y·log σ(x) + (1 - y)·log(1 - σ(x))) with p = pos_weight: softplus(x)·(1 + (p - 1)·y) - p·x·y.
  Tensor loss;
  {
    // softplus(x) as max(x, 0) + log(1 + exp(-|x|)): stable for any x.
    NoGradGuard no_grad;
    const Tensor sp = relu(logits) + softplus(-abs(logits));
    loss = pos_weight == 1.f ? sp - logits * target : sp * (1.f + (pos_weight - 1.f) * target) - pos_weight * (logits * target);
  }
  if (needs_grad(logits, target))
    record(loss, "binary_cross_entropy_with_logits", {logits, target},
           [x = Saved(logits), y = Saved(target), pos_weight](const Tensor& g) -> Grads {
             const Tensor xv = x.get(), yv = y.get();
             if (pos_weight == 1.f) return {g * (sigmoid(xv) - yv), -g * xv};
             // d/dx: σ(x)·(1 + (p - 1)·y) - p·y;  d/dy: (p - 1)·softplus(x) - p·x.
             return {g * (sigmoid(xv) * (1.f + (pos_weight - 1.f) * yv) - pos_weight * yv),
                     g * ((pos_weight - 1.f) * softplus(xv) - pos_weight * xv)};
           });
  return reduce_loss(loss, reduction);
}

}  // namespace plexus
