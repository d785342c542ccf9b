#pragma once
// The dispatch seam between the device-independent ops (forward + derivative, autograd)
// and the per-device kernels. The CPU backend lives in ops/cpu, the CUDA backend in ops/cuda
// (on the device runtime of core/cuda). Kernels write into `out` tensors the caller
// allocated; elementwise kernels accept any strides (inputs already broadcast to the output's
// shape). Raw pointers are the device's own memory. Device kernels run asynchronously: a bad
// index they meet is reported at the next synchronisation (see cuda/runtime.h).
#include <cstdint>

#include "tensor/tensor.h"

namespace plexus {

// The elementwise ops as lists, from which the enums below and math::visit (the runtime op to
// its formula) are generated; each op's formula, for both devices, is in ops/scalar_math.h.
#define PLEXUS_UNARY_OPS(X)                                                                  \
  X(Copy) X(Neg) X(Exp) X(Log) X(Sqrt) X(Abs) X(Sign) X(Relu) X(LeakyRelu) /*p0 slope*/      \
  X(Sigmoid) X(Tanh) X(Gelu) X(Softplus) /*p0 beta, p1 threshold*/ X(Pow) /*p0 exponent*/    \
  X(Clamp) /*p0 lo, p1 hi*/ X(AddScalar) /*p0*/ X(MulScalar) /*p0*/                          \
  X(Elu) /*p0 alpha, p1 scale*/ X(Silu) X(Mish) X(Hardswish) X(Hardsigmoid)

// Binary ops take a and b; the *Grad ops are derivatives fused with the incoming gradient g
// (a = g, b = the op's input x or output y).
#define PLEXUS_BINARY_OPS(X)                                                                 \
  X(Add) /*a + p0*b*/ X(Sub) X(Mul) X(Div) X(Maximum) X(Minimum)                             \
  X(Eq) X(Ne) X(Lt) X(Le) X(Gt) X(Ge) X(Prelu) /*a = x, b = the slope, broadcast*/           \
  X(ReluGrad) /*b = x*/ X(LeakyReluGrad) /*x, p0 slope*/ X(SigmoidGrad) /*b = y*/            \
  X(TanhGrad) /*b = y*/ X(GeluGrad) /*x*/ X(SoftplusGrad) /*x, p0 beta, p1 threshold*/       \
  X(PowGrad) /*x, p0 exponent*/ X(ClampGrad) /*x, p0 lo, p1 hi*/ X(AbsGrad) /*x*/            \
  X(EluGrad) /*x, p0 alpha, p1 scale*/ X(SiluGrad) /*x*/ X(MishGrad) /*x*/                   \
  X(HardswishGrad) /*x*/ X(HardsigmoidGrad) /*x*/

#define PLEXUS_ENUMERATOR(name) name,
enum class UnaryOp { PLEXUS_UNARY_OPS(PLEXUS_ENUMERATOR) };
enum class BinaryOp { PLEXUS_BINARY_OPS(PLEXUS_ENUMERATOR) };
#undef PLEXUS_ENUMERATOR

enum class ReduceOp { Sum, Max, Min };

// The recurrent cells of Backend::rnn_cell_forward / rnn_cell_backward.
enum class RnnCell { Lstm, Gru, Tanh };

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
  // `batch` products C_i = op(A_i) · op(B_i) + beta C_i with X_i = X + i * stride_x (stride 0:
  // one matrix for all). A GPU runs them as one launch; by default, one gemm after another.
  virtual void gemm_batched(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                            int64_t lda, int64_t stride_a, const float* b, int64_t ldb, int64_t stride_b,
                            float beta, float* c, int64_t ldc, int64_t stride_c, int64_t batch) {
    for (int64_t i = 0; i < batch; ++i)
      gemm(trans_a, trans_b, m, n, k, 1.f, a + i * stride_a, lda, b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
  }
  // Softmax over the middle dim of contiguous [outer, n, inner].
  virtual void softmax(float* out, const float* in, int64_t outer, int64_t n, int64_t inner,
                       bool log) = 0;
  virtual void softmax_backward(float* grad_in, const float* grad_out, const float* out,
                                int64_t outer, int64_t n, int64_t inner, bool log) = 0;
  // Fused log-softmax + NLL with label smoothing over contiguous logits [n, c].
  virtual void cross_entropy(float* loss, float* lse, const float* logits, const float* target,
                             int64_t n, int64_t c, float smoothing) = 0;
  // Row r's loss gradient is scale * grad_loss[r * grad_loss_stride]: stride 1 for per-row
  // losses, 0 for the single gradient of their sum (scale 1) or mean (scale 1/n).
  virtual void cross_entropy_backward(float* grad_logits, const float* grad_loss, int64_t grad_loss_stride,
                                      float scale, const float* logits, const float* lse,
                                      const float* target, int64_t n, int64_t c, float smoothing) = 0;
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
  // Geometry of one 2-D window op (convolution or pooling) over one image plane stack.
  struct ConvGeometry {
    int64_t c, h, w, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw;
  };
  // A whole convolution: x [n, c, h, w], weight [oc, c/groups, kh, kw], out [n, oc, oh, ow],
  // all contiguous; geo.c is the channels per group (c / groups). Each backend picks its own
  // lowering (the CPU one im2col + sgemm per image, the CUDA one batched over images).
  struct ConvProblem {
    int64_t n, c, oc, groups;
    ConvGeometry geo;
  };
  virtual void conv2d_forward(float* out, const float* x, const float* weight, const ConvProblem& p) = 0;
  // grad_x / grad_weight are zero-filled on entry, or null when not needed.
  virtual void conv2d_backward(float* grad_x, float* grad_weight, const float* grad_out, const float* x,
                               const float* weight, const ConvProblem& p) = 0;
  // A convolution with what follows it folded into its epilogue: the bias, then ReLU, then
  // 2x2 max pooling at stride 2 (out is then [n, oc, oh/2, ow/2] and argmax holds each
  // pooled cell's position in its conv output plane). The backward takes the gradient of
  // that output and the saved out / argmax (each null when unused), and fills grad_bias
  // [oc] too. Only a backend whose has_fused_conv2d() is true implements them (the CPU's
  // with AVX-512; the defaults throw); conv2d composes the same from the methods above
  // elsewhere.
  struct ConvEpilogue {
    bool relu = false, max_pool = false;
  };
  virtual bool has_fused_conv2d() const { return false; }
  virtual void conv2d_forward_fused(float* out, float* argmax, const float* x, const float* weight, const float* bias,
                                    const ConvEpilogue& e, const ConvProblem& p);
  // grad_x, grad_weight and grad_bias are written whole (never read), or null when not needed.
  virtual void conv2d_backward_fused(float* grad_x, float* grad_weight, float* grad_bias, const float* grad_out,
                                     const float* out, const float* argmax, const float* x, const float* weight,
                                     const ConvEpilogue& e, const ConvProblem& p);
  // Pooling over contiguous [planes, h, w] -> [planes, oh, ow] (dilation 1).
  virtual void max_pool2d(float* out, float* argmax, const float* in, int64_t planes,
                          const ConvGeometry& g) = 0;
  virtual void max_pool2d_backward(float* grad_in, const float* grad_out, const float* argmax,
                                   int64_t planes, const ConvGeometry& g) = 0;
  virtual void avg_pool2d(float* out, const float* in, int64_t planes, const ConvGeometry& g,
                          bool count_include_pad) = 0;
  virtual void avg_pool2d_backward(float* grad_in, const float* grad_out, int64_t planes,
                                   const ConvGeometry& g, bool count_include_pad) = 0;
  // Adaptive pooling over contiguous [planes, h, w] -> [planes, oh, ow] with PyTorch's windows
  // (math::adaptive_span): the max, with argmax as max_pool2d fills it, or, where argmax is
  // null, the average. The backward takes the same argmax (null for the average).
  struct AdaptiveGeometry {
    int64_t h, w, oh, ow;
  };
  virtual void adaptive_pool2d(float* out, float* argmax, const float* in, int64_t planes,
                               const AdaptiveGeometry& g) = 0;
  virtual void adaptive_pool2d_backward(float* grad_in, const float* grad_out, const float* argmax,
                                        int64_t planes, const AdaptiveGeometry& g) = 0;
  // Batch norm over a contiguous x viewed as [n, c, s] (s: the size of the dims after the
  // channel). Per channel: mean, biased variance and invstd = 1/sqrt(var + eps) of its n*s
  // values (sums in double).
  virtual void batch_norm_stats(float* mean, float* var, float* invstd, const float* x, int64_t n, int64_t c,
                                int64_t s, float eps) = 0;
  // y = (x - mean) * invstd * weight + bias, per channel; weight and bias may be null.
  virtual void batch_norm_apply(float* y, const float* x, const float* mean, const float* invstd, const float* weight,
                                const float* bias, int64_t n, int64_t c, int64_t s) = 0;
  // Per channel: sum_dy = Σ dy and sum_dy_xhat = Σ dy * (x - mean) * invstd.
  virtual void batch_norm_backward_reduce(float* sum_dy, float* sum_dy_xhat, const float* dy, const float* x,
                                          const float* mean, const float* invstd, int64_t n, int64_t c, int64_t s) = 0;
  // dx = weight * invstd * (dy - (sum_dy + xhat * sum_dy_xhat) / (n*s)) with statistics of the
  // batch (sums given), or weight * invstd * dy with fixed ones (sums null); weight may be null.
  virtual void batch_norm_backward_input(float* dx, const float* dy, const float* x, const float* mean,
                                         const float* invstd, const float* weight, const float* sum_dy,
                                         const float* sum_dy_xhat, int64_t n, int64_t c, int64_t s) = 0;

  // ---- sequence models: layer norm and the causal softmax of attention ----
  // Layer norm over the rows of contiguous x [rows, d]: per row mean and invstd =
  // 1/sqrt(biased var + eps) (sums in double), y = (x - mean) * invstd * weight + bias (weight and
  // bias [d] may be null).
  virtual void layer_norm(float* y, float* mean, float* invstd, const float* x, const float* weight, const float* bias,
                          int64_t rows, int64_t d, float eps) = 0;
  // dx = invstd * (dyw - mean(dyw) - xhat * mean(dyw * xhat)) per row, dyw = dy * weight
  // (weight may be null); the parameters' gradients are column sums the caller forms.
  virtual void layer_norm_backward(float* dx, const float* dy, const float* x, const float* mean, const float* invstd,
                                   const float* weight, int64_t rows, int64_t d) = 0;
  // Softmax over the rows of contiguous [rows, t] where row r is query r % t and sees keys
  // 0..r % t only: the later ones are left out of the sum and get exactly 0 (the derivative
  // is softmax_backward's, whose y factor keeps them 0).
  virtual void causal_softmax(float* out, const float* in, int64_t rows, int64_t t) = 0;

  // Fused attention (ops/attention.cpp), softmax(scale · q·kᵀ) · v per batch row without the
  // [t, s] scores: q and out [batch, t, d], k and v [batch, s, d], lse [batch, t] (each query's
  // log-sum-exp of its scaled scores, what backward recomputes the weights from, contiguous).
  // `causal` (t = s): query i sees keys j <= i; key_lengths, when not null, [batch /
  // rows_per_length]: batch row b sees its first ceil(max(key_lengths[b / rows_per_length], 1))
  // keys only. The backward writes dq, dk and dv whole (keys no query sees get 0).
  // Where a tensor's batch row b = n·heads + h starts, n·batch + h·head floats in, and how far
  // apart its rows are: dense [batch, rows, d] is {rows·d, 0, d} with heads 1; the heads of a
  // self-attention's packed projection [N, T, 3, H, d] are {T·3Hd, d, 3Hd}, so no head is copied
  // out. A backend without strided_attention() is only given dense tensors.
  struct AttentionStrides {
    int64_t batch, head, row;
  };
  struct AttentionProblem {
    int64_t batch, t, s, d;
    float scale;
    bool causal;
    const float* key_lengths;
    int64_t rows_per_length;
    int64_t heads;
    AttentionStrides q, kv, out;  // q and dq; k, v, dk and dv; out and dout
  };
  virtual void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                                 const AttentionProblem& p) = 0;
  virtual void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q, const float* k,
                                  const float* v, const float* out, const float* lse, const AttentionProblem& p) = 0;
  // The largest d the fused kernels take (the CUDA ones keep a row in registers); beyond it
  // scaled_dot_product_attention takes the unfused path.
  virtual int64_t max_fused_attention_dim() const { return INT64_MAX; }
  // Whether the fused kernels follow AttentionProblem's strides (else every tensor is dense).
  virtual bool strided_attention() const { return false; }

  // Fill `out` (any strides) from `gen`: the CPU draws every number from it; a device draws
  // one 64-bit key from it per call and runs a counter-based generator keyed by it.
  virtual void random_uniform(const Tensor& out, float lo, float hi, Generator& gen) = 0;
  virtual void random_normal(const Tensor& out, float mean, float std, Generator& gen) = 0;

  // Fused optimizer updates over n contiguous elements, one pass each (PyTorch's rules).
  struct SgdStep {
    float lr, momentum, dampening, weight_decay;
    bool nesterov, maximize;
    bool first;  // the momentum buffer is uninitialised: it becomes the gradient
  };
  // momentum_buffer is null when momentum == 0.
  virtual void sgd_step(float* param, const float* grad, float* momentum_buffer, int64_t n, const SgdStep& s) = 0;
  struct AdamStep {
    double lr, beta1, beta2, eps, weight_decay;
    bool decoupled;  // AdamW: decay the weights, not the gradient
    bool amsgrad, maximize;
    int64_t step;    // 1 on the first update (bias correction)
  };
  // The float constants both backends use, computed in double: m = b1*m + (1-b1)*d,
  // v = b2*v + (1-b2)*d², p *= decay (AdamW), p -= step * (m / (sqrt(v) + eps)), with PyTorch's
  // bias correction folded into step and eps.
  struct AdamScalars {
    float beta1, one_minus_beta1, beta2, one_minus_beta2, weight_decay, step, eps, decay;
  };
  static AdamScalars adam_scalars(const AdamStep& s);
  // max_exp_avg_sq is null unless amsgrad.
  virtual void adam_step(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, float* max_exp_avg_sq,
                         int64_t n, const AdamStep& s) = 0;

  // Several parameters' updates at once, steps[i] for ts[i] (one launch on a device instead of
  // one per parameter; this base runs them one by one). State pointers as the single-tensor
  // rules take them: SGD s0 = momentum buffer; Adam s0, s1, s2 = exp_avg, exp_avg_sq,
  // max_exp_avg_sq (null where unused).
  struct UpdateTensor {
    float* param;
    const float* grad;
    float *s0, *s1, *s2;
    int64_t n;
  };
  virtual void sgd_step_many(const std::vector<UpdateTensor>& ts, const std::vector<SgdStep>& steps);
  virtual void adam_step_many(const std::vector<UpdateTensor>& ts, const std::vector<AdamStep>& steps);

  // One time step of a recurrent layer over its n batch rows (ops/rnn_sequence.cpp runs the
  // sequence; the per-unit formulas are ops/recurrent_cells.h). Row r's pointers advance by
  // the given strides for gx, out, dout, dgx (rows of a batch-first [N, T, ...] sequence) and
  // are contiguous otherwise: gh and dgh [n, G*h], states [n, h], saved [n, 4*h].
  struct RnnStep {
    RnnCell cell;
    int64_t n, h;
    const float* gx;  // the step's input projection (with b_ih), G*h per row
    int64_t gx_stride;
    const float* gh;    // h_prev · W_hhᵀ
    const float* bias;  // b_hh [G*h]
    const float *h_prev, *c_prev;  // c: LSTM only
    float *h_next, *c_next;
    float* out;  // h_next again, into the output sequence
    int64_t out_stride;
    float* saved;  // what backward needs (null for RnnCell::Tanh)
  };
  virtual void rnn_cell_forward(const RnnStep& s) = 0;
  struct RnnStepGrad {
    RnnCell cell;
    int64_t n, h;
    const float* saved;
    const float *h_prev, *h_next, *c_prev, *c_next;
    float* dh;  // in: from later steps; out (GRU): z ⊙ dh, h_prev's gradient that bypasses W_hh
    const float* dout;  // the output sequence's gradient at this step
    int64_t dout_stride;
    float* dc;  // LSTM: in c_next's gradient, out c_prev's
    float* dgh;  // the pre-activations' gradient through gh (and b_hh)
    float* dgx;  // and through gx
    int64_t dgx_stride;
  };
  virtual void rnn_cell_backward(const RnnStepGrad& s) = 0;
};

Backend& backend(Device device);
Backend& cpu_backend();

}  // namespace plexus
