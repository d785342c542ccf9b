#include "nn/sequence.h"

#include <limits>

#include "autograd/grad_mode.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus::nn {

SequencePoolMode sequence_pool_mode(const std::string& name) {
  if (name == "mean") return SequencePoolMode::Mean;
  if (name == "max") return SequencePoolMode::Max;
  if (name == "last") return SequencePoolMode::Last;
  if (name == "first") return SequencePoolMode::First;
  throw ValueError("unknown sequence pooling '" + name + "' (known: mean, max, last, first)");
}

Tensor functional::sequence_lengths(const Tensor& ids) {
  if (ids.dim() != 2) throw ShapeError("sequence_lengths: expected token ids [N, T], got " + to_string(ids.shape()));
  NoGradGuard no_grad;
  return sum(ne(ids, zeros({}, ids.device())), {1});
}

Tensor functional::sequence_pool(const Tensor& x, const Tensor& lengths, SequencePoolMode mode) {
  if (x.dim() != 3 || x.shape()[1] < 1)
    throw ShapeError("sequence_pool: expected x [N, T, E] with T >= 1, got " + to_string(x.shape()));
  const int64_t n = x.shape()[0], t = x.shape()[1], e = x.shape()[2];
  if (lengths.defined() && lengths.shape() != Shape{n})
    throw ShapeError("sequence_pool: expected lengths [" + std::to_string(n) + "] for x " + to_string(x.shape()) +
                     ", got " + to_string(lengths.shape()));
  if (mode == SequencePoolMode::First) return squeeze(narrow(x, 1, 0, 1), 1);
  if (!lengths.defined()) {
    if (mode == SequencePoolMode::Mean) return mean(x, {1});
    if (mode == SequencePoolMode::Max) return max(x, {1});
    return squeeze(narrow(x, 1, t - 1, 1), 1);
  }
  // Which positions each example has, [N, T, 1], and whether it has any, [N, 1]: masks, no gradient.
  Tensor len, valid, nonempty;
  {
    NoGradGuard no_grad;
    len = clamp(lengths, 0.f, float(t));
    valid = unsqueeze(lt(arange(t).to(x.device()).reshape({1, t}), unsqueeze(len, 1)), 2);
    nonempty = unsqueeze(gt(len, zeros({}, x.device())), 1);
  }
  const Tensor zero = zeros({}, x.device());
  switch (mode) {
    case SequencePoolMode::Mean:
      return sum(where(valid, x, zero), {1}) / unsqueeze(clamp(len, 1.f, std::nullopt), 1);
    case SequencePoolMode::Max: {
      const Tensor masked = where(valid, x, full({}, -std::numeric_limits<float>::infinity(), x.device()));
      return where(nonempty, max(masked, {1}), zero);
    }
    default: {  // Last: position length - 1, gathered per feature
      Tensor index;
      {
        NoGradGuard no_grad;
        index = contiguous(expand(clamp(len - 1.f, 0.f, std::nullopt).reshape({n, 1, 1}), {n, 1, e}));
      }
      return where(nonempty, squeeze(gather(x, 1, index), 1), zero);
    }
  }
}

std::string SequencePool::extra_repr() const {
  static const char* names[] = {"mean", "max", "last", "first"};
  return std::string("mode=") + names[int(mode_)];
}

}  // namespace plexus::nn
