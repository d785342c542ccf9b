#pragma once
// Internal helpers shared by the op files: run a backend kernel on fresh outputs without
// recording history (the calling op records its own node).
#include "ops/backend.h"
#include "tensor/tensor.h"

namespace plexus {

// Broadcast view of `a` to `shape` (stride 0 on broadcast dims); no autograd.
Tensor broadcast_view(const Tensor& a, const Shape& shape, const char* op);

Tensor run_unary(UnaryOp op, const Tensor& a, float p0 = 0, float p1 = 0);
Tensor run_binary(BinaryOp op, const Tensor& a, const Tensor& b, const char* name, float p0 = 0, float p1 = 0);

// Throws a DeviceError naming `op` unless all defined tensors share one device.
void check_same_device(const char* op, std::initializer_list<Tensor> ts);

// Contiguous tensor with the same data (the input itself when already contiguous); no autograd.
// A copy it makes is counted in hidden_copies().
Tensor contiguous_data(const Tensor& a);
// Counts a copy the caller did not ask for (ops/ops.h: hidden_copies).
void note_hidden_copy(int64_t elements);

// Copies `src` into the region of `dst` that starts at `start` along `dim` with `step`
// and has src's shape (the adjoint of slice); no autograd.
void copy_into_slice(const Tensor& dst, int64_t dim, int64_t start, int64_t step, const Tensor& src);

// layer_norm's checks of x [..., D], weight and bias ([D] or undefined), eps and the devices.
void check_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps);
// Records layer_norm's backward on y = layer_norm(x, weight, bias), given x's and weight's
// contiguous data (xc, w) and the rows' mean and invstd the forward kernel wrote.
void record_layer_norm(Tensor& y, const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& xc,
                       const Tensor& w, const Tensor& mean, const Tensor& invstd);

}  // namespace plexus
