// Views (reshape, transpose, permute, squeeze, expand, narrow, ...) share storage with
// their input; their derivatives are the inverse view. Concat, stack and the index ops copy.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "autograd/node.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus {
namespace {

// Strides that let `new_shape` view memory laid out as (old_shape, old_strides), if any
// (the chunk-matching rule PyTorch uses for view()).
std::optional<Strides> view_strides(const Shape& old_shape, const Strides& old_strides, const Shape& new_shape) {
  if (numel(old_shape) <= 1 || old_shape.empty()) return contiguous_strides(new_shape);
  Strides out(new_shape.size());
  int64_t view_d = int64_t(new_shape.size()) - 1;
  int64_t chunk_base = old_strides.back(), tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(old_shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    if (d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base = old_strides[d - 1];
        tensor_numel = view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

// Resolves one -1 and checks the element count.
Shape infer_shape(const Shape& shape, int64_t n, const char* op) {
  Shape out = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) throw ShapeError(std::string(op) + ": only one dim can be -1 in " + to_string(shape));
      infer = int64_t(i);
    } else if (out[i] < 0) {
      throw ShapeError(std::string(op) + ": invalid size in " + to_string(shape));
    } else {
      known *= out[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || n % known != 0)
      throw ShapeError(std::string(op) + ": cannot infer -1 in " + to_string(shape) + " for " + std::to_string(n) +
                       " elements");
    out[infer] = n / known;
  } else if (known != n) {
    throw ShapeError(std::string(op) + ": shape " + to_string(shape) + " has " + std::to_string(known) +
                     " elements, the input has " + std::to_string(n));
  }
  return out;
}

// A view that records the given backward.
Tensor view_op(const Tensor& a, const char* name, Shape shape, Strides strides, int64_t offset,
               std::function<Grads(const Tensor&)> backward) {
  Tensor out = make_view(a, std::move(shape), std::move(strides), offset);
  if (needs_grad(a)) record(out, name, {a}, std::move(backward));
  return out;
}

Tensor reshape_view(const Tensor& a, const Shape& s, const Strides& st, const char* name) {
  return view_op(a, name, s, st, a.offset(), [in = a.shape()](const Tensor& g) -> Grads { return {g.reshape(in)}; });
}

// Checks that index values are whole numbers in [0, limit).
void check_indices(const Tensor& index, int64_t limit, const char* op) {
  if (!index.device().is_cpu()) return;  // device backends validate on their side
  const Tensor c = contiguous_data(index);
  const float* p = c.data();
  // Whole: by a conversion to int64_t (defined once in range) rather than std::floor, a call
  // to libm per element on baseline x86-64; a recurrent layer checks tens of thousands a step.
  const float top = float(limit);
  const int64_t n = c.numel();  // an out-of-line call, not hoisted by the compiler
  for (int64_t i = 0; i < n; ++i)
    if (!(p[i] >= 0 && p[i] < top) || float(int64_t(p[i])) != p[i])
      throw IndexError(std::string(op) + ": index " + std::to_string(p[i]) + " at position " + std::to_string(i) +
                       " is not a whole number in [0, " + std::to_string(limit) + ")");
}

}  // namespace

void copy_into_slice(const Tensor& dst, int64_t dim, int64_t start, int64_t step, const Tensor& src) {
  Strides st = dst.strides();
  st[dim] *= step;
  const Tensor region = make_view(dst, src.shape(), st, dst.offset() + start * dst.strides()[dim]);
  backend(dst.device()).unary(UnaryOp::Copy, region, src, 0, 0);
}

Tensor reshape(const Tensor& a, const Shape& shape) {
  const Shape s = infer_shape(shape, a.numel(), "reshape");
  if (auto st = view_strides(a.shape(), a.strides(), s)) return reshape_view(a, s, *st, "reshape");
  return reshape_view(contiguous(a), s, contiguous_strides(s), "reshape");
}

Tensor view(const Tensor& a, const Shape& shape) {
  const Shape s = infer_shape(shape, a.numel(), "view");
  auto st = view_strides(a.shape(), a.strides(), s);
  if (!st)
    throw ShapeError("view: shape " + to_string(s) + " is incompatible with the input's strides " +
                     to_string(a.strides()) + " (shape " + to_string(a.shape()) + "); use reshape() to copy");
  return reshape_view(a, s, *st, "view");
}

Tensor transpose(const Tensor& a, int64_t d0, int64_t d1) {
  d0 = wrap_dim(d0, a.dim(), "transpose");
  d1 = wrap_dim(d1, a.dim(), "transpose");
  if (a.dim() == 0) return a;
  Shape s = a.shape();
  Strides st = a.strides();
  std::swap(s[d0], s[d1]);
  std::swap(st[d0], st[d1]);
  return view_op(a, "transpose", s, st, a.offset(), [d0, d1](const Tensor& g) -> Grads { return {g.transpose(d0, d1)}; });
}

Tensor permute(const Tensor& a, const std::vector<int64_t>& dims) {
  if (int64_t(dims.size()) != a.dim())
    throw ShapeError("permute: expected " + std::to_string(a.dim()) + " dims, got " + std::to_string(dims.size()));
  std::vector<int64_t> p(dims.size()), inverse(dims.size());
  std::vector<bool> seen(dims.size(), false);
  Shape s(dims.size());
  Strides st(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    p[i] = wrap_dim(dims[i], a.dim(), "permute");
    if (seen[p[i]]) throw ValueError("permute: dim " + std::to_string(p[i]) + " repeats");
    seen[p[i]] = true;
    inverse[p[i]] = int64_t(i);
    s[i] = a.shape()[p[i]];
    st[i] = a.strides()[p[i]];
  }
  return view_op(a, "permute", s, st, a.offset(), [inverse](const Tensor& g) -> Grads { return {g.permute(inverse)}; });
}

Tensor flatten(const Tensor& a, int64_t start, int64_t end) {
  if (a.dim() == 0) return reshape(a, {1});
  start = wrap_dim(start, a.dim(), "flatten");
  end = wrap_dim(end, a.dim(), "flatten");
  if (start > end) throw ValueError("flatten: start dim comes after end dim");
  Shape s(a.shape().begin(), a.shape().begin() + start);
  s.push_back(std::accumulate(a.shape().begin() + start, a.shape().begin() + end + 1, int64_t(1), std::multiplies<>()));
  s.insert(s.end(), a.shape().begin() + end + 1, a.shape().end());
  return reshape(a, s);
}

Tensor squeeze(const Tensor& a) {
  Shape s;
  Strides st;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (a.shape()[d] != 1) {
      s.push_back(a.shape()[d]);
      st.push_back(a.strides()[d]);
    }
  return reshape_view(a, s, st, "squeeze");
}

Tensor squeeze(const Tensor& a, int64_t dim) {
  if (a.dim() == 0) return a;
  dim = wrap_dim(dim, a.dim(), "squeeze");
  if (a.shape()[dim] != 1) return a;
  Shape s = a.shape();
  Strides st = a.strides();
  s.erase(s.begin() + dim);
  st.erase(st.begin() + dim);
  return reshape_view(a, s, st, "squeeze");
}

Tensor unsqueeze(const Tensor& a, int64_t dim) {
  dim = wrap_dim(dim, a.dim() + 1, "unsqueeze");
  Shape s = a.shape();
  Strides st = a.strides();
  const int64_t stride = dim < a.dim() ? s[dim] * st[dim] : 1;
  s.insert(s.begin() + dim, 1);
  st.insert(st.begin() + dim, stride);
  return reshape_view(a, s, st, "unsqueeze");
}

Tensor expand(const Tensor& a, const Shape& shape) {
  if (int64_t(shape.size()) < a.dim())
    throw ShapeError("expand: target " + to_string(shape) + " has fewer dims than the input " + to_string(a.shape()));
  Shape s = shape;
  const int64_t lead = int64_t(shape.size()) - a.dim();
  for (int64_t d = 0; d < int64_t(s.size()); ++d)
    if (s[d] == -1) {
      if (d < lead) throw ShapeError("expand: -1 is not allowed for a new leading dim in " + to_string(shape));
      s[d] = a.shape()[d - lead];
    }
  const Tensor v = broadcast_view(a, s, "expand");
  if (v.is_same(a)) return a;
  // The engine sums the output-shaped gradient back to the input's shape.
  return view_op(a, "expand", v.shape(), v.strides(), v.offset(), [](const Tensor& g) -> Grads { return {g}; });
}

Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step) {
  dim = wrap_dim(dim, a.dim(), "slice");
  if (step <= 0) throw ValueError("slice: step must be positive, got " + std::to_string(step));
  const int64_t n = a.shape()[dim];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape s = a.shape();
  Strides st = a.strides();
  s[dim] = (end - start + step - 1) / step;
  st[dim] *= step;
  return view_op(a, "slice", s, st, a.offset() + start * a.strides()[dim],
                 [in = a.shape(), dim, start, step](const Tensor& g) -> Grads {
                   Tensor gi = zeros(in, g.device());
                   copy_into_slice(gi, dim, start, step, g);
                   return {gi};
                 });
}

Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) {
  const int64_t d = wrap_dim(dim, a.dim(), "narrow");
  if (start < 0) start += a.shape()[d];
  if (start < 0 || length < 0 || start + length > a.shape()[d])
    throw IndexError("narrow: [" + std::to_string(start) + ", " + std::to_string(start + length) +
                     ") is outside dim " + std::to_string(d) + " of size " + std::to_string(a.shape()[d]));
  return slice(a, d, start, start + length, 1);
}

std::vector<Tensor> split(const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim) {
  dim = wrap_dim(dim, a.dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw ValueError("split: sizes must not be negative, got " + std::to_string(s));
    total += s;
  }
  if (total != a.shape()[dim])
    throw ValueError("split: sizes sum to " + std::to_string(total) + ", but dim " + std::to_string(dim) + " has size " +
                     std::to_string(a.shape()[dim]));
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    parts.push_back(narrow(a, dim, start, s));
    start += s;
  }
  return parts;
}

std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  dim = wrap_dim(dim, a.dim(), "chunk");
  if (chunks < 1) throw ValueError("chunk: chunks must be positive, got " + std::to_string(chunks));
  const int64_t n = a.shape()[dim], size = std::max<int64_t>(1, (n + chunks - 1) / chunks);
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < n; start += size) sizes.push_back(std::min(size, n - start));
  return split(a, sizes, dim);
}

Tensor contiguous(const Tensor& a) {
  if (a.is_contiguous()) return a;
  Tensor out = contiguous_data(a);
  if (needs_grad(a)) record(out, "contiguous", {a}, [](const Tensor& g) -> Grads { return {g}; });
  return out;
}

Tensor concat(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) throw ValueError("concat: no tensors given");
  const Tensor& first = ts.front();
  dim = wrap_dim(dim, first.dim(), "concat");
  Shape s = first.shape();
  s[dim] = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    check_same_device("concat", {first, t});
    bool ok = t.dim() == first.dim();
    for (int64_t d = 0; ok && d < t.dim(); ++d) ok = d == dim || t.shape()[d] == first.shape()[d];
    if (!ok)
      throw ShapeError("concat: tensor " + std::to_string(i) + " has shape " + to_string(t.shape()) +
                       ", expected " + to_string(first.shape()) + " except along dim " + std::to_string(dim));
    s[dim] += t.shape()[dim];
  }
  Tensor out = empty(s, first.device());
  std::vector<int64_t> sizes;
  int64_t at = 0;
  for (const Tensor& t : ts) {
    copy_into_slice(out, dim, at, 1, t);
    at += t.shape()[dim];
    sizes.push_back(t.shape()[dim]);
  }
  bool any = false;
  for (const Tensor& t : ts) any = any || needs_grad(t);
  if (any)
    record(out, "concat", ts, [dim, sizes](const Tensor& g) -> Grads {
      Grads grads;
      int64_t at = 0;
      for (int64_t n : sizes) {
        grads.push_back(g.narrow(dim, at, n));
        at += n;
      }
      return grads;
    });
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) throw ValueError("stack: no tensors given");
  dim = wrap_dim(dim, ts.front().dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].shape() != ts.front().shape())
      throw ShapeError("stack: tensor " + std::to_string(i) + " has shape " + to_string(ts[i].shape()) +
                       ", expected " + to_string(ts.front().shape()));
    parts.push_back(unsqueeze(ts[i], dim));
  }
  return concat(parts, dim);
}

Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index) {
  dim = wrap_dim(dim, a.dim(), "index_select");
  if (index.dim() > 1) throw ShapeError("index_select: index must be 1-d, got shape " + to_string(index.shape()));
  check_same_device("index_select", {a, index});
  const int64_t n = a.dim() ? a.shape()[dim] : 1;
  check_indices(index, n, "index_select");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= a.shape()[d];
  for (int64_t d = dim + 1; d < a.dim(); ++d) inner *= a.shape()[d];
  Shape s = a.shape();
  if (a.dim()) s[dim] = index.numel();
  Tensor out = empty(s, a.device());
  const Tensor idx = contiguous_data(index), src = contiguous_data(a);
  backend(a.device()).index_select(out.data(), src.data(), idx.data(), outer, n, index.numel(), inner);
  if (needs_grad(a))
    record(out, "index_select", {a}, [in = a.shape(), idx, outer, n, inner](const Tensor& g) -> Grads {
      Tensor gi = zeros(in, g.device());
      const Tensor gc = contiguous_data(g);
      backend(g.device()).index_add(gi.data(), gc.data(), idx.data(), outer, n, idx.numel(), inner);
      return {gi};
    });
  return out;
}

Tensor gather(const Tensor& a, int64_t dim, const Tensor& index) {
  dim = wrap_dim(dim, a.dim(), "gather");
  check_same_device("gather", {a, index});
  bool ok = index.dim() == a.dim();
  for (int64_t d = 0; ok && d < a.dim(); ++d) ok = d == dim || index.shape()[d] <= a.shape()[d];
  if (!ok)
    throw ShapeError("gather: index shape " + to_string(index.shape()) + " does not fit input shape " +
                     to_string(a.shape()) + " (same rank, no larger outside dim " + std::to_string(dim) + ")");
  check_indices(index, a.dim() ? a.shape()[dim] : 1, "gather");
  Tensor out = empty(index.shape(), a.device());
  const Tensor idx = contiguous_data(index), src = contiguous_data(a);
  backend(a.device()).gather(out.data(), src.data(), a.shape(), idx.data(), idx.shape(), dim);
  if (needs_grad(a))
    record(out, "gather", {a}, [in = a.shape(), idx, dim](const Tensor& g) -> Grads {
      Tensor gi = zeros(in, g.device());
      const Tensor gc = contiguous_data(g);
      backend(g.device()).scatter_add(gi.data(), in, gc.data(), idx.data(), idx.shape(), dim);
      return {gi};
    });
  return out;
}

}  // namespace plexus
