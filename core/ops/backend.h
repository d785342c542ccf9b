#pragma once
// The dispatch seam between the device-independent ops (forward + derivative, autograd)
// and the per-device kernels. The CPU backend lives in ops/cpu; a CUDA backend implements
// the same interface. Kernels write into `out` tensors the caller allocated; elementwise
// kernels accept any strides (inputs already broadcast to the output's shape).
#include "tensor/tensor.h"

namespace plexus {

enum class UnaryOp {
  Copy, Neg, Exp, Log, Sqrt, Abs, Sign, Relu, LeakyRelu /*p0 slope*/, Sigmoid, Tanh, Gelu,
  Softplus /*p0 beta, p1 threshold*/, Pow /*p0 exponent*/, Clamp /*p0 lo, p1 hi*/,
  AddScalar /*p0*/, MulScalar /*p0*/
};

enum class BinaryOp {
  Add /*a + p0*b*/, Sub, Mul, Div, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge,
  // Derivatives fused with the incoming gradient g (a = g, b = the op's input or output).
  ReluGrad /*b = x*/, LeakyReluGrad /*x, p0 slope*/, SigmoidGrad /*b = y*/, TanhGrad /*b = y*/,
  GeluGrad /*x*/, SoftplusGrad /*x, p0 beta, p1 threshold*/, PowGrad /*x, p0 exponent*/,
  ClampGrad /*x, p0 lo, p1 hi*/, AbsGrad /*x*/
};

enum class ReduceOp { Sum, Max, Min };

class Backend {
 public:
  virtual ~Backend() = default;

  virtual void fill(const Tensor& out, float value) = 0;
  virtual void unary(UnaryOp op, const Tensor& out, const Tensor& a, float p0, float p1) = 0;
  virtual void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, float p0,
                      float p1) = 0;
  virtual void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) = 0;
  // `out` is viewed with `in`'s shape and stride 0 on the reduced dims.
  virtual void reduce(ReduceOp op, const Tensor& out, const Tensor& in) = 0;
  // in: contiguous [outer, n, inner]; out: [outer, inner] indices of the max (min).
  virtual void arg_reduce(bool is_max, float* out, const float* in, int64_t outer, int64_t n,
                          int64_t inner) = 0;
  // Row-major GEMM: C = alpha * op(A) * op(B) + beta * C.
  virtual void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                    int64_t ldc) = 0;
  // Softmax over the middle dim of contiguous [outer, n, inner].
  virtual void softmax(float* out, const float* in, int64_t outer, int64_t n, int64_t inner,
                       bool log) = 0;
  virtual void softmax_backward(float* grad_in, const float* grad_out, const float* out,
                                int64_t outer, int64_t n, int64_t inner, bool log) = 0;
  // Fused log-softmax + NLL with label smoothing over contiguous logits [n, c].
  virtual void cross_entropy(float* loss, float* lse, const float* logits, const float* target,
                             int64_t n, int64_t c, float smoothing) = 0;
  virtual void cross_entropy_backward(float* grad_logits, const float* grad_loss,
                                      const float* logits, const float* lse, const float* target,
                                      int64_t n, int64_t c, float smoothing) = 0;
  // Gathers along `dim` of contiguous `in` viewed as [outer, in_n, inner] into
  // [outer, idx_n, inner]: out[o, j, i] = in[o, index[j], i] (index_select); scatter adds back.
  virtual void index_select(float* out, const float* in, const float* index, int64_t outer,
                            int64_t in_n, int64_t idx_n, int64_t inner) = 0;
  virtual void index_add(float* out, const float* src, const float* index, int64_t outer,
                         int64_t out_n, int64_t idx_n, int64_t inner) = 0;
  // gather/scatter_add with index of the same rank as `in`; all contiguous.
  virtual void gather(float* out, const float* in, const Shape& in_shape, const float* index,
                      const Shape& index_shape, int64_t dim) = 0;
  virtual void scatter_add(float* out, const Shape& out_shape, const float* src,
                           const float* index, const Shape& index_shape, int64_t dim) = 0;
  // im2col for one image [C, H, W] into columns [C*kh*kw, oh*ow]; col2im accumulates back.
  struct ConvGeometry {
    int64_t c, h, w, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw;
  };
  virtual void im2col(float* cols, const float* image, const ConvGeometry& g) = 0;
  virtual void col2im(float* image, const float* cols, const ConvGeometry& g) = 0;
  // Pooling over contiguous [planes, h, w] -> [planes, oh, ow] (dilation 1).
  virtual void max_pool2d(float* out, float* argmax, const float* in, int64_t planes,
                          const ConvGeometry& g) = 0;
  virtual void max_pool2d_backward(float* grad_in, const float* grad_out, const float* argmax,
                                   int64_t planes, const ConvGeometry& g) = 0;
  virtual void avg_pool2d(float* out, const float* in, int64_t planes, const ConvGeometry& g,
                          bool count_include_pad) = 0;
  virtual void avg_pool2d_backward(float* grad_in, const float* grad_out, int64_t planes,
                                   const ConvGeometry& g, bool count_include_pad) = 0;
  virtual void random_uniform(const Tensor& out, float lo, float hi, Generator& gen) = 0;
  virtual void random_normal(const Tensor& out, float mean, float std, Generator& gen) = 0;
};

Backend& backend(Device device);
Backend& cpu_backend();

}  // namespace plexus
