#include "tensor/shape.h"

#include <algorithm>
#include <sstream>

#include "util/error.h"

namespace plexus {

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides st(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return st;
}

std::string to_string(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ShapeError(std::string(op) + ": shapes " + to_string(a) + " and " + to_string(b) +
                       " cannot be broadcast (dim " + std::to_string(i) + ": " + std::to_string(da) +
                       " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t lo = -std::max<int64_t>(ndim, 1), hi = std::max<int64_t>(ndim, 1) - 1;
  if (dim < lo || dim > hi)
    throw IndexError(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for a " +
                     std::to_string(ndim) + "-d tensor (expected " + std::to_string(lo) + ".." +
                     std::to_string(hi) + ")");
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

std::vector<int64_t> reduction_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  if (ndim == 0) {  // a scalar has nothing to reduce; dim 0 / -1 are accepted as in PyTorch
    for (int64_t d : dims) wrap_dim(d, ndim, op);
    return out;
  }
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) out.push_back(wrap_dim(d, ndim, op));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw ValueError(std::string(op) + ": a dim appears more than once");
  return out;
}

}  // namespace plexus
