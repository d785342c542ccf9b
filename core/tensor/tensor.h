#pragma once
// Tensor: a cheap, reference-counted handle to an N-d float32 array (shape, strides, offset
// into shared storage) plus its autograd identity. Views share storage; ops allocate.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "tensor/device.h"
#include "tensor/generator.h"
#include "tensor/shape.h"

namespace plexus {

struct GradNode;  // autograd/node.h

// A block of device memory. `version` counts in-place writes so that backward can detect
// a tensor saved for it being modified afterwards.
struct Storage {
  Storage(int64_t numel, Device device, bool pinned = false);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  float* data = nullptr;
  int64_t numel = 0;
  Device device;
  bool pinned = false;  // page-locked host memory (CPU only)
  uint64_t version = 0;
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Strides strides;
  int64_t offset = 0;
  // autograd
  bool requires_grad = false;
  std::shared_ptr<GradNode> grad_fn;     // null for leaves
  std::shared_ptr<TensorImpl> grad;      // accumulated gradient of a leaf
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl().shape; }
  const Strides& strides() const { return impl().strides; }
  int64_t offset() const { return impl().offset; }
  int64_t dim() const { return int64_t(impl().shape.size()); }
  int64_t size(int64_t d) const;
  int64_t numel() const { return plexus::numel(impl().shape); }
  Device device() const { return impl().storage->device; }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return impl().storage; }
  float* data() const { return impl().storage->data + impl().offset; }  // first element
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  TensorImpl* unsafe_impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // Element access (slow paths meant for tests, printing and small results); a device tensor
  // is copied to the host first, which waits for the device.
  float item() const;
  float at(const std::vector<int64_t>& index) const;
  std::vector<float> to_vector() const;  // row-major copy

  // Autograd.
  bool requires_grad() const { return impl().requires_grad; }
  Tensor& requires_grad_(bool on = true);
  bool is_leaf() const { return impl().grad_fn == nullptr; }
  const std::shared_ptr<GradNode>& grad_fn() const { return impl().grad_fn; }
  Tensor grad() const { return Tensor(impl().grad); }
  void set_grad(const Tensor& g) const { impl().grad = g.impl_; }
  // Reverse-mode from this tensor. A non-scalar needs `grad_output` of the same shape.
  // The graph is freed afterwards unless retain_graph is set.
  void backward(const Tensor& grad_output = Tensor(), bool retain_graph = false) const;
  Tensor detach() const;  // same storage, no history

  // Views (no copy) and copies; the free functions in ops/ops.h document them.
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const { return transpose(0, 1); }
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t d) const;
  Tensor unsqueeze(int64_t d) const;
  Tensor expand(const Shape& shape) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor contiguous() const;
  Tensor clone() const;
  // A copy on `device` (this tensor itself when it is already there). Host to device copies
  // are queued on the device's stream and return at once when the source is pinned
  // (empty_pinned); device to host copies wait for the device.
  Tensor to(Device device) const;

  // Reductions (empty dims = all).
  Tensor sum(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor mean(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;

  // In-place updates for optimizers and initialisation; they record no history and refuse
  // a tensor that requires grad while grad mode is on.
  Tensor& fill_(float value);
  Tensor& zero_() { return fill_(0.f); }
  Tensor& copy_(const Tensor& src);                  // src broadcast to this shape, from any device
  Tensor& add_(const Tensor& other, float alpha = 1.f);  // this += alpha * other
  Tensor& mul_(float value);

  std::string str() const;  // readable printing, PyTorch style

 private:
  TensorImpl& impl() const;
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Factories. `gen` defaults to the seeded default generator.
Tensor empty(const Shape& shape, Device device = Device::cpu());
Tensor zeros(const Shape& shape, Device device = Device::cpu());
Tensor ones(const Shape& shape, Device device = Device::cpu());
Tensor full(const Shape& shape, float value, Device device = Device::cpu());
Tensor scalar(float value, Device device = Device::cpu());
Tensor arange(float start, float end, float step = 1.f);
Tensor arange(int64_t n);
Tensor rand(const Shape& shape, Generator* gen = nullptr);   // U[0, 1)
Tensor randn(const Shape& shape, Generator* gen = nullptr);  // N(0, 1)
Tensor uniform(const Shape& shape, float lo, float hi, Generator* gen = nullptr);
// A CPU tensor in page-locked memory when a CUDA device is present (ordinary memory
// otherwise), so copies to the device are asynchronous. The data loader fills these.
Tensor empty_pinned(const Shape& shape);
Tensor from_buffer(const float* data, const Shape& shape);     // copies
Tensor from_vector(const std::vector<float>& values, const Shape& shape);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);

// A view of `base`'s storage with the given geometry (no checks beyond bounds).
Tensor make_view(const Tensor& base, Shape shape, Strides strides, int64_t offset);

}  // namespace plexus
