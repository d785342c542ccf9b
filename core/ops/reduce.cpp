// Reductions over any set of dims, and their derivatives: sum spreads the gradient back
// over the reduced dims; max/min route it to the elements that attained the extremum.
#include "autograd/node.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus {
namespace {

Shape keepdim_shape(const Shape& s, const std::vector<int64_t>& rd) {
  Shape k = s;
  for (int64_t d : rd) k[d] = 1;
  return k;
}

Shape dropped_shape(const Shape& s, const std::vector<int64_t>& rd) {
  Shape out;
  for (int64_t d = 0; d < int64_t(s.size()); ++d)
    if (std::find(rd.begin(), rd.end(), d) == rd.end()) out.push_back(s[d]);
  return out;
}

// Reduces `a` over `rd` into a fresh contiguous tensor of the keepdim shape.
Tensor reduce_keepdim(ReduceOp op, const Tensor& a, const std::vector<int64_t>& rd) {
  Tensor out = empty(keepdim_shape(a.shape(), rd), a.device());
  Strides st = out.strides();
  for (int64_t d : rd) st[d] = 0;
  backend(a.device()).reduce(op, make_view(out, a.shape(), st, 0), a);
  return out;
}

Tensor reshaped(const Tensor& t, const Shape& s) { return make_view(t, s, contiguous_strides(s), t.offset()); }

Tensor extremum(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim, bool is_max) {
  const char* name = is_max ? "max" : "min";
  const auto rd = reduction_dims(dims, a.dim(), name);
  for (int64_t d : rd)
    if (a.shape()[d] == 0)
      throw ValueError(std::string(name) + ": cannot reduce over dim " + std::to_string(d) + " of size 0");
  const Tensor k = reduce_keepdim(is_max ? ReduceOp::Max : ReduceOp::Min, a, rd);
  Tensor out = keepdim ? k : reshaped(k, dropped_shape(a.shape(), rd));
  if (needs_grad(a))
    record(out, name, {a}, [x = Saved(a), m = Saved(k), rd](const Tensor& g) -> Grads {
      const Tensor mask = eq(x.get(), m.get());  // ties share the gradient evenly
      const Tensor count = sum(mask, rd, true);
      return {g.reshape(m.get().shape()) * mask / count};
    });
  return out;
}

Tensor arg_extremum(const Tensor& a, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "argmax" : "argmin";
  if (a.numel() == 0) throw ValueError(std::string(name) + ": empty tensor");
  const Tensor c = contiguous_data(a);
  if (!dim) {
    Tensor out = empty(keepdim ? Shape(a.dim(), 1) : Shape{}, a.device());
    backend(a.device()).arg_reduce(is_max, out.data(), c.data(), 1, a.numel(), 1);
    return out;
  }
  const int64_t d = wrap_dim(*dim, a.dim(), name);
  if (a.dim() == 0) return zeros({}, a.device());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= a.shape()[i];
  for (int64_t i = d + 1; i < a.dim(); ++i) inner *= a.shape()[i];
  Tensor out = empty(keepdim ? keepdim_shape(a.shape(), {d}) : dropped_shape(a.shape(), {d}), a.device());
  backend(a.device()).arg_reduce(is_max, out.data(), c.data(), outer, a.shape()[d], inner);
  return out;
}

}  // namespace

Tensor sum(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  const auto rd = reduction_dims(dims, a.dim(), "sum");
  const Tensor k = reduce_keepdim(ReduceOp::Sum, a, rd);
  Tensor out = keepdim ? k : reshaped(k, dropped_shape(a.shape(), rd));
  if (needs_grad(a))
    record(out, "sum", {a}, [in_shape = a.shape(), k_shape = k.shape()](const Tensor& g) -> Grads {
      return {g.reshape(k_shape).expand(in_shape)};
    });
  return out;
}

Tensor mean(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  const auto rd = reduction_dims(dims, a.dim(), "mean");
  int64_t count = 1;
  for (int64_t d : rd) count *= a.shape()[d];
  if (count == 0) throw ValueError("mean: reducing over zero elements of shape " + to_string(a.shape()));
  return sum(a, dims, keepdim) * (1.f / float(count));
}

Tensor max(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) { return extremum(a, dims, keepdim, true); }
Tensor min(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) { return extremum(a, dims, keepdim, false); }
Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return arg_extremum(a, dim, keepdim, true); }
Tensor argmin(const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return arg_extremum(a, dim, keepdim, false); }

Tensor sum_to(const Tensor& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  const int64_t lead = a.dim() - int64_t(shape.size());
  if (lead < 0)
    throw ShapeError("sum_to: cannot reduce shape " + to_string(a.shape()) + " to the larger " + to_string(shape));
  std::vector<int64_t> rd;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (d < lead) {
      rd.push_back(d);
    } else if (shape[d - lead] != a.shape()[d]) {
      if (shape[d - lead] != 1)
        throw ShapeError("sum_to: shape " + to_string(shape) + " does not broadcast to " + to_string(a.shape()));
      rd.push_back(d);
    }
  }
  return sum(a, rd, true).reshape(shape);
}

}  // namespace plexus
