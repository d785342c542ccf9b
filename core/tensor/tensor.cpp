#include "tensor/tensor.h"

#include <cmath>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "autograd/grad_mode.h"
#include "cuda/cuda.h"
#include "ops/backend.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "tensor/allocator.h"
#include "util/error.h"
#include "util/out_of_memory.h"

namespace plexus {

Storage::Storage(int64_t n, Device dev, bool pin) : numel(n), device(dev), pinned(pin) {
  Allocator& a = pinned ? pinned_allocator() : allocator_for(dev);
  data = static_cast<float*>(a.allocate(size_t(n) * sizeof(float)));
}

Storage::~Storage() {
  Allocator& a = pinned ? pinned_allocator() : allocator_for(device);
  a.deallocate(data, size_t(numel) * sizeof(float));
}

TensorImpl& Tensor::impl() const {
  if (!impl_) throw ValueError("use of an undefined tensor");
  return *impl_;
}

int64_t Tensor::size(int64_t d) const { return shape()[wrap_dim(d, dim(), "size")]; }

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (shape()[d] == 1) continue;
    if (strides()[d] != expected) return false;
    expected *= shape()[d];
  }
  return true;
}

namespace {
// The tensor itself on the CPU, or a host copy of a device tensor (waits for the device).
Tensor on_host(const Tensor& t) { return t.device().is_cpu() ? t : t.to(Device::cpu()); }

// In-place writes bypass autograd, so they must not touch a tensor that is being tracked.
void check_inplace(const Tensor& t, const char* op) {
  if (GradMode::enabled() && t.requires_grad())
    throw AutogradError(std::string(op) +
                        ": in-place update of a tensor that requires grad; wrap it in NoGradGuard");
}
}  // namespace

float Tensor::item() const {
  if (numel() != 1)
    throw ShapeError("item(): expected a tensor with one element, got shape " + to_string(shape()));
  return *on_host(*this).data();
}

float Tensor::at(const std::vector<int64_t>& index) const {
  if (int64_t(index.size()) != dim())
    throw IndexError("at(): expected " + std::to_string(dim()) + " indices, got " + std::to_string(index.size()));
  const Tensor h = on_host(*this);
  int64_t off = 0;
  for (int64_t d = 0; d < dim(); ++d) {
    if (index[d] < 0 || index[d] >= shape()[d])
      throw IndexError("at(): index " + std::to_string(index[d]) + " out of range for dim " + std::to_string(d) +
                       " of size " + std::to_string(shape()[d]));
    off += index[d] * h.strides()[d];
  }
  return h.data()[off];
}

std::vector<float> Tensor::to_vector() const {
  const Tensor c = contiguous_data(on_host(*this));
  return std::vector<float>(c.data(), c.data() + c.numel());
}

Tensor& Tensor::requires_grad_(bool on) {
  if (!is_leaf() && !on) throw AutogradError("requires_grad_(false) on a non-leaf tensor; use detach()");
  impl().requires_grad = on;
  return *this;
}

Tensor Tensor::detach() const {
  auto t = std::make_shared<TensorImpl>();
  t->storage = impl().storage;
  t->shape = impl().shape;
  t->strides = impl().strides;
  t->offset = impl().offset;
  return Tensor(std::move(t));
}

Tensor Tensor::reshape(const Shape& s) const { return plexus::reshape(*this, s); }
Tensor Tensor::view(const Shape& s) const { return plexus::view(*this, s); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return plexus::transpose(*this, d0, d1); }
Tensor Tensor::permute(const std::vector<int64_t>& dims) const { return plexus::permute(*this, dims); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return plexus::flatten(*this, s, e); }
Tensor Tensor::squeeze() const { return plexus::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return plexus::squeeze(*this, d); }
Tensor Tensor::unsqueeze(int64_t d) const { return plexus::unsqueeze(*this, d); }
Tensor Tensor::expand(const Shape& s) const { return plexus::expand(*this, s); }
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l) const { return plexus::narrow(*this, d, s, l); }
Tensor Tensor::contiguous() const { return plexus::contiguous(*this); }
Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim) const { return plexus::sum(*this, dims, keepdim); }
Tensor Tensor::mean(const std::vector<int64_t>& dims, bool keepdim) const { return plexus::mean(*this, dims, keepdim); }

Tensor Tensor::clone() const {
  Tensor out = empty(shape(), device());
  backend(device()).unary(UnaryOp::Copy, out, *this, 0, 0);
  return out;
}

Tensor Tensor::to(Device d) const {
  if (d == device()) return *this;
  cuda::check_available(d);
  const Tensor src = contiguous_data(*this);
  Tensor out = empty(shape(), d);
  if (d.is_cpu()) {
    cuda::copy_to_host(out.data(), src.data(), device().index, numel());
  } else if (device().is_cpu()) {
    cuda::copy_to_device(out.data(), d.index, src.data(), numel());
  } else {  // between two GPUs: through the host (rare; peer copies are not worth the setup)
    return to(Device::cpu()).to(d);
  }
  return out;
}

Tensor& Tensor::fill_(float value) {
  check_inplace(*this, "fill_");
  backend(device()).fill(*this, value);
  ++storage()->version;
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src) {
  check_inplace(*this, "copy_");
  const Tensor s = src.device() == device() ? src : src.to(device());  // across devices, as in PyTorch
  backend(device()).unary(UnaryOp::Copy, *this, broadcast_view(s, shape(), "copy_"), 0, 0);
  ++storage()->version;
  return *this;
}

Tensor& Tensor::add_(const Tensor& other, float alpha) {
  check_inplace(*this, "add_");
  check_same_device("add_", {*this, other});
  backend(device()).binary(BinaryOp::Add, *this, *this, broadcast_view(other, shape(), "add_"), alpha, 0);
  ++storage()->version;
  return *this;
}

Tensor& Tensor::mul_(float value) {
  check_inplace(*this, "mul_");
  backend(device()).unary(UnaryOp::MulScalar, *this, *this, value, 0);
  ++storage()->version;
  return *this;
}

// ---- printing ------------------------------------------------------------------------
namespace {
struct PrintFormat {
  int64_t edge;  // elements kept at each end of a long dim (0 = all)
  int width;     // every number padded to the widest
};

void print_rec(std::ostream& os, const Tensor& t, int64_t d, int64_t off, int indent, const PrintFormat& f) {
  const int64_t n = t.shape()[d];
  const bool summarize = f.edge > 0 && n > 2 * f.edge;
  const bool last = d + 1 == t.dim();
  const std::string sep = last ? ", " : ",\n" + std::string(indent + 1, ' ');
  os << '[';
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && i == f.edge) {
      os << "..." << sep;
      i = n - f.edge;
    }
    const int64_t o = off + i * t.strides()[d];
    if (last) os << std::setw(f.width) << t.data()[o];
    else print_rec(os, t, d + 1, o, indent + 1, f);
    if (i + 1 < n) os << sep;
  }
  os << ']';
}

int print_width(const Tensor& t) {
  int width = 1;
  for (float v : t.to_vector()) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(4) << v;
    width = std::max(width, int(s.str().size()));
  }
  return width;
}
}  // namespace

std::string Tensor::str() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  if (!t.device().is_cpu()) {
    const Tensor h = t.to(Device::cpu());
    os << h;
    return os << " on " << t.device().str();
  }
  const auto flags = os.flags();
  const auto prec = os.precision();
  os << std::fixed << std::setprecision(4) << "tensor(";
  if (t.dim() == 0) {
    os << t.item();
  } else {
    print_rec(os, t, 0, 0, 7, PrintFormat{t.numel() > 1000 ? 3 : 0, print_width(t)});
  }
  os << ", shape=" << to_string(t.shape());
  if (t.requires_grad()) os << (t.grad_fn() ? ", grad_fn" : ", requires_grad=true");
  os << ')';
  os.flags(flags);
  os.precision(prec);
  return os;
}

// ---- factories ---------------------------------------------------------------------------
namespace {
void check_shape(const Shape& shape, const char* what) {
  for (int64_t s : shape)
    if (s < 0) throw ShapeError(std::string(what) + ": negative size in shape " + to_string(shape));
}
}  // namespace

Tensor empty(const Shape& shape, Device device) {
  check_shape(shape, "empty");
  auto t = std::make_shared<TensorImpl>();
  try {
    t->storage = std::make_shared<Storage>(plexus::numel(shape), device);
  } catch (const OutOfMemoryError& e) {  // the allocator knows the bytes; the shape says what they were for
    throw_out_of_memory(e.bytes(), "for a tensor of shape " + to_string(shape) + " float32");
  }
  t->shape = shape;
  t->strides = contiguous_strides(shape);
  return Tensor(std::move(t));
}

Tensor full(const Shape& shape, float value, Device device) {
  Tensor t = empty(shape, device);
  backend(device).fill(t, value);
  return t;
}
Tensor zeros(const Shape& shape, Device device) { return full(shape, 0.f, device); }
Tensor ones(const Shape& shape, Device device) { return full(shape, 1.f, device); }
Tensor scalar(float value, Device device) { return full({}, value, device); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.device()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.device()); }

Tensor arange(float start, float end, float step) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    throw ValueError("arange: start, end and step must be finite and step nonzero");
  const int64_t n = std::max<int64_t>(0, int64_t(std::ceil((end - start) / step)));
  Tensor t = empty({n});
  for (int64_t i = 0; i < n; ++i) t.data()[i] = start + float(i) * step;
  return t;
}
Tensor arange(int64_t n) { return arange(0.f, float(n), 1.f); }

Tensor uniform(const Shape& shape, float lo, float hi, Generator* gen) {
  Tensor t = empty(shape);
  cpu_backend().random_uniform(t, lo, hi, gen ? *gen : default_generator());
  return t;
}
Tensor rand(const Shape& shape, Generator* gen) { return uniform(shape, 0.f, 1.f, gen); }

Tensor randn(const Shape& shape, Generator* gen) {
  Tensor t = empty(shape);
  cpu_backend().random_normal(t, 0.f, 1.f, gen ? *gen : default_generator());
  return t;
}

Tensor empty_pinned(const Shape& shape) {
  check_shape(shape, "empty_pinned");
  auto t = std::make_shared<TensorImpl>();
  t->storage = std::make_shared<Storage>(plexus::numel(shape), Device::cpu(), cuda::device_count() > 0);
  t->shape = shape;
  t->strides = contiguous_strides(shape);
  return Tensor(std::move(t));
}

Tensor from_buffer(const float* data, const Shape& shape) {
  Tensor t = empty(shape);
  if (t.numel()) std::memcpy(t.data(), data, size_t(t.numel()) * sizeof(float));
  return t;
}

Tensor from_vector(const std::vector<float>& values, const Shape& shape) {
  if (int64_t(values.size()) != plexus::numel(shape))
    throw ShapeError("from_vector: " + std::to_string(values.size()) + " values do not fill shape " +
                     to_string(shape) + " (" + std::to_string(plexus::numel(shape)) + " elements)");
  return from_buffer(values.data(), shape);
}

Tensor make_view(const Tensor& base, Shape shape, Strides strides, int64_t offset) {
  // Every reachable element must lie inside the storage.
  int64_t lo = offset, hi = offset;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) { lo = hi = offset; break; }
    const int64_t span = (shape[d] - 1) * strides[d];
    (span < 0 ? lo : hi) += span;
  }
  if (lo < 0 || (plexus::numel(shape) > 0 && hi >= base.storage()->numel))
    throw IndexError("view " + to_string(shape) + " at offset " + std::to_string(offset) +
                     " reaches outside its storage of " + std::to_string(base.storage()->numel) + " elements");
  auto t = std::make_shared<TensorImpl>();
  t->storage = base.storage();
  t->shape = std::move(shape);
  t->strides = std::move(strides);
  t->offset = offset;
  return Tensor(std::move(t));
}

}  // namespace plexus
