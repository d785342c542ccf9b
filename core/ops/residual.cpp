#include "ops/residual.h"

#include <mutex>

#include "autograd/node.h"
#include "ops/cpu/residual.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus {

ResidualOutputs residual_dropout(const Tensor& a, const Tensor& b, float p, bool training, Generator* gen,
                                 const std::optional<ResidualNorm>& norm) {
  if (!(p >= 0.f && p <= 1.f)) throw ValueError("residual_dropout: p must be in [0, 1], got " + std::to_string(p));
  if (a.shape() != b.shape())
    throw ShapeError("residual_dropout: a " + to_string(a.shape()) + " and b " + to_string(b.shape()) +
                     " must have one shape");
  check_same_device("residual_dropout", {a, b});
  if (norm) check_layer_norm(a, norm->weight, norm->bias, norm->eps);
  if (!a.device().is_cpu()) {
    Tensor sum = a + dropout(b, p, training, gen);
    return {sum, norm ? layer_norm(sum, norm->weight, norm->bias, norm->eps) : Tensor()};
  }
  uint64_t key = 0;
  if (training && p > 0.f) {
    Generator& g = gen ? *gen : default_generator();
    std::lock_guard lock(g.mutex());
    key = g.next_u64();
  }
  const cpu::DropoutDraw draw = cpu::dropout_draw(p, training, key);
  const int64_t d = a.dim() == 0 ? 1 : a.shape().back(), rows = d == 0 ? 0 : a.numel() / d;
  const Tensor ac = contiguous_data(a), bc = contiguous_data(b);
  const Tensor w = norm && norm->weight.defined() ? contiguous_data(norm->weight) : Tensor();
  const Tensor bias = norm && norm->bias.defined() ? contiguous_data(norm->bias) : Tensor();
  ResidualOutputs out{empty(a.shape(), a.device()), Tensor()};
  Tensor mean, invstd;
  if (norm) {
    out.normed = empty(a.shape(), a.device());
    mean = empty({rows}, a.device());
    invstd = empty({rows}, a.device());
  }
  cpu::residual_dropout(out.sum.data(), norm ? out.normed.data() : nullptr, norm ? mean.data() : nullptr,
                        norm ? invstd.data() : nullptr, ac.data(), bc.data(), w.defined() ? w.data() : nullptr,
                        bias.defined() ? bias.data() : nullptr, rows, d, norm ? norm->eps : 0.f, draw);
  if (needs_grad(a, b))
    record(out.sum, "residual_dropout", {a, b}, [draw, rows, d](const Tensor& g) -> Grads {
      if (draw.keeps_all()) return {g, g};
      const Tensor gc = contiguous_data(g);
      Tensor gb = empty(gc.shape(), gc.device());
      cpu::dropout_backward(gb.data(), gc.data(), rows, d, draw);
      return {g, gb};
    });
  if (norm && needs_grad(out.sum, norm->weight, norm->bias))
    record_layer_norm(out.normed, out.sum, norm->weight, norm->bias, out.sum, w, mean, invstd);
  return out;
}

}  // namespace plexus
