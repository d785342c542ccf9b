// The CUDA backend: one CudaBackend per device, queuing every kernel and cuBLAS call on that
// device's stream (cuda/runtime.h) without ever synchronising. Numerics follow the CPU backend
// (core/ops/cpu/cpu_backend.cpp); the kernels live in the ops/cuda/*.cuh headers, one concept each:
//   strided.cuh           launch basics, collapsed strided geometry for elementwise ops
//   reduce.cuh            sum / max / min over any dims, argmax / argmin
//   softmax.cuh           softmax (and the causal one of attention), its derivative, fused cross-entropy
//   layer_norm.cuh        layer norm and its derivative
//   attention.h           fused attention, forward and backward (its own attention.cu)
//   index_ops.cuh         index_select / index_add / gather / scatter_add
//   conv.cuh              im2col / col2im / channel permute for the batched convolution
//   pool.cuh              max / average pooling
//   philox.cuh            counter-based random numbers
//   fault.cuh             recording a bad index for the host
//   recurrent.cuh         one time step of an LSTM / GRU / RNN cell and its derivative
// The UnaryOp / BinaryOp formulas are the CPU backend's own (ops/scalar_math.h).
#include <algorithm>
#include <array>
#include <climits>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cuda.h"
#include "cuda/runtime.h"
#include "ops/backend.h"
#include "ops/cuda/attention.h"
#include "ops/cuda/batch_norm.cuh"
#include "ops/cuda/conv.cuh"
#include "ops/cuda/cudnn_conv.h"
#include "ops/cuda/group_reduce.cuh"
#include "ops/cuda/index_ops.cuh"
#include "ops/cuda/layer_norm.cuh"
#include "ops/cuda/philox.cuh"
#include "ops/cuda/pool.cuh"
#include "ops/cuda/recurrent.cuh"
#include "ops/cuda/reduce.cuh"
#include "ops/cuda/softmax.cuh"
#include "ops/cuda/strided.cuh"
#include "ops/precision.h"
#include "ops/scalar_math.h"
#include "tensor/tensor.h"
#include "util/error.h"

namespace plexus::cuda {
namespace {

// ---- elementwise ---------------------------------------------------------------------------
// A functor writes element i given its offsets into each operand (operand 0 is the output).
// The hot ones also have vec4(i): elements i..i+3 of contiguous, 16-byte aligned operands as
// float4 loads and stores (four times the bytes in flight per thread). An in-place op reads
// and writes the same element in either form, so aliasing is harmless.

struct FillF {
  static constexpr bool kVec4 = true;
  float* out;
  float value;
  __device__ void operator()(int64_t, const int64_t* o) const { out[o[0]] = value; }
  __device__ void vec4(int64_t i) const { *reinterpret_cast<float4*>(out + i) = make_float4(value, value, value, value); }
  bool aligned() const { return is_aligned(out); }
};
struct UnaryF {
  static constexpr bool kVec4 = true;
  float* out;
  const float* a;
  UnaryOp op;
  float p0, p1;
  // The op is the same for every element of a launch: math::visit's switch is a uniform branch.
  __device__ float apply(float x) const {
    return math::visit(op, [&]<UnaryOp Op>() { return math::unary<Op>(x, p0, p1); });
  }
  __device__ void operator()(int64_t, const int64_t* o) const { out[o[0]] = apply(a[o[1]]); }
  __device__ void vec4(int64_t i) const {
    const float4 x = *reinterpret_cast<const float4*>(a + i);
    *reinterpret_cast<float4*>(out + i) = make_float4(apply(x.x), apply(x.y), apply(x.z), apply(x.w));
  }
  bool aligned() const { return is_aligned(out) && is_aligned(a); }
};
struct BinaryF {
  static constexpr bool kVec4 = true;
  float* out;
  const float* a;
  const float* b;
  BinaryOp op;
  float p0, p1;
  __device__ float apply(float x, float y) const {
    return math::visit(op, [&]<BinaryOp Op>() { return math::binary<Op>(x, y, p0, p1); });
  }
  __device__ void operator()(int64_t, const int64_t* o) const { out[o[0]] = apply(a[o[1]], b[o[2]]); }
  __device__ void vec4(int64_t i) const {
    const float4 x = *reinterpret_cast<const float4*>(a + i), y = *reinterpret_cast<const float4*>(b + i);
    *reinterpret_cast<float4*>(out + i) =
        make_float4(apply(x.x, y.x), apply(x.y, y.y), apply(x.z, y.z), apply(x.w, y.w));
  }
  bool aligned() const { return is_aligned(out) && is_aligned(a) && is_aligned(b); }
};
struct WhereF {
  static constexpr bool kVec4 = false;
  float* out;
  const float* cond;
  const float* a;
  const float* b;
  __device__ void operator()(int64_t, const int64_t* o) const { out[o[0]] = cond[o[1]] != 0.f ? a[o[2]] : b[o[3]]; }
};
// A kernel argument that changes from step to step: inside a captured step (runtime.h,
// StepMode) it is read from the graph's table, which is refilled before every replay.
template <class T>
struct PerStep {
  T value;
  const T* slot;  // null outside a capture
  __device__ T get() const { return slot ? *slot : value; }
};

// Random fills: element i (the row-major logical index) is a function of (key, i) only.
struct UniformF {
  static constexpr bool kVec4 = false;
  float* out;
  PerStep<uint64_t> key;
  float lo, span;
  __device__ void operator()(int64_t i, const int64_t* o) const {
    out[o[0]] = lo + span * uniform_at(key.get(), uint64_t(i));
  }
};
struct NormalF {
  static constexpr bool kVec4 = false;
  float* out;
  PerStep<uint64_t> key;
  float mean, std;
  __device__ void operator()(int64_t i, const int64_t* o) const {
    out[o[0]] = mean + std * normal_at(key.get(), uint64_t(i));
  }
};

template <int N, class F>
__global__ void elementwise_contiguous(int64_t n, F f) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    int64_t off[N];
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = i;
    f(i, off);
  }
}

// n contiguous elements as n / 4 float4 groups; the first n % 4 threads also take the tail.
template <int N, class F>
__global__ void elementwise_vec4(int64_t n, F f) {
  const int64_t groups = n / 4;
  for (int64_t i = global_thread(); i < groups; i += grid_threads()) f.vec4(i * 4);
  const int64_t t = groups * 4 + global_thread();
  if (t < n) {
    int64_t off[N];
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = t;
    f(t, off);
  }
}

template <int N, class F>
__global__ void elementwise_strided(Geometry<N> g, int64_t n, F f) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    int64_t off[N];
    offsets(g, i, off);
    f(i, off);
  }
}

// ---- small kernels -------------------------------------------------------------------------

// C = beta * C for a GEMM with k = 0 (beta 0 writes zeros, even over NaN).
__global__ void scale_matrix_kernel(float* c, int64_t m, int64_t n, int64_t ldc, float beta) {
  const int64_t total = m * n;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t i = div_nonneg(e, n), j = e - i * n;
    float& v = c[i * ldc + j];
    v = beta == 0.f ? 0.f : beta * v;
  }
}

// ---- optimizers ----------------------------------------------------------------------------
// The update rules are the CPU backend's (ops/scalar_math.h), rounded op by op like a CPU step.

// `skip`: a captured step's non-finite loss (runtime.h, step_skip_flag); null when eager.
__global__ void sgd_kernel(float* param, const float* grad, float* momentum_buffer, int64_t n,
                           PerStep<Backend::SgdStep> step, const int* skip) {
  if (skip && *skip) return;
  const Backend::SgdStep s = step.get();
  for (int64_t i = global_thread(); i < n; i += grid_threads())
    param[i] = math::sgd_update(param[i], grad[i], momentum_buffer ? momentum_buffer + i : nullptr, s);
}

struct AdamArgs {
  Backend::AdamScalars k;
  float sign;
};

__global__ void adam_kernel(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, float* max_exp_avg_sq,
                            int64_t n, PerStep<AdamArgs> args, const int* skip) {
  if (skip && *skip) return;
  const AdamArgs a = args.get();
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    float m = exp_avg[i], v = exp_avg_sq[i];
    param[i] = math::adam_update(param[i], grad[i], m, v, max_exp_avg_sq ? max_exp_avg_sq + i : nullptr, a.k, a.sign,
                                 a.k.weight_decay != 0.f);
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
  }
}

// Multi-tensor updates: up to kManyTensors parameters per launch, each cut into blocks of
// kManyChunk elements; block b belongs to the tensor whose first block is the last one <= b.
constexpr int kManyTensors = 16;
constexpr int64_t kManyChunk = 2048;

struct ManyTensors {
  float* param[kManyTensors];
  const float* grad[kManyTensors];
  float *s0[kManyTensors], *s1[kManyTensors], *s2[kManyTensors];
  int64_t n[kManyTensors];
  uint32_t first_block[kManyTensors + 1];
  int count;
};

template <class Args>
struct ManyArgs {
  Args a[kManyTensors];
};

struct SgdMany {
  __device__ void operator()(const ManyTensors& t, int k, int64_t i, const Backend::SgdStep& s) const {
    t.param[k][i] = math::sgd_update(t.param[k][i], t.grad[k][i], t.s0[k] ? t.s0[k] + i : nullptr, s);
  }
};
struct AdamMany {
  __device__ void operator()(const ManyTensors& t, int k, int64_t i, const AdamArgs& a) const {
    float m = t.s0[k][i], v = t.s1[k][i];
    t.param[k][i] = math::adam_update(t.param[k][i], t.grad[k][i], m, v, t.s2[k] ? t.s2[k] + i : nullptr, a.k, a.sign,
                                      a.k.weight_decay != 0.f);
    t.s0[k][i] = m;
    t.s1[k][i] = v;
  }
};

template <class Args, class Update>
__global__ void update_many_kernel(ManyTensors t, PerStep<ManyArgs<Args>> args, const int* skip, Update update) {
  if (skip && *skip) return;
  int k = 0;
  while (k + 1 < t.count && blockIdx.x >= t.first_block[k + 1]) ++k;
  const Args a = args.slot ? args.slot->a[k] : args.value.a[k];
  const int64_t begin = int64_t(blockIdx.x - t.first_block[k]) * kManyChunk;
  const int64_t end = min(begin + kManyChunk, t.n[k]);
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) update(t, k, i, a);
}

// ---- the backend ---------------------------------------------------------------------------

constexpr int64_t kColumnsBudget = int64_t(64) << 20;  // floats per im2col buffer (256 MiB)
constexpr int64_t kMaxBatch = 65535;                    // GEMMs per cuBLAS batched call

int to_int(int64_t v, const char* op, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw ValueError(std::string(op) + ": " + what + " = " + std::to_string(v) + " exceeds the cuBLAS limit of " +
                     std::to_string(INT_MAX));
  return int(v);
}

void check_rank(const char* op, const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* t : inputs)
    if (t->dim() != out.dim())
      throw ValueError(std::string(op) + ": operand of shape " + to_string(t->shape()) +
                       " was not broadcast to the output shape " + to_string(out.shape()));
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index) : index_(index) {
    int sms = 0;
    PLEXUS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, index));
    sms_ = std::max(sms, 1);
    // Grid-stride kernels get up to a few waves of blocks: enough to fill every SM whatever
    // the kernel's occupancy, few enough that each thread still loops.
    max_blocks_ = int64_t(sms_) * 32;
  }

  // -- elementwise --------------------------------------------------------------------------

  void fill(const Tensor& out, float value) override {
    use_device(index_);
    elementwise<1>(out.shape(), {out.strides().data()}, FillF{out.data(), value}, "fill");
  }

  void unary(UnaryOp op, const Tensor& out, const Tensor& a, float p0, float p1) override {
    use_device(index_);
    check_rank("unary", out, {&a});
    elementwise<2>(out.shape(), {out.strides().data(), a.strides().data()}, UnaryF{out.data(), a.data(), op, p0, p1},
                   "unary");
  }

  void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, float p0, float p1) override {
    use_device(index_);
    check_rank("binary", out, {&a, &b});
    elementwise<3>(out.shape(), {out.strides().data(), a.strides().data(), b.strides().data()},
                   BinaryF{out.data(), a.data(), b.data(), op, p0, p1}, "binary");
  }

  void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) override {
    use_device(index_);
    check_rank("where", out, {&cond, &a, &b});
    elementwise<4>(out.shape(),
                   {out.strides().data(), cond.strides().data(), a.strides().data(), b.strides().data()},
                   WhereF{out.data(), cond.data(), a.data(), b.data()}, "where");
  }

  void random_uniform(const Tensor& out, float lo, float hi, Generator& gen) override {
    use_device(index_);
    elementwise<1>(out.shape(), {out.strides().data()}, UniformF{out.data(), random_key(gen), lo, hi - lo},
                   "random_uniform");
  }

  void random_normal(const Tensor& out, float mean, float std, Generator& gen) override {
    use_device(index_);
    elementwise<1>(out.shape(), {out.strides().data()}, NormalF{out.data(), random_key(gen), mean, std},
                   "random_normal");
  }

  // -- reductions ---------------------------------------------------------------------------

  void reduce(ReduceOp op, const Tensor& out, const Tensor& in) override {
    use_device(index_);
    check_rank("reduce", in, {&out});
    const int nd = int(in.dim());
    if (nd > kMaxDims)
      throw ValueError("reduce: tensors of more than 16 dims are not supported (got " + std::to_string(nd) + ")");
    // Split the dims: out stride 0 = reduced, else kept (one output element per coordinate).
    Shape kept_shape, reduced_shape;
    std::vector<int64_t> kept_out, kept_in, reduced_in;
    int64_t outputs = 1, extent = 1;
    for (int d = 0; d < nd; ++d) {
      const int64_t s = in.shape()[d];
      if (out.strides()[d] == 0) {
        extent *= s;
        reduced_shape.push_back(s);
        reduced_in.push_back(in.strides()[d]);
      } else {
        outputs *= s;
        kept_shape.push_back(s);
        kept_out.push_back(out.strides()[d]);
        kept_in.push_back(in.strides()[d]);
      }
    }
    if (outputs == 0) return;
    ReducePlan p{};
    collapse<2>(kept_shape, {kept_out.data(), kept_in.data()}, p.kept, "reduce");
    collapse<1>(reduced_shape, {reduced_in.data()}, p.reduced, "reduce");  // ndim 0 when extent is 0
    p.outputs = outputs;
    p.extent = extent;

    // Layout (see reduce.cuh): short reductions get a thread per output; otherwise the lanes
    // follow whichever side is contiguous in memory.
    const bool reduced_unit = p.reduced.ndim > 0 && p.reduced.stride[0][0] == 1;
    const bool kept_unit = p.kept.ndim > 0 && p.kept.stride[1][0] == 1;
    const int64_t target_blocks = 4 * int64_t(sms_);
    if (extent <= 16) {
      p.lanes = 1;
      p.lane_stride = 1;
    } else if (outputs == 1 || reduced_unit || (!kept_unit && extent >= 64)) {
      p.lane_stride = 1;
      p.lanes = ceil_div(outputs, kThreads / 32) < target_blocks && extent >= 2048 ? kThreads : 32;
    } else {
      p.lanes = 8;
      p.lane_stride = 32;
    }
    p.out_blocks = ceil_div(outputs, kThreads / p.lanes);
    // Too few blocks to fill the GPU: split each reduction over blockIdx.y (each split still
    // gives every lane at least 16 elements).
    int64_t splits = 1;
    if (p.out_blocks < target_blocks && extent > 0) {
      splits = std::min(ceil_div(target_blocks, p.out_blocks), ceil_div(extent, int64_t(p.lanes) * 16));
      splits = std::clamp<int64_t>(splits, 1, 65535);
    }
    p.chunk = extent > 0 ? ceil_div(extent, splits) : 0;
    if (extent > 0) splits = ceil_div(extent, p.chunk);
    switch (op) {
      case ReduceOp::Sum: return run_reduce<SumReduce>(p, int(splits), out.data(), in.data());
      case ReduceOp::Max: return run_reduce<MaxReduce>(p, int(splits), out.data(), in.data());
      case ReduceOp::Min: return run_reduce<MinReduce>(p, int(splits), out.data(), in.data());
    }
  }

  void arg_reduce(bool is_max, float* out, const float* in, int64_t outer, int64_t n, int64_t inner) override {
    use_device(index_);
    if (outer == 0 || inner == 0) return;
    if (inner == 1) {
      if (n >= 4096) {
        arg_reduce_rows<kThreads><<<capped(outer), kThreads, 0, stream(index_)>>>(is_max, out, in, outer, n);
      } else {
        arg_reduce_rows<32><<<capped(ceil_div(outer, kThreads / 32)), kThreads, 0, stream(index_)>>>(is_max, out, in,
                                                                                                      outer, n);
      }
      check_launch("arg_reduce_rows");
    } else {
      arg_reduce_columns<<<blocks(outer * inner), kThreads, 0, stream(index_)>>>(is_max, out, in, outer, n, inner);
      check_launch("arg_reduce_columns");
    }
  }

  // -- matrix products ----------------------------------------------------------------------

  void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
            const float* b, int64_t ldb, float beta, float* c, int64_t ldc) override {
    use_device(index_);
    if (m == 0 || n == 0) return;
    if (k == 0) {  // BLAS leaves C untouched when k = 0; the product is then beta*C
      scale_matrix_kernel<<<blocks(m * n), kThreads, 0, stream(index_)>>>(c, m, n, ldc, beta);
      check_launch("scale_matrix_kernel");
      return;
    }
    // Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ: swap the operands.
    PLEXUS_CUDA_CHECK(cublasGemmEx(cublas(index_), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   to_int(n, "gemm", "n"), to_int(m, "gemm", "m"), to_int(k, "gemm", "k"), &alpha, b,
                                   CUDA_R_32F, to_int(ldb, "gemm", "ldb"), a, CUDA_R_32F, to_int(lda, "gemm", "lda"),
                                   &beta, c, CUDA_R_32F, to_int(ldc, "gemm", "ldc"), compute_type(),
                                   CUBLAS_GEMM_DEFAULT));
  }

  // -- softmax and cross-entropy ------------------------------------------------------------

  void softmax(float* out, const float* in, int64_t outer, int64_t n, int64_t inner, bool log) override {
    use_device(index_);
    if (outer == 0 || n == 0 || inner == 0) return;
    if (inner == 1) {
      with_row_lanes(n, [&](auto lanes) {
        constexpr int kLanes = decltype(lanes)::value;
        softmax_rows<kLanes><<<row_grid(outer, kLanes), kThreads, 0, stream(index_)>>>(out, in, outer, n, log, 0);
      });
      check_launch("softmax_rows");
    } else {
      softmax_columns<<<blocks(outer * inner), kThreads, 0, stream(index_)>>>(out, in, outer, n, inner, log);
      check_launch("softmax_columns");
    }
  }

  void softmax_backward(float* gin, const float* gout, const float* out, int64_t outer, int64_t n, int64_t inner,
                        bool log) override {
    use_device(index_);
    if (outer == 0 || n == 0 || inner == 0) return;
    if (inner == 1) {
      with_row_lanes(n, [&](auto lanes) {
        constexpr int kLanes = decltype(lanes)::value;
        softmax_backward_rows<kLanes><<<row_grid(outer, kLanes), kThreads, 0, stream(index_)>>>(gin, gout, out, outer,
                                                                                               n, log);
      });
      check_launch("softmax_backward_rows");
    } else {
      softmax_backward_columns<<<blocks(outer * inner), kThreads, 0, stream(index_)>>>(gin, gout, out, outer, n,
                                                                                       inner, log);
      check_launch("softmax_backward_columns");
    }
  }

  void cross_entropy(float* loss, float* lse, const float* logits, const float* target, int64_t n, int64_t c,
                     float smoothing) override {
    use_device(index_);
    if (n == 0) return;
    FaultRecord* fault = fault_record(index_);
    with_row_lanes(c, [&](auto lanes) {
      constexpr int kLanes = decltype(lanes)::value;
      cross_entropy_rows<kLanes><<<row_grid(n, kLanes), kThreads, 0, stream(index_)>>>(fault, loss, lse, logits,
                                                                                       target, n, c, smoothing);
    });
    check_launch("cross_entropy_rows");
  }

  void cross_entropy_backward(float* gx, const float* gloss, int64_t gloss_stride, float scale, const float* logits,
                              const float* lse, const float* target, int64_t n, int64_t c, float smoothing) override {
    use_device(index_);
    if (n == 0 || c == 0) return;
    const float off = smoothing / float(c);
    cross_entropy_backward_kernel<<<blocks(n * c), kThreads, 0, stream(index_)>>>(
        fault_record(index_), gx, gloss, gloss_stride, scale, logits, lse, target, n, c, smoothing, off);
    check_launch("cross_entropy_backward_kernel");
  }

  // -- indexing -----------------------------------------------------------------------------

  void index_select(float* out, const float* in, const float* index, int64_t outer, int64_t in_n, int64_t idx_n,
                    int64_t inner) override {
    use_device(index_);
    const int64_t total = outer * idx_n * inner;
    if (total == 0) return;
    index_select_kernel<<<blocks(total), kThreads, 0, stream(index_)>>>(fault_record(index_), out, in, index, outer,
                                                                        in_n, idx_n, inner);
    check_launch("index_select_kernel");
  }

  void index_add(float* out, const float* src, const float* index, int64_t outer, int64_t out_n, int64_t idx_n,
                 int64_t inner) override {
    use_device(index_);
    const int64_t total = outer * idx_n * inner;
    if (total == 0) return;
    index_add_kernel<<<blocks(total), kThreads, 0, stream(index_)>>>(fault_record(index_), out, src, index, outer,
                                                                     out_n, idx_n, inner);
    check_launch("index_add_kernel");
  }

  void gather(float* out, const float* in, const Shape& in_shape, const float* index, const Shape& index_shape,
              int64_t dim) override {
    use_device(index_);
    const IndexedAxis a = indexed_axis("gather", in_shape, index_shape, dim);
    const int64_t total = numel(index_shape);
    if (total == 0) return;
    gather_kernel<<<blocks(total), kThreads, 0, stream(index_)>>>(fault_record(index_), out, in, index, a, total);
    check_launch("gather_kernel");
  }

  void scatter_add(float* out, const Shape& out_shape, const float* src, const float* index, const Shape& index_shape,
                   int64_t dim) override {
    use_device(index_);
    const IndexedAxis a = indexed_axis("scatter_add", out_shape, index_shape, dim);
    const int64_t total = numel(index_shape);
    if (total == 0) return;
    scatter_add_kernel<<<blocks(total), kThreads, 0, stream(index_)>>>(fault_record(index_), out, src, index, a,
                                                                       total);
    check_launch("scatter_add_kernel");
  }

  // -- convolution --------------------------------------------------------------------------
  // Through cuDNN where the build has it and the problem suits it (cudnn_conv.h). Otherwise
  // batched over images: per chunk of nb images, one im2col over all channels into
  // cols [c*kh*kw, nb*plane], then per group one strided-batched GEMM (W_g shared through a
  // zero stride) writing straight into out[n, oc, oh, ow]. A 1x1, stride-1, unpadded
  // convolution skips im2col: x itself is the columns of each image.

  void conv2d_forward(float* out, const float* x, const float* weight, const ConvProblem& p) override {
    use_device(index_);
    if (cudnn_conv_forward(index_, out, x, weight, p)) return;
    const ConvGeometry& g = p.geo;
    const int64_t groups = p.groups, og = p.oc / groups, cg = g.c, kdim = cg * g.kh * g.kw, plane = g.oh * g.ow;
    const int64_t image = p.c * g.h * g.w;
    if (p.n == 0 || p.oc == 0 || plane == 0) return;
    if (kdim == 0) {  // no input channels: the sum over them is empty
      PLEXUS_CUDA_CHECK(cudaMemsetAsync(out, 0, size_t(p.n * p.oc * plane) * sizeof(float), stream(index_)));
      return;
    }
    if (pointwise(g)) {
      for (int64_t grp = 0; grp < groups; ++grp)
        gemm_batched(false, false, og, plane, kdim, weight + grp * og * kdim, kdim, 0, x + grp * cg * plane, plane,
                     image, 0.f, out + grp * og * plane, plane, p.oc * plane, p.n);
      return;
    }
    const int64_t rows = p.c * g.kh * g.kw;
    const int64_t nb = images_per_chunk(p.n, rows * plane, 0);
    check_conv_size(p, nb);
    const Tensor cols = plexus::empty({rows * nb * plane}, Device::cuda(index_));
    ConvGeometry all = g;
    all.c = p.c;
    for (int64_t i0 = 0; i0 < p.n; i0 += nb) {
      const int64_t count = std::min(nb, p.n - i0), width = count * plane;
      im2col(cols.data(), x + i0 * image, all, count);
      for (int64_t grp = 0; grp < groups; ++grp)
        gemm_batched(false, false, og, plane, kdim, weight + grp * og * kdim, kdim, 0, cols.data() + grp * kdim * width,
                     width, plane, 0.f, out + (i0 * p.oc + grp * og) * plane, plane, p.oc * plane, count);
    }
  }

  // grad_weight_g += gout_g [og, nb*plane] · cols_gᵀ (gout permuted channels-first, one GEMM per
  // chunk, batched over groups); grad_x: gcols_g = W_gᵀ · gout_g per image (strided-batched),
  // then col2im as a gather adding into grad_x.
  void conv2d_backward(float* grad_x, float* grad_weight, const float* grad_out, const float* x, const float* weight,
                       const ConvProblem& p) override {
    use_device(index_);
    if ((grad_x || grad_weight) && cudnn_conv_backward(index_, grad_x, grad_weight, grad_out, x, weight, p)) return;
    const ConvGeometry& g = p.geo;
    const int64_t groups = p.groups, og = p.oc / groups, cg = g.c, kdim = cg * g.kh * g.kw, plane = g.oh * g.ow;
    const int64_t image = p.c * g.h * g.w;
    if ((!grad_x && !grad_weight) || p.n == 0 || p.oc == 0 || plane == 0 || kdim == 0) return;
    const bool direct_x = grad_x && pointwise(g);
    if (direct_x) {  // grad_x_b,g [cg, plane] += W_gᵀ · gout_b,g, straight into grad_x
      for (int64_t grp = 0; grp < groups; ++grp)
        gemm_batched(true, false, kdim, plane, og, weight + grp * og * kdim, kdim, 0, grad_out + grp * og * plane,
                     plane, p.oc * plane, 1.f, grad_x + grp * cg * plane, plane, image, p.n);
      grad_x = nullptr;
      if (!grad_weight) return;
    }
    const int64_t rows = p.c * g.kh * g.kw;
    const int64_t nb = images_per_chunk(p.n, rows * plane, grad_weight ? p.oc * plane : 0);
    check_conv_size(p, nb);
    const Tensor cols = plexus::empty({rows * nb * plane}, Device::cuda(index_));
    const Tensor gperm = grad_weight ? plexus::empty({p.oc * nb * plane}, Device::cuda(index_)) : Tensor();
    ConvGeometry all = g;
    all.c = p.c;
    for (int64_t i0 = 0; i0 < p.n; i0 += nb) {
      const int64_t count = std::min(nb, p.n - i0), width = count * plane;
      const float* gout = grad_out + i0 * p.oc * plane;
      if (grad_weight) {
        im2col(cols.data(), x + i0 * image, all, count);
        channels_first_kernel<<<grid_2d(width, p.oc), kThreads, 0, stream(index_)>>>(
            gperm.data(), gout, p.oc, count, plane, ConvDivisors{FastDiv(plane), {}, {}, {}});
        check_launch("channels_first_kernel");
        gemm_batched(false, true, og, kdim, width, gperm.data(), width, og * width, cols.data(), width, kdim * width,
                     1.f, grad_weight, kdim, og * kdim, groups);
      }
      if (grad_x) {  // cols is free again: the stream runs the weight GEMM before this overwrite
        for (int64_t grp = 0; grp < groups; ++grp)
          gemm_batched(true, false, kdim, plane, og, weight + grp * og * kdim, kdim, 0, gout + grp * og * plane, plane,
                       p.oc * plane, 0.f, cols.data() + grp * kdim * width, width, plane, count);
        col2im_kernel<<<grid_2d(g.h * g.w, count * p.c), kThreads, 0, stream(index_)>>>(
            grad_x + i0 * image, cols.data(), all, count, ConvDivisors{FastDiv(g.w), FastDiv(g.sh), FastDiv(g.sw), {}});
        check_launch("col2im_kernel");
      }
    }
  }

  // -- batch norm (batch_norm.cuh) ---------------------------------------------------------

  void batch_norm_stats(float* mean, float* var, float* invstd, const float* x, int64_t n, int64_t c, int64_t s,
                        float eps) override {
    bn_sums<false>(mean, var, invstd, x, nullptr, nullptr, nullptr, n, c, s, eps);
  }

  void batch_norm_apply(float* y, const float* x, const float* mean, const float* invstd, const float* weight,
                        const float* bias, int64_t n, int64_t c, int64_t s) override {
    use_device(index_);
    if (n * c * s == 0) return;
    bn_rows<false><<<grid_2d(s, n * c), kBnThreads, 0, stream(index_)>>>(y, x, nullptr, mean, invstd, weight, bias,
                                                                          nullptr, nullptr, 0.f, n * c, c, s);
    check_launch("bn_rows");
  }

  void batch_norm_backward_reduce(float* sum_dy, float* sum_dy_xhat, const float* dy, const float* x,
                                  const float* mean, const float* invstd, int64_t n, int64_t c, int64_t s) override {
    bn_sums<true>(sum_dy, sum_dy_xhat, nullptr, x, dy, mean, invstd, n, c, s, 0.f);
  }

  void batch_norm_backward_input(float* dx, const float* dy, const float* x, const float* mean, const float* invstd,
                                 const float* weight, const float* sum_dy, const float* sum_dy_xhat, int64_t n,
                                 int64_t c, int64_t s) override {
    use_device(index_);
    if (n * c * s == 0) return;
    const float inv_count = 1.f / float(std::max<int64_t>(1, n * s));
    bn_rows<true><<<grid_2d(s, n * c), kBnThreads, 0, stream(index_)>>>(dx, x, dy, mean, invstd, weight, nullptr, sum_dy,
                                                                         sum_dy_xhat, inv_count, n * c, c, s);
    check_launch("bn_rows");
  }

  // -- sequence models: layer norm (layer_norm.cuh) and the causal softmax (softmax.cuh) --

  void layer_norm(float* y, float* mean, float* invstd, const float* x, const float* weight, const float* bias,
                  int64_t rows, int64_t d, float eps) override {
    use_device(index_);
    if (rows == 0 || d == 0) return;
    with_row_lanes(d, [&](auto lanes) {
      constexpr int kLanes = decltype(lanes)::value;
      layer_norm_rows<kLanes><<<row_grid(rows, kLanes), kThreads, 0, stream(index_)>>>(y, mean, invstd, x, weight, bias,
                                                                                       rows, d, eps);
    });
    check_launch("layer_norm_rows");
  }

  void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                         const AttentionProblem& p) override {
    cuda::attention_forward(index_, out, lse, q, k, v, p);
  }
  void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q, const float* k,
                          const float* v, const float* out, const float* lse, const AttentionProblem& p) override {
    cuda::attention_backward(index_, dq, dk, dv, dout, q, k, v, out, lse, p);
  }
  int64_t max_fused_attention_dim() const override { return kMaxAttentionDim; }

  void layer_norm_backward(float* dx, const float* dy, const float* x, const float* mean, const float* invstd,
                           const float* weight, int64_t rows, int64_t d) override {
    use_device(index_);
    if (rows == 0 || d == 0) return;
    with_row_lanes(d, [&](auto lanes) {
      constexpr int kLanes = decltype(lanes)::value;
      layer_norm_backward_rows<kLanes><<<row_grid(rows, kLanes), kThreads, 0, stream(index_)>>>(dx, dy, x, mean, invstd,
                                                                                                weight, rows, d);
    });
    check_launch("layer_norm_backward_rows");
  }

  void causal_softmax(float* out, const float* in, int64_t rows, int64_t t) override {
    use_device(index_);
    if (rows == 0 || t == 0) return;
    with_row_lanes(t, [&](auto lanes) {
      constexpr int kLanes = decltype(lanes)::value;
      softmax_rows<kLanes><<<row_grid(rows, kLanes), kThreads, 0, stream(index_)>>>(out, in, rows, t, false, t);
    });
    check_launch("softmax_rows");
  }

  // -- pooling ------------------------------------------------------------------------------

  void max_pool2d(float* out, float* argmax, const float* in, int64_t planes, const ConvGeometry& g) override {
    use_device(index_);
    const int64_t total = planes * g.oh * g.ow;
    if (total == 0) return;
    max_pool_kernel<<<blocks(total), kThreads, 0, stream(index_)>>>(out, argmax, in, planes, g);
    check_launch("max_pool_kernel");
  }

  void max_pool2d_backward(float* gin, const float* gout, const float* argmax, int64_t planes,
                           const ConvGeometry& g) override {
    use_device(index_);
    const int64_t total = planes * g.h * g.w;
    if (total == 0 || g.oh * g.ow == 0) return;
    if (g.kh <= g.sh && g.kw <= g.sw) {
      max_pool_backward_scatter_kernel<<<blocks(planes * g.oh * g.ow), kThreads, 0, stream(index_)>>>(
          gin, gout, argmax, planes, g);
      check_launch("max_pool_backward_scatter_kernel");
      return;
    }
    max_pool_backward_kernel<<<blocks(total), kThreads, 0, stream(index_)>>>(gin, gout, argmax, planes, g);
    check_launch("max_pool_backward_kernel");
  }

  void avg_pool2d(float* out, const float* in, int64_t planes, const ConvGeometry& g, bool include_pad) override {
    use_device(index_);
    const int64_t total = planes * g.oh * g.ow;
    if (total == 0) return;
    avg_pool_kernel<<<blocks(total), kThreads, 0, stream(index_)>>>(out, in, planes, g, include_pad);
    check_launch("avg_pool_kernel");
  }

  void avg_pool2d_backward(float* gin, const float* gout, int64_t planes, const ConvGeometry& g,
                           bool include_pad) override {
    use_device(index_);
    const int64_t total = planes * g.h * g.w;
    if (total == 0 || g.oh * g.ow == 0) return;
    avg_pool_backward_kernel<<<blocks(total), kThreads, 0, stream(index_)>>>(gin, gout, planes, g, include_pad);
    check_launch("avg_pool_backward_kernel");
  }

  void adaptive_pool2d(float* out, float* argmax, const float* in, int64_t planes,
                       const AdaptiveGeometry& g) override {
    use_device(index_);
    const int64_t total = planes * g.oh * g.ow;
    if (total == 0) return;
    adaptive_pool_kernel<<<blocks(total), kThreads, 0, stream(index_)>>>(out, argmax, in, planes, g);
    check_launch("adaptive_pool_kernel");
  }

  void adaptive_pool2d_backward(float* gin, const float* gout, const float* argmax, int64_t planes,
                                const AdaptiveGeometry& g) override {
    use_device(index_);
    const int64_t total = planes * g.h * g.w;
    if (total == 0 || g.oh * g.ow == 0) return;
    adaptive_pool_backward_kernel<<<blocks(total), kThreads, 0, stream(index_)>>>(gin, gout, argmax, planes, g);
    check_launch("adaptive_pool_backward_kernel");
  }

  // -- optimizers ---------------------------------------------------------------------------

  void rnn_cell_forward(const RnnStep& s) override {
    use_device(index_);
    if (s.n * s.h == 0) return;
    switch (s.cell) {
      case RnnCell::Lstm: rnn_cell_forward_kernel<RnnCell::Lstm><<<blocks(s.n * s.h), kThreads, 0, stream(index_)>>>(s); break;
      case RnnCell::Gru: rnn_cell_forward_kernel<RnnCell::Gru><<<blocks(s.n * s.h), kThreads, 0, stream(index_)>>>(s); break;
      case RnnCell::Tanh: rnn_cell_forward_kernel<RnnCell::Tanh><<<blocks(s.n * s.h), kThreads, 0, stream(index_)>>>(s); break;
    }
    check_launch("rnn_cell_forward_kernel");
  }

  void rnn_cell_backward(const RnnStepGrad& s) override {
    use_device(index_);
    if (s.n * s.h == 0) return;
    switch (s.cell) {
      case RnnCell::Lstm: rnn_cell_backward_kernel<RnnCell::Lstm><<<blocks(s.n * s.h), kThreads, 0, stream(index_)>>>(s); break;
      case RnnCell::Gru: rnn_cell_backward_kernel<RnnCell::Gru><<<blocks(s.n * s.h), kThreads, 0, stream(index_)>>>(s); break;
      case RnnCell::Tanh: rnn_cell_backward_kernel<RnnCell::Tanh><<<blocks(s.n * s.h), kThreads, 0, stream(index_)>>>(s); break;
    }
    check_launch("rnn_cell_backward_kernel");
  }

  void sgd_step(float* param, const float* grad, float* momentum_buffer, int64_t n, const SgdStep& s) override {
    use_device(index_);
    if (n == 0) return;
    PerStep<SgdStep> step{s, nullptr};
    if (!stage(step)) return;
    sgd_kernel<<<blocks(n), kThreads, 0, stream(index_)>>>(param, grad, momentum_buffer, n, step, step_skip_flag(index_));
    check_launch("sgd_kernel");
  }

  void sgd_step_many(const std::vector<UpdateTensor>& ts, const std::vector<SgdStep>& steps) override {
    update_many<SgdStep>(ts, [&](size_t i) { return steps[i]; }, SgdMany{}, "update_many_kernel (SGD)");
  }

  void adam_step_many(const std::vector<UpdateTensor>& ts, const std::vector<AdamStep>& steps) override {
    for (size_t i = 0; i < ts.size(); ++i)
      if (steps[i].amsgrad && !ts[i].s2) throw ValueError("adam_step: amsgrad needs max_exp_avg_sq");
    update_many<AdamArgs>(
        ts, [&](size_t i) { return AdamArgs{adam_scalars(steps[i]), steps[i].maximize ? -1.f : 1.f}; }, AdamMany{},
        "update_many_kernel (Adam)");
  }

  void adam_step(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, float* max_exp_avg_sq, int64_t n,
                 const AdamStep& s) override {
    use_device(index_);
    if (n == 0) return;
    if (s.amsgrad && !max_exp_avg_sq) throw ValueError("adam_step: amsgrad needs max_exp_avg_sq");
    PerStep<AdamArgs> args{{adam_scalars(s), s.maximize ? -1.f : 1.f}, nullptr};
    if (!stage(args)) return;
    adam_kernel<<<blocks(n), kThreads, 0, stream(index_)>>>(param, grad, exp_avg, exp_avg_sq,
                                                            s.amsgrad ? max_exp_avg_sq : nullptr, n, args,
                                                            step_skip_flag(index_));
    check_launch("adam_kernel");
  }

 private:
  static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

  // Lanes per row for the row kernels (softmax.cuh): 8 for short rows, a warp, or the whole
  // block for long ones; `launch` gets the choice as a std::integral_constant.
  template <class Launch>
  static void with_row_lanes(int64_t n, Launch launch) {
    if (n <= 32)
      launch(std::integral_constant<int, 8>{});
    else if (n <= 2048)
      launch(std::integral_constant<int, 32>{});
    else
      launch(std::integral_constant<int, kThreads>{});
  }
  unsigned row_grid(int64_t rows, int lanes) const { return capped(ceil_div(rows, kThreads / lanes)); }

  // A 2-D grid for the conv kernels: blockIdx.y over `rows` (looping past 65535), threads over
  // `columns`, a few elements each, at most ~4 waves of blocks in all.
  dim3 grid_2d(int64_t columns, int64_t rows) const {
    const int64_t y = std::clamp<int64_t>(rows, 1, 65535);
    const int64_t x = std::clamp<int64_t>(ceil_div(columns, kThreads), 1, std::max<int64_t>(1, 4 * max_blocks_ / y));
    return dim3(unsigned(x), unsigned(y));
  }

  // Per-channel sums of batch norm: partials over (channel, slice of images), then a finish.
  // Enough slices to fill the device, each of at least ~4K values and under 2^31.
  template <bool kBackward>
  void bn_sums(float* out_a, float* out_b, float* out_c, const float* x, const float* dy, const float* mean,
               const float* invstd, int64_t n, int64_t c, int64_t s, float eps) {
    use_device(index_);
    if (c == 0) return;
    if (s >= (int64_t(1) << 31)) throw ValueError("batch_norm: more than 2^31 values per image and channel");
    const int64_t by_device = ceil_div(4 * int64_t(sms_), c), by_size = std::max<int64_t>(1, n * s / 4096);
    int64_t slices = std::clamp<int64_t>(std::min(by_device, by_size), 1, 65535);
    int64_t per_slice = ceil_div(std::max<int64_t>(n, 1), slices);
    per_slice = std::min(per_slice, std::max<int64_t>(1, ((int64_t(1) << 31) - 1) / std::max<int64_t>(s, 1)));
    slices = ceil_div(std::max<int64_t>(n, 1), per_slice);
    const Tensor partial = plexus::empty({c * slices * 4}, Device::cuda(index_));  // double2 each
    auto* p = reinterpret_cast<double2*>(partial.data());
    bn_partials<kBackward><<<dim3(unsigned(c), unsigned(slices)), kBnThreads, 0, stream(index_)>>>(
        p, x, dy, n, c, s, per_slice, FastDiv(std::max<int64_t>(s, 1)));
    check_launch("bn_partials");
    bn_finish<kBackward><<<unsigned(ceil_div(c, kThreads)), kThreads, 0, stream(index_)>>>(
        p, slices, c, double(n * s), eps, out_a, out_b, out_c, mean, invstd);
    check_launch("bn_finish");
  }

  // im2col of `count` images (all channels) into cols [c*kh*kw, count*plane].
  void im2col(float* cols, const float* x, const ConvGeometry& all, int64_t count) {
    const int64_t plane = all.oh * all.ow;
    im2col_kernel<<<grid_2d(count * plane, all.c * all.kh * all.kw), kThreads, 0, stream(index_)>>>(
        cols, x, all, count, ConvDivisors{FastDiv(all.kw), FastDiv(all.kh), FastDiv(plane), FastDiv(all.ow)});
    check_launch("im2col_kernel");
  }

  // The conv kernels index rows, columns and planes in 32 bits.
  static void check_conv_size(const ConvProblem& p, int64_t nb) {
    const ConvGeometry& g = p.geo;
    constexpr int64_t kLimit = INT_MAX;
    if (nb * g.oh * g.ow > kLimit || g.h * g.w > kLimit || p.c * g.kh * g.kw > kLimit)
      throw ValueError("conv2d: an input plane, output plane or kernel of more than 2^31 elements is not supported");
  }

  // Blocks for a grid-stride loop over n elements: enough for n, at most max_blocks_.
  unsigned blocks(int64_t n) const { return capped(ceil_div(n, kThreads)); }
  // A block count for a grid-stride (or block-stride) loop: 1 .. max_blocks_.
  unsigned capped(int64_t wanted) const { return unsigned(std::clamp<int64_t>(wanted, 1, max_blocks_)); }

  template <int N, class F>
  void elementwise(const Shape& shape, const std::array<const int64_t*, N>& strides, const F& f, const char* op) {
    Geometry<N> g;
    const int64_t n = collapse<N>(shape, strides, g, op);
    if (n == 0) return;
    if (is_contiguous_run(g)) {
      if constexpr (F::kVec4) {
        if (f.aligned()) {
          elementwise_vec4<N><<<blocks(ceil_div(n, 4)), kThreads, 0, stream(index_)>>>(n, f);
          check_launch(op);
          return;
        }
      }
      elementwise_contiguous<N><<<blocks(n), kThreads, 0, stream(index_)>>>(n, f);
      check_launch(op);
    } else {
      elementwise_strided<N><<<blocks(n), kThreads, 0, stream(index_)>>>(g, n, f);
      check_launch(op);
    }
  }

  // A random op's key, drawn from `gen`; in a captured step, redrawn before every replay.
  PerStep<uint64_t> random_key(Generator& gen) const {
    if (step_mode(index_) == StepMode::Refreshing)
      throw DeviceError("a random op ran while the update was staged for a replay of the captured step");
    uint64_t key;
    {
      std::lock_guard lock(gen.mutex());
      key = gen.next_u64();
    }
    return {key, stage_random_key(index_, key, gen)};
  }

  // Update values: staged in the graph's table when capturing or refreshing (runtime.h).
  // False when refreshing: the graph launches the kernel, not this call.
  template <class T>
  bool stage(PerStep<T>& v) const {
    const StepMode mode = step_mode(index_);
    if (mode == StepMode::Eager) return true;
    v.slot = static_cast<const T*>(stage_step_value(index_, &v.value, sizeof(T)));
    return mode == StepMode::Capturing;
  }

  template <class R>
  void run_reduce(const ReducePlan& p, int splits, float* out, const float* in) {
    using Acc = typename R::Acc;
    const dim3 grid(unsigned(std::min<int64_t>(p.out_blocks, INT_MAX)), unsigned(splits));
    if (splits == 1) {
      reduce_kernel<R><<<grid, kThreads, 0, stream(index_)>>>(p, out, in, nullptr);
      check_launch("reduce_kernel");
      return;
    }
    const int64_t partial_floats = ceil_div(int64_t(splits) * p.outputs * int64_t(sizeof(Acc)), int64_t(sizeof(float)));
    const Tensor partial = plexus::empty({partial_floats}, Device::cuda(index_));
    Acc* buf = reinterpret_cast<Acc*>(partial.data());
    reduce_kernel<R><<<grid, kThreads, 0, stream(index_)>>>(p, out, in, buf);
    check_launch("reduce_kernel");
    reduce_finish<R><<<capped(ceil_div(p.outputs, kThreads / 32)), kThreads, 0, stream(index_)>>>(p, splits, out, buf);
    check_launch("reduce_finish");
  }

  // Row-major strided-batched GEMM C_i = alpha op(A_i) op(B_i) + beta C_i (alpha = 1), i < batch,
  // X_i = X + i * stride_x (stride 0 shares one matrix); split into calls of kMaxBatch GEMMs.
  void gemm_batched(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, int64_t stride_a,
                    const float* b, int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc,
                    int64_t stride_c, int64_t batch) override {
    use_device(index_);
    const float alpha = 1.f;
    if (m == 0 || n == 0 || batch == 0) return;
    if (batch == 1 || k == 0) {
      for (int64_t i = 0; i < batch; ++i)
        gemm(ta, tb, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
      return;
    }
    const char* op = "batched matrix product";
    const int im = to_int(m, op, "m"), in = to_int(n, op, "n"), ik = to_int(k, op, "k");
    const int ilda = to_int(lda, op, "lda"), ildb = to_int(ldb, op, "ldb"), ildc = to_int(ldc, op, "ldc");
    for (int64_t i0 = 0; i0 < batch; i0 += kMaxBatch) {
      const int count = int(std::min(kMaxBatch, batch - i0));
      PLEXUS_CUDA_CHECK(cublasGemmStridedBatchedEx(
          cublas(index_), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, in, im, ik, &alpha,
          b + i0 * stride_b, CUDA_R_32F, ildb, stride_b, a + i0 * stride_a, CUDA_R_32F, ilda, stride_a, &beta,
          c + i0 * stride_c, CUDA_R_32F, ildc, stride_c, count, compute_type(), CUBLAS_GEMM_DEFAULT));
    }
  }

  // Launches of update_many_kernel over `ts` in groups of kManyTensors; args(i) gives tensor
  // i's per-step arguments, staged per launch in a captured step like any update's.
  template <class Args, class ArgsOf, class Update>
  void update_many(const std::vector<UpdateTensor>& ts, ArgsOf&& args, Update update, const char* name) {
    use_device(index_);
    for (size_t first = 0; first < ts.size(); first += kManyTensors) {
      ManyTensors t{};
      PerStep<ManyArgs<Args>> a{};
      uint32_t blocks_total = 0;
      for (size_t i = first; i < std::min(ts.size(), first + kManyTensors); ++i) {
        const int k = t.count++;
        t.param[k] = ts[i].param;
        t.grad[k] = ts[i].grad;
        t.s0[k] = ts[i].s0;
        t.s1[k] = ts[i].s1;
        t.s2[k] = ts[i].s2;
        t.n[k] = ts[i].n;
        t.first_block[k] = blocks_total;
        a.value.a[k] = args(i);
        const int64_t more = ceil_div(ts[i].n, kManyChunk);
        if (int64_t(blocks_total) + more >= int64_t(UINT32_MAX))
          throw ValueError("optimizer update: too many elements for one launch");
        blocks_total += uint32_t(more);
      }
      t.first_block[t.count] = blocks_total;
      if (!stage(a)) continue;  // refreshing: the graph launches it
      if (blocks_total == 0) continue;
      update_many_kernel<Args><<<blocks_total, kThreads, 0, stream(index_)>>>(t, a, step_skip_flag(index_), update);
      check_launch(name);
    }
  }

  // FP32 products, or bf16 operands with FP32 accumulation on the tensor cores (ops/precision.h).
  static cublasComputeType_t compute_type() {
    return matmul_precision() == Precision::BF16 ? CUBLAS_COMPUTE_32F_FAST_16BF : CUBLAS_COMPUTE_32F;
  }

  // A 1x1 kernel at stride 1 without padding reads each pixel once: x is its own im2col.
  static bool pointwise(const ConvGeometry& g) {
    return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
  }

  // Images per chunk so that each buffer (per_image floats per image) stays within the budget.
  static int64_t images_per_chunk(int64_t n, int64_t per_image, int64_t per_image2) {
    int64_t nb = std::min(n, kMaxBatch);
    nb = std::min(nb, kColumnsBudget / std::max<int64_t>(per_image, 1));
    if (per_image2 > 0) nb = std::min(nb, kColumnsBudget / per_image2);
    return std::max<int64_t>(nb, 1);
  }

  static IndexedAxis indexed_axis(const char* op, const Shape& data_shape, const Shape& index_shape, int64_t dim) {
    const int nd = int(index_shape.size());
    if (nd > kMaxDims || int(data_shape.size()) != nd)
      throw ValueError(std::string(op) + ": index " + to_string(index_shape) + " and data " + to_string(data_shape) +
                       " must have the same rank, at most 16");
    if (nd > 0 && (dim < 0 || dim >= nd))
      throw ValueError(std::string(op) + ": dim " + std::to_string(dim) + " out of range for rank " + std::to_string(nd));
    IndexedAxis a{};
    a.ndim = nd;
    a.dim = nd == 0 ? 0 : int(dim);
    a.limit = nd == 0 ? 1 : data_shape[dim];
    const Strides st = contiguous_strides(data_shape);
    for (int d = 0; d < nd; ++d) {
      a.size[d] = index_shape[d];
      a.data_stride[d] = st[d];
    }
    return a;
  }

  int index_;
  int sms_ = 1;
  int64_t max_blocks_ = 1;
};

}  // namespace

// One backend per device, created on first use (the caller checks the index range).
Backend& device_backend(int index) {
  constexpr int kMaxDevices = 64;
  static std::array<std::once_flag, kMaxDevices> once;
  static std::array<std::unique_ptr<CudaBackend>, kMaxDevices> backends;
  if (index < 0 || index >= kMaxDevices)
    throw DeviceError("cuda:" + std::to_string(index) + ": device index out of range");
  std::call_once(once[size_t(index)], [index] { backends[size_t(index)] = std::make_unique<CudaBackend>(index); });
  return *backends[size_t(index)];
}

}  // namespace plexus::cuda
