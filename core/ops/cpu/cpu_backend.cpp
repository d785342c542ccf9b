// CPU kernels: strided elementwise loops, reductions, matrix products (ops/cpu/sgemm.h or
// OpenBLAS), and the direct loops for softmax, losses, indexing, im2col and pooling.
#include <cblas.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "ops/backend.h"
#include "cuda/cuda.h"
#include "ops/cpu/attention.h"
#include "ops/cpu/batch_norm.h"
#include "ops/cpu/column_sums.h"
#include "ops/cpu/conv_grid.h"
#include "ops/cpu/gelu.h"
#include "ops/cpu/layer_norm.h"
#include "ops/cpu/linear_activation.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/rnn_cells.h"
#include "ops/cpu/sbgemm.h"
#include "ops/cpu/sgemm.h"
#include "ops/scalar_math.h"
#include "util/error.h"
#include "util/out_of_memory.h"
#include "util/parallel.h"
#include "util/threads.h"

namespace plexus {
namespace {

using cpu::for_each_run;
constexpr float kInf = std::numeric_limits<float>::infinity();

// Elementwise loops over this many elements or more are split across the thread pool by
// their outermost dim (below it, waking a thread costs more than it saves).
constexpr int64_t kParallelElements = 1 << 15;
// Elementwise loops and the optimizers' updates are cut into this many chunks a thread, so a
// thread on a slower core takes fewer of them.
constexpr int kChunksPerThread = 4;

// Softmax of the n values x[j * stride] into y (the same positions).
void softmax_run(float* y, const float* x, int64_t n, int64_t stride, bool log) {
  float m = -kInf;
  for (int64_t j = 0; j < n; ++j) m = std::max(m, x[j * stride]);
  if (m == -kInf) m = 0.f;  // all -inf: avoid inf - inf
  double s = 0;
  for (int64_t j = 0; j < n; ++j) s += std::exp(double(x[j * stride] - m));
  if (log) {
    // (x - m) - log(s), not x - (m + log(s)): adding log(s) to a large m rounds it away.
    const float log_s = float(std::log(s));
    for (int64_t j = 0; j < n; ++j) y[j * stride] = (x[j * stride] - m) - log_s;
  } else {
    const float inv = float(1.0 / s);
    for (int64_t j = 0; j < n; ++j) y[j * stride] = std::exp(x[j * stride] - m) * inv;
  }
}

template <size_t N, class Inner>
void parallel_runs(const Shape& shape, const std::array<float*, N>& ptrs, const std::array<const int64_t*, N>& strides,
                   Inner&& inner) {
  const int64_t total = numel(shape);
  size_t d = 0;
  while (d < shape.size() && shape[d] == 1) ++d;
  // strides[0] is the output's: one with stride 0 along d (a reduction's slots) stays serial.
  if (total < kParallelElements || d == shape.size() || strides[0][d] == 0)
    return for_each_run<N>(shape, ptrs, strides, inner);
  const int64_t per_row = total / shape[d];
  parallel_for(shape[d], std::max<int64_t>(1, kParallelElements / 2 / per_row), [&](int64_t b, int64_t e) {
    Shape part = shape;
    part[d] = e - b;
    std::array<float*, N> p = ptrs;
    for (size_t i = 0; i < N; ++i) p[i] += b * strides[i][d];
    for_each_run<N>(part, p, strides, inner);
  }, kChunksPerThread);
}

// Serial maps draw random numbers in element order.
template <bool Parallel = true, class F>
void map1(const Tensor& out, const Tensor& a, F f) {
  auto inner = [&](const std::array<float*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    // A local copy keeps f's parameters in registers, invariant in the loop: GCC unswitches a
    // branch on them (Pow's p0 == 2) and vectorises each side.
    const F fn = f;
    float* o = p[0];
    const float* x = p[1];
    if (s[0] == 1 && s[1] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = fn(x[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * s[0]] = fn(x[i * s[1]]);
    }
  };
  const std::array<float*, 2> ptrs{out.data(), a.data()};
  const std::array<const int64_t*, 2> strides{out.strides().data(), a.strides().data()};
  if constexpr (Parallel) parallel_runs<2>(out.shape(), ptrs, strides, inner);
  else for_each_run<2>(out.shape(), ptrs, strides, inner);
}

template <class F>
void map2(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  parallel_runs<3>(out.shape(), {out.data(), a.data(), b.data()},
                   {out.strides().data(), a.strides().data(), b.strides().data()},
                   [&](const std::array<float*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
                     const F fn = f;  // as in map1 (Add's p0 == 1)
                     float* o = p[0];
                     const float* x = p[1];
                     const float* y = p[2];
                     if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
                       for (int64_t i = 0; i < n; ++i) o[i] = fn(x[i], y[i]);
                     } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
                       const float yv = *y;
                       for (int64_t i = 0; i < n; ++i) o[i] = fn(x[i], yv);
                     } else {
                       for (int64_t i = 0; i < n; ++i) o[i * s[0]] = fn(x[i * s[1]], y[i * s[2]]);
                     }
                   });
}

// out = f(inputs) by `run(out, inputs..., n)`, a kernel over n contiguous elements (one compiled
// for this CPU's vectors: ops/cpu/gelu.h); strided runs go element by element.
template <size_t N, class Run>
void map_runs(const std::array<const Tensor*, N>& t, Run run) {
  std::array<float*, N> ptrs;
  std::array<const int64_t*, N> strides;
  for (size_t i = 0; i < N; ++i) {
    ptrs[i] = t[i]->data();
    strides[i] = t[i]->strides().data();
  }
  parallel_runs<N>(t[0]->shape(), ptrs, strides,
                   [&](const std::array<float*, N>& p, const std::array<int64_t, N>& s, int64_t n) {
                     if (std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 1; }))
                       return std::apply([&](auto... q) { run(q..., n); }, p);
                     for (int64_t i = 0; i < n; ++i) {
                       std::array<float*, N> at = p;
                       for (size_t k = 0; k < N; ++k) at[k] += i * s[k];
                       std::apply([&](auto... q) { run(q..., int64_t(1)); }, at);
                     }
                   });
}

class CpuBackend final : public Backend {
 public:
  void fill(const Tensor& out, float v) override {
    map1(out, out, [v](float) { return v; });
  }

  // One loop per op with its formula (ops/scalar_math.h) inlined.
  void unary(UnaryOp op, const Tensor& out, const Tensor& a, float p0, float p1) override {
    if (op == UnaryOp::Gelu) return map_runs<2>({&out, &a}, cpu::gelu);
    math::visit(op, [&]<UnaryOp Op>() {
      map1(out, a, [p0, p1](float x) { return math::unary<Op>(x, p0, p1); });
    });
  }

  void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, float p0, float p1) override {
    if (op == BinaryOp::GeluGrad) return map_runs<3>({&out, &a, &b}, cpu::gelu_backward);
    math::visit(op, [&]<BinaryOp Op>() {
      map2(out, a, b, [p0, p1](float x, float y) { return math::binary<Op>(x, y, p0, p1); });
    });
  }

  void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) override {
    for_each_run<4>(out.shape(), {out.data(), cond.data(), a.data(), b.data()},
                    {out.strides().data(), cond.strides().data(), a.strides().data(), b.strides().data()},
                    [](const std::array<float*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
                      for (int64_t i = 0; i < n; ++i)
                        p[0][i * s[0]] = p[1][i * s[1]] != 0.f ? p[2][i * s[2]] : p[3][i * s[3]];
                    });
  }

  void reduce(ReduceOp op, const Tensor& out, const Tensor& in) override {
    if (op == ReduceOp::Sum) return reduce_sum(out, in);
    const float init = op == ReduceOp::Max ? -kInf : kInf;
    fill(out, init);  // out has stride 0 on reduced dims: fills each slot (repeatedly; cheap)
    auto run = [&](auto combine) {
      for_each_run<2>(in.shape(), {out.data(), in.data()}, {out.strides().data(), in.strides().data()},
                      [&](const std::array<float*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                        float* o = p[0];
                        const float* x = p[1];
                        if (s[0] == 0) {  // reducing along the run: keep the accumulator in a register
                          double acc = *o;
                          for (int64_t i = 0; i < n; ++i) acc = combine(acc, double(x[i * s[1]]));
                          *o = float(acc);
                        } else {
                          for (int64_t i = 0; i < n; ++i) o[i * s[0]] = float(combine(double(o[i * s[0]]), double(x[i * s[1]])));
                        }
                      });
    };
    switch (op) {
      case ReduceOp::Sum: break;  // reduce_sum
      case ReduceOp::Max: return run([](double acc, double v) { return std::isnan(v) || v > acc ? v : acc; });
      case ReduceOp::Min: return run([](double acc, double v) { return std::isnan(v) || v < acc ? v : acc; });
    }
  }

  // Sums accumulate in double per output element and are rounded to float once at the end
  // (rounding the running sum after every element drifts by ~1% over a million rows). The
  // distinct output elements are reached through the dims where `out` has a nonzero stride,
  // so an empty input still writes zeros. A large input is split along its outermost dim,
  // each chunk summing into its own accumulators, added up after (a bias gradient sums a
  // whole batch of feature maps into a few numbers).
  static void reduce_sum(const Tensor& out, const Tensor& in) {
    float* const base = out.data();
    Shape kept;
    Strides kept_strides;
    int64_t span = 1;
    for (int64_t d = 0; d < in.dim(); ++d) {
      if (out.strides()[d] == 0 || in.shape()[d] <= 1) continue;
      kept.push_back(in.shape()[d]);
      kept_strides.push_back(out.strides()[d]);
      span += (in.shape()[d] - 1) * out.strides()[d];
    }
    size_t d = 0;
    while (d < in.shape().size() && in.shape()[d] == 1) ++d;
    const int64_t total = in.numel(), rows = d < in.shape().size() ? in.shape()[d] : 1;
    const int parts = total < kParallelElements ? 1 : parallel_parts(rows, std::max<int64_t>(1, kParallelElements / 2 / std::max<int64_t>(1, total / rows)));
    thread_local std::vector<double> acc_buffer;  // reused: a training step allocates nothing here
    grow_scratch(acc_buffer, size_t(span) * size_t(parts), "a sum's partial results");
    std::fill_n(acc_buffer.begin(), size_t(span) * size_t(parts), 0.0);
    double* const acc = acc_buffer.data();  // the caller's buffer, also for the pool's threads
    // A bias gradient's shape: `in` contiguous, summed over its leading dims into its trailing
    // ones, which `out` lays out as `in` does: column sums of [rows, cols], vectorised.
    bool columns = in.is_contiguous() && d < in.shape().size() && out.strides()[d] == 0, reduced = false;
    int64_t cols = 1;
    for (size_t i = in.shape().size() - 1; columns && i > d; --i) {
      if (in.shape()[i] == 1) continue;
      if (out.strides()[i] == 0) reduced = true;
      else if (reduced || out.strides()[i] != in.strides()[i]) columns = false;
      else cols *= in.shape()[i];
    }
    columns = columns && cols >= 16;
    auto sum_rows = [&](int chunk, int64_t begin, int64_t end) {
      double* const chunk_acc = acc + size_t(chunk) * size_t(span);
      if (columns) {
        const int64_t row = in.strides()[d];  // floats per index of dim d
        return cpu::add_column_sums(chunk_acc, in.data() + begin * row, (end - begin) * row / cols, cols, cols);
      }
      Shape part = in.shape();
      float* src = in.data();
      float* dst = base;
      if (d < part.size()) {
        part[d] = end - begin;
        src += begin * in.strides()[d];
        dst += begin * out.strides()[d];
      }
      for_each_run<2>(part, {dst, src}, {out.strides().data(), in.strides().data()},
                      [&](const std::array<float*, 2>& p, const std::array<int64_t, 2>& st, int64_t n) {
                        double* a = chunk_acc + (p[0] - base);
                        const float* x = p[1];
                        if (st[0] == 0) {  // reducing along the run: four chains, not one long one
                          double r[4] = {0, 0, 0, 0};
                          int64_t i = 0;
                          for (; i + 4 <= n; i += 4)
                            for (int j = 0; j < 4; ++j) r[j] += double(x[(i + j) * st[1]]);
                          for (; i < n; ++i) r[0] += double(x[i * st[1]]);
                          *a += (r[0] + r[1]) + (r[2] + r[3]);
                        } else {
                          for (int64_t i = 0; i < n; ++i) a[i * st[0]] += double(x[i * st[1]]);
                        }
                      });
    };
    if (parts > 1) parallel_for_chunks(rows, (rows + parts - 1) / parts, sum_rows);
    else sum_rows(0, 0, rows);
    for (int c = 1; c < parts; ++c)
      for (int64_t i = 0; i < span; ++i) acc[i] += acc[c * span + i];
    for_each_run<1>(kept, {base}, {kept_strides.data()},
                    [&](const std::array<float*, 1>& p, const std::array<int64_t, 1>& st, int64_t n) {
                      const double* a = acc + (p[0] - base);
                      for (int64_t i = 0; i < n; ++i) p[0][i * st[0]] = float(a[i * st[0]]);
                    });
  }

  void arg_reduce(bool is_max, float* out, const float* in, int64_t outer, int64_t n, int64_t inner) override {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const float* x = in + o * n * inner + i;
        int64_t best = 0;
        for (int64_t j = 1; j < n; ++j) {
          const float v = x[j * inner], b = x[best * inner];
          if (std::isnan(b)) break;
          if (std::isnan(v) || (is_max ? v > b : v < b)) best = j;
        }
        out[o * inner + i] = float(best);
      }
  }

  // Products of at least kParallelGemmFlops are split into blocks of C's columns (or rows),
  // one run of blocks per pool thread (one block a chunk for our kernel's wide products),
  // each a single-threaded product: ours on AVX-512 or AVX2 CPUs (ops/cpu/sgemm.h), else
  // OpenBLAS's, whose own threads stay idle.
  static constexpr double kParallelGemmFlops = 1 << 20;

  // Whether the products are ours (AVX-512 or AVX2), which OpenBLAS's thread count leaves alone.
  static bool ours() { return cpu::own_sgemm_enabled() || cpu::avx2_sgemm_enabled(); }

  // One product on the calling thread (k > 0): ours in bf16 or FP32 where enabled (own: the
  // AVX-512 one), else OpenBLAS's.
  static void product_here(bool bf16, bool own, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    if (bf16)
      return cpu::own_sbgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cpu::own_sgemm_thread_workspace());
    if (own) return cpu::own_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cpu::own_sgemm_thread_workspace());
    if (cpu::avx2_sgemm_enabled())
      return cpu::avx2_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cpu::avx2_sgemm_thread_workspace());
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m), int(n), int(k),
                alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
  }

  void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
            const float* b, int64_t ldb, float beta, float* c, int64_t ldc) override {
    gemm_with(cpu::bf16_products(), ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }

  // gemm in bfloat16 (cpu::own_sbgemm) when bf16, else in FP32. The precision is the calling
  // thread's (ops/precision.h): a loop over the pool decides before it starts and passes it.
  void gemm_with(bool bf16, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {  // BLAS leaves C untouched when k = 0; the product is then beta*C
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
      return;
    }
    const bool own = cpu::own_sgemm_enabled();
    auto product = [&](int64_t mm, int64_t nn, const float* aa, const float* bb, float* cc) {
      product_here(bf16, own, ta, tb, mm, nn, k, alpha, aa, lda, bb, ldb, beta, cc, ldc);
    };
    // Someone who raised OpenBLAS's thread count (a benchmark comparing it) gets its threads.
    if (2.0 * double(m) * double(n) * double(k) < kParallelGemmFlops || (!ours() && openblas_get_num_threads() > 1))
      return product(m, n, a, b, c);
    // Split the longer side of C: a thread of a column split reads all of op(A) and its columns
    // of op(B), of a row split its rows of op(A) and all of op(B). A weight gradient over 8192
    // rows (m = 192, n = 64) thus reads each half of the gradient once, not all of it twice.
    // Blocks are whole register tiles (AVX-512: 32 columns or 24 rows; AVX2: 16 columns or 24
    // rows; OpenBLAS: 16).
    const bool by_cols = n >= m;
    const int64_t block = by_cols ? (own ? 32 : 16) : ours() ? 24 : 16;
    const int64_t len = by_cols ? n : m, blocks = (len + block - 1) / block;
    if (own && !bf16 && by_cols && blocks > num_threads() * cpu::kOwnSgemmPackAPanels) {
      // Wide enough that each thread packs op(A) anyway: it does so once, for all the chunks
      // of columns it takes, so each 32-column panel can be a chunk of its own at no extra
      // packing, and the product runs at the pace of both cores: whoever finishes first waits
      // for at most one panel of the other (a tall weight gradient's panel takes ~50 µs).
      static std::atomic<uint64_t> products{0};
      const uint64_t id = ++products;
      return parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
        const int64_t j0 = b0 * block, j1 = std::min(n, b1 * block);
        const float* packed = cpu::own_sgemm_thread_packed_whole_a(id, ta, a, lda, m, k);
        cpu::own_sgemm_packed(tb, m, j1 - j0, k, alpha, packed, tb ? b + j0 * ldb : b + j0, ldb, beta, c + j0, ldc,
                              cpu::own_sgemm_thread_workspace());
      }, int(std::min<int64_t>(blocks, kMaxParts)));
    }
    parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
      const int64_t i0 = b0 * block, i1 = std::min(len, b1 * block);
      if (by_cols)  // C[:, i0:i1] = op(A) · op(B)[:, i0:i1]
        product(m, i1 - i0, a, tb ? b + i0 * ldb : b + i0, c + i0);
      else  // C[i0:i1, :] = op(A)[i0:i1, :] · op(B)
        product(i1 - i0, n, ta ? a + i0 : a + i0 * lda, b, c + i0 * ldc);
    });
  }

  void softmax(float* out, const float* in, int64_t outer, int64_t n, int64_t inner, bool log) override {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) softmax_run(out + o * n * inner + i, in + o * n * inner + i, n, inner, log);
  }

  void softmax_backward(float* gin, const float* gout, const float* out, int64_t outer, int64_t n, int64_t inner,
                        bool log) override {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        double s = 0;
        if (log) {  // d/dx log_softmax: g - softmax * sum(g)
          for (int64_t j = 0; j < n; ++j) s += gout[base + j * inner];
          for (int64_t j = 0; j < n; ++j)
            gin[base + j * inner] = gout[base + j * inner] - std::exp(out[base + j * inner]) * float(s);
        } else {  // d/dx softmax: y * (g - sum(g * y))
          for (int64_t j = 0; j < n; ++j) s += double(gout[base + j * inner]) * out[base + j * inner];
          for (int64_t j = 0; j < n; ++j)
            gin[base + j * inner] = out[base + j * inner] * (gout[base + j * inner] - float(s));
        }
      }
  }

  void cross_entropy(float* loss, float* lse, const float* logits, const float* target, int64_t n, int64_t c,
                     float smoothing) override {
    for (int64_t r = 0; r < n; ++r) {
      const float* x = logits + r * c;
      float m = -kInf;
      for (int64_t j = 0; j < c; ++j) m = std::max(m, x[j]);
      // exp in float (x - m <= 0, so no overflow; 1 ulp), summed in double: a double exp
      // per logit cost more than the rest of the loss.
      double s = 0, sum_x = 0;
      for (int64_t j = 0; j < c; ++j) {
        s += double(std::exp(x[j] - m));
        sum_x += x[j];
      }
      const double l = m + std::log(s);
      lse[r] = float(l);
      const int64_t t = int64_t(target[r]);
      loss[r] = math::cross_entropy_loss(l, x[t], sum_x, c, smoothing);
    }
  }

  void cross_entropy_backward(float* gx, const float* gloss, int64_t gloss_stride, float scale, const float* logits,
                              const float* lse, const float* target, int64_t n, int64_t c, float smoothing) override {
    const float off = smoothing / float(c);
    for (int64_t r = 0; r < n; ++r) {
      const float* x = logits + r * c;
      float* g = gx + r * c;
      const float gr = scale * gloss[r * gloss_stride];
      for (int64_t j = 0; j < c; ++j) g[j] = gr * (std::exp(x[j] - lse[r]) - off);
      g[int64_t(target[r])] -= gr * (1.f - smoothing);
    }
  }

  void index_select(float* out, const float* in, const float* index, int64_t outer, int64_t in_n, int64_t idx_n,
                    int64_t inner) override {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < idx_n; ++j)
        std::copy_n(in + (o * in_n + int64_t(index[j])) * inner, inner, out + (o * idx_n + j) * inner);
  }

  void index_add(float* out, const float* src, const float* index, int64_t outer, int64_t out_n, int64_t idx_n,
                 int64_t inner) override {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < idx_n; ++j) {
        float* dst = out + (o * out_n + int64_t(index[j])) * inner;
        const float* s = src + (o * idx_n + j) * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] += s[i];
      }
  }

  // For gather/scatter: walk every index element, map its coordinate to `in`'s offset with
  // the indexed dim replaced by the index value.
  template <class F>
  static void walk_index(const Shape& in_shape, const Shape& idx_shape, int64_t dim, const float* index, F f) {
    // Usually the index spans `in` outside dim (a recurrent layer's per-example flips): then the
    // offsets follow from [outer, dim, inner] alone, without a coordinate per element.
    bool spans = !in_shape.empty();
    for (size_t d = 0; spans && d < in_shape.size(); ++d) spans = int64_t(d) == dim || idx_shape[d] == in_shape[d];
    if (spans) {
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < dim; ++d) outer *= in_shape[size_t(d)];
      for (size_t d = size_t(dim) + 1; d < in_shape.size(); ++d) inner *= in_shape[d];
      const int64_t in_n = in_shape[size_t(dim)], idx_n = idx_shape[size_t(dim)];
      int64_t e = 0;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < idx_n; ++j)
          for (int64_t i = 0; i < inner; ++i, ++e) f(e, (o * in_n + int64_t(index[e])) * inner + i);
      return;
    }
    const Strides in_st = contiguous_strides(in_shape);
    const int64_t total = numel(idx_shape);
    const int nd = int(idx_shape.size());
    std::vector<int64_t> coord(nd, 0);
    for (int64_t e = 0; e < total; ++e) {
      int64_t off = 0;
      for (int d = 0; d < nd; ++d) off += (d == dim ? int64_t(index[e]) : coord[d]) * in_st[d];
      f(e, off);
      for (int d = nd - 1; d >= 0; --d) {
        if (++coord[d] < idx_shape[d]) break;
        coord[d] = 0;
      }
    }
  }

  void gather(float* out, const float* in, const Shape& in_shape, const float* index, const Shape& index_shape,
              int64_t dim) override {
    walk_index(in_shape, index_shape, dim, index, [&](int64_t e, int64_t off) { out[e] = in[off]; });
  }

  void scatter_add(float* out, const Shape& out_shape, const float* src, const float* index,
                   const Shape& index_shape, int64_t dim) override {
    walk_index(out_shape, index_shape, dim, index, [&](int64_t e, int64_t off) { out[off] += src[e]; });
  }

  // The outputs x in [lo, hi) whose input column x*sw - pw + kj*dw falls inside the image.
  static std::pair<int64_t, int64_t> valid_columns(const ConvGeometry& g, int64_t kj) {
    const int64_t shift = kj * g.dw - g.pw;  // input column of output 0
    const int64_t lo = shift >= 0 ? 0 : (-shift + g.sw - 1) / g.sw;
    const int64_t hi = g.w - shift <= 0 ? 0 : std::min(g.ow, (g.w - 1 - shift) / g.sw + 1);
    return {std::min(lo, hi), hi};
  }

  // Rows of an im2col are short (24 floats in LeNet): moves inlined eight at a time beat
  // a call to memmove per row.
  static void copy_row(float* dst, const float* src, int64_t n) {
    int64_t x = 0;
    for (; x + 8 <= n; x += 8)
      for (int j = 0; j < 8; ++j) dst[x + j] = src[x + j];
    for (; x < n; ++x) dst[x] = src[x];
  }

  // One image [c, h, w] into columns [c*kh*kw, oh*ow], a row segment at a time (a straight
  // copy at stride 1); col2im accumulates back.
  static void im2col(float* cols, const float* img, const ConvGeometry& g) {
    const int64_t plane = g.oh * g.ow;
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t ki = 0; ki < g.kh; ++ki)
        for (int64_t kj = 0; kj < g.kw; ++kj) {
          float* row = cols + ((c * g.kh + ki) * g.kw + kj) * plane;
          const auto [lo, hi] = valid_columns(g, kj);
          const int64_t shift = kj * g.dw - g.pw;
          for (int64_t y = 0; y < g.oh; ++y) {
            const int64_t iy = y * g.sh - g.ph + ki * g.dh;
            float* dst = row + y * g.ow;
            if (iy < 0 || iy >= g.h) {
              std::fill_n(dst, g.ow, 0.f);
              continue;
            }
            const float* src = img + (c * g.h + iy) * g.w + shift;
            std::fill_n(dst, lo, 0.f);
            if (g.sw == 1) copy_row(dst + lo, src + lo, hi - lo);
            else
              for (int64_t x = lo; x < hi; ++x) dst[x] = src[x * g.sw];
            std::fill(dst + hi, dst + g.ow, 0.f);
          }
        }
  }

  static void col2im(float* img, const float* cols, const ConvGeometry& g) {
    const int64_t plane = g.oh * g.ow;
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t ki = 0; ki < g.kh; ++ki)
        for (int64_t kj = 0; kj < g.kw; ++kj) {
          const float* row = cols + ((c * g.kh + ki) * g.kw + kj) * plane;
          const auto [lo, hi] = valid_columns(g, kj);
          const int64_t shift = kj * g.dw - g.pw;
          for (int64_t y = 0; y < g.oh; ++y) {
            const int64_t iy = y * g.sh - g.ph + ki * g.dh;
            if (iy < 0 || iy >= g.h) continue;
            float* dst = img + (c * g.h + iy) * g.w + shift;
            const float* src = row + y * g.ow;
            for (int64_t x = lo; x < hi; ++x) dst[x * g.sw] += src[x];
          }
        }
  }

  // Images are spread over the pool. With our AVX-512 product each image and group is laid out
  // as a grid (ops/cpu/conv_grid.h) that the product reads in place, with the epilogue folded
  // into the copy out of it (conv2d_*_fused); otherwise im2col into the thread's own buffer and
  // one single-threaded sgemm per image and group.
  // Per-thread buffers, one per Slot, reused across calls (a steady step allocates none). A
  // call's own tables (tap offsets, transposed weights) are the calling thread's; the pool's
  // workers read them while it waits in the loop.
  template <int Slot, class T = float>
  static T* thread_buffer(int64_t size) {
    thread_local std::vector<T> buffer;
    grow_scratch(buffer, size_t(size), "a convolution's buffer");
    return buffer.data();
  }
  enum BufferSlot {
    kCols, kConvOut, kWeightT, kOffsets, kBackOffsets, kGrid, kBackGrid, kGridRows, kGradRows, kWeightGradT
  };

  static cpu::ConvShape conv_shape(const ConvGeometry& g) {
    return {g.c, g.h, g.w, g.kh, g.kw, g.oh, g.ow, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw};
  }

  // The 2x2 stride-2 pooling of a conv output plane [oh, ow].
  static ConvGeometry pool_of(const ConvGeometry& g) { return {1, g.oh, g.ow, 2, 2, g.oh / 2, g.ow / 2, 2, 2, 0, 0, 1, 1}; }

  // Each chunk of images but the first writes its weight and bias gradients into a slot of
  // its own ([weight | bias], thread-local, reused, never cleared), added into the first's
  // after, in chunk order (the same sums whichever thread ran which chunk). Only the slots of
  // chunks that ran are added: a loop that runs serially (nested, or the pool busy) runs
  // chunk 0 over every image and leaves the other slots as they were.
  class GradSlots {
   public:
    GradSlots(int parts, float* gw, int64_t wsize, float* gb, int64_t bsize)
        : parts_(parts), gw_(gw), gb_(gb), wsize_(gw ? wsize : 0), bsize_(gb ? bsize : 0) {
      if (parts < 2 || wsize_ + bsize_ == 0) return;
      thread_local std::vector<float> slots;
      thread_local std::vector<unsigned char> ran;
      const size_t size = size_t(parts - 1) * size_t(wsize_ + bsize_);
      grow_scratch(slots, size, "a convolution's per-thread gradients");
      ran.assign(size_t(parts), 0);
      slots_ = slots.data();
      ran_ = ran.data();
    }
    // Chunk `chunk`'s weight and bias gradients; each chunk asks once, on the thread running it.
    std::pair<float*, float*> chunk(int chunk) const {
      if (chunk == 0 || !slots_) return {gw_, gb_};
      ran_[chunk] = 1;
      return {gw_ ? slot(chunk) : nullptr, gb_ ? slot(chunk) + wsize_ : nullptr};
    }
    void sum() const {
      if (!slots_) return;
      parallel_for(wsize_, 4096, [&](int64_t begin, int64_t end) {
        for (int c = 1; c < parts_; ++c)
          if (ran_[c])
            for (int64_t j = begin; j < end; ++j) gw_[j] += slot(c)[j];
      });
      for (int c = 1; c < parts_; ++c)
        if (ran_[c])
          for (int64_t j = 0; j < bsize_; ++j) gb_[j] += slot(c)[wsize_ + j];
    }

   private:
    float* slot(int chunk) const { return slots_ + (chunk - 1) * (wsize_ + bsize_); }
    int parts_;
    float *gw_, *gb_, *slots_ = nullptr;
    unsigned char* ran_ = nullptr;
    int64_t wsize_, bsize_;
  };

  // The fused convolutions split a batch into this many chunks per thread, taken by whichever
  // thread is free: a worker that wakes late or shares its core then delays the loop by a few
  // images, not by half the batch. A backward chunk has a gradient slot to sum after, so
  // the backward pass takes fewer, larger chunks than the forward.
  static constexpr int kConvForwardChunksPerThread = 16;
  static constexpr int kConvBackwardChunksPerThread = 8;

  bool has_fused_conv2d() const override { return cpu::own_sgemm_enabled(); }

  // bias[o] added to each of `planes` planes of `plane` cells, then max(·, 0) when relu (NaN
  // stays NaN, as relu does): the epilogue the FP32 kernels fold into their product.
  static void add_bias_relu(float* out, const float* bias, int64_t planes, int64_t plane, bool relu) {
    for (int64_t o = 0; o < planes; ++o, out += plane) {
      const float b = bias ? bias[o] : 0.f;
      for (int64_t q = 0; q < plane; ++q) {
        const float v = out[q] + b;
        out[q] = relu && v < 0.f ? 0.f : v;
      }
    }
  }

  void conv2d_forward_fused(float* out, float* argmax, const float* x, const float* w, const float* bias,
                            const ConvEpilogue& e, const ConvProblem& p) override {
    const ConvGeometry& g = p.geo;
    const ConvGeometry pool = pool_of(g);
    const int64_t og = p.oc / p.groups, kdim = g.c * g.kh * g.kw, plane = g.oh * g.ow;
    const int64_t out_plane = e.max_pool ? pool.oh * pool.ow : plane;
    const cpu::ConvShape shape = conv_shape(g);
    // In bf16 an unpadded stride-1 convolution reads its image as FP32 does (conv_forward_image_bf16);
    // any other is im2col and our bf16 product (gemm_with), with the epilogue after.
    const bool bf16 = cpu::bf16_products();
    const bool by_grid = !bf16 && cpu::conv_by_grid(shape);
    const bool bf16_cols = bf16 && cpu::conv_by_grid(shape);
    const cpu::ConvGrid grid = cpu::conv_grid(shape);
    int64_t* offsets = by_grid ? thread_buffer<kOffsets, int64_t>(kdim) : nullptr;
    float* wt = by_grid ? thread_buffer<kWeightT>(p.oc * kdim) : nullptr;
    if (by_grid) {
      cpu::conv_grid_offsets(offsets, shape, grid);
      for (int64_t grp = 0; grp < p.groups; ++grp) cpu::transpose_rows(wt + grp * og * kdim, w + grp * og * kdim, og, kdim);
    }
    parallel_for(p.n, 1, [&](int64_t begin, int64_t end) {
      // Pooled: the conv output of one image lands here (in cache) and is pooled from it.
      float* conv_out = e.max_pool ? thread_buffer<kConvOut>(og * plane) : nullptr;
      float* image = by_grid ? thread_buffer<kGrid>(grid.floats) : nullptr;
      float* rows = by_grid ? thread_buffer<kGridRows>(og * grid.columns) : nullptr;
      float* cols = bf16_cols ? thread_buffer<kCols>(kdim * plane) : nullptr;
      for (int64_t i = begin; i < end; ++i)
        for (int64_t grp = 0; grp < p.groups; ++grp) {
          const int64_t first = (i * p.oc + grp * og) * out_plane;
          float* dest = e.max_pool ? conv_out : out + first;
          const float* img = x + (i * p.c + grp * g.c) * g.h * g.w;
          const float* b = bias ? bias + grp * og : nullptr;
          if (bf16_cols) {
            im2col(cols, img, g);
            gemm_with(true, false, false, og, plane, kdim, 1.f, w + grp * og * kdim, kdim, cols, plane, 0.f, dest, plane);
            if (b || e.relu) add_bias_relu(dest, b, og, plane, e.relu);
          } else if (bf16) {
            cpu::conv_forward_image_bf16(dest, img, w + grp * og * kdim, og, shape, b, e.relu,
                                         cpu::own_sgemm_thread_workspace());
          } else if (by_grid) {
            cpu::to_conv_grid(image, img, shape, grid);
            cpu::conv_forward_grid(rows, image, offsets, wt + grp * og * kdim, og, grid);
            cpu::grid_to_plane(dest, rows, og, shape, grid, b, e.relu);
          } else {
            cpu::conv_forward_image(dest, img, w + grp * og * kdim, og, shape, b, e.relu,
                                    cpu::own_sgemm_thread_workspace());
          }
          if (e.max_pool) cpu::max_pool_2x2(out + first, argmax + first, conv_out, og, g.oh, g.ow);
        }
    }, kConvForwardChunksPerThread);
  }

  void conv2d_backward_fused(float* gx, float* gw, float* gb, const float* gout, const float* out,
                             const float* argmax, const float* x, const float* w, const ConvEpilogue& e,
                             const ConvProblem& p) override {
    const ConvGeometry& g = p.geo;
    const ConvGeometry pool = pool_of(g);
    const int64_t og = p.oc / p.groups, kdim = g.c * g.kh * g.kw, plane = g.oh * g.ow;
    const int64_t out_plane = e.max_pool ? pool.oh * pool.ow : plane;
    if (p.n == 0) {  // no image writes them
      if (gw) std::fill(gw, gw + p.oc * kdim, 0.f);
      if (gb) std::fill(gb, gb + p.oc, 0.f);
      return;
    }
    const cpu::ConvShape shape = conv_shape(g);
    const bool bf16 = cpu::bf16_products();  // as the forward
    const bool by_grid = !bf16 && cpu::conv_by_grid(shape);
    const bool bf16_cols = bf16 && cpu::conv_by_grid(shape);
    const cpu::ConvGrid grid = cpu::conv_grid(shape);
    const bool gw_grid = gw && by_grid;
    int64_t* offsets = gw_grid ? thread_buffer<kOffsets, int64_t>(kdim) : nullptr;
    if (gw_grid) cpu::conv_grid_offsets(offsets, shape, grid);
    // At stride 1 the input's gradient is itself a convolution, of the output's gradient with
    // the weight flipped (conv_grid.h), and runs as the forward does from a grid; else
    // col2im(Wᵀ · dY).
    const bool gx_forward = gx && by_grid && cpu::conv_input_grad_by_forward(shape);
    const cpu::ConvShape back = cpu::input_grad_shape(shape, og);
    const cpu::ConvGrid back_grid = cpu::conv_grid(back);
    int64_t* back_offsets = gx_forward ? thread_buffer<kBackOffsets, int64_t>(back_grid.taps) : nullptr;
    float* flipped = gx_forward ? thread_buffer<kWeightT>(p.oc * kdim) : nullptr;
    if (gx_forward) {
      cpu::conv_grid_offsets(back_offsets, back, back_grid);
      for (int64_t grp = 0; grp < p.groups; ++grp)
        cpu::flip_conv_weight(flipped + grp * og * kdim, w + grp * og * kdim, og, shape);
    }
    const int parts = parallel_parts(p.n, 1, kConvBackwardChunksPerThread);
    const GradSlots slots(parts, gw, p.oc * kdim, gb, p.oc);
    parallel_for_chunks(p.n, 1, [&](int chunk, int64_t begin, int64_t end) {
      float* cols = (gx && !gx_forward) || (gw && bf16_cols) ? thread_buffer<kCols>(kdim * plane) : nullptr;
      // The gradient of the conv output (before ReLU and pooling), one image at a time.
      float* gconv = e.relu || e.max_pool ? thread_buffer<kConvOut>(og * plane) : nullptr;
      float* image = gw_grid ? thread_buffer<kGrid>(grid.floats) : nullptr;
      float* grad_rows = gw_grid ? thread_buffer<kGradRows>(og * grid.columns) : nullptr;
      // The chunk's weight gradient as the grid's product leaves it, [taps][og] per group.
      float* gwt = gw_grid ? thread_buffer<kWeightGradT>(p.oc * kdim) : nullptr;
      float* back_image = gx_forward ? thread_buffer<kBackGrid>(back_grid.floats) : nullptr;
      float* back_rows = gx_forward ? thread_buffer<kGridRows>(g.c * back_grid.columns) : nullptr;
      const auto [gw_chunk, gb_chunk] = slots.chunk(chunk);
      for (int64_t i = begin; i < end; ++i)
        for (int64_t grp = 0; grp < p.groups; ++grp) {
          const int64_t first = (i * p.oc + grp * og) * out_plane;
          const float* gi = gout + first;
          const float* oi = e.max_pool || e.relu ? out + first : nullptr;  // a plain conv passes no output
          if (e.max_pool) {  // to each window's argmax, where the ReLU let it through
            cpu::unpool_2x2_grad(gconv, gi, oi, argmax + first, og, g.oh, g.ow, e.relu);
            gi = gconv;
          } else if (e.relu) {
            for (int64_t q = 0; q < og * plane; ++q) gconv[q] = oi[q] > 0.f ? gi[q] : 0.f;
            gi = gconv;
          }
          // The chunk's first image writes its slots, the others add onto them.
          const bool add = i > begin;
          if (gb) cpu::row_sums(gb_chunk + grp * og, gi, og, plane, add);
          // x is null when only the input's gradient is asked for.
          const float* img_x = gw ? x + (i * p.c + grp * g.c) * g.h * g.w : nullptr;
          if (gw_grid) {  // dWᵀ (+)= cols · dYᵀ
            cpu::to_conv_grid(image, img_x, shape, grid);
            cpu::plane_to_grid(grad_rows, gi, og, shape, grid);
            cpu::conv_weight_grad_grid(gwt + grp * og * kdim, image, offsets, grad_rows, og, shape, grid,
                                       cpu::own_sgemm_thread_workspace(), add);
          } else if (gw && bf16_cols) {  // dW (+)= dY · colsᵀ
            im2col(cols, img_x, g);
            gemm_with(true, false, true, og, kdim, plane, 1.f, gi, plane, cols, plane, add ? 1.f : 0.f,
                      gw_chunk + grp * og * kdim, kdim);
          } else if (gw && bf16) {
            cpu::conv_weight_grad_image_bf16(gw_chunk + grp * og * kdim, gi, img_x, og, shape,
                                             cpu::own_sgemm_thread_workspace(), add);
          } else if (gw) {  // dW (+)= dY · colsᵀ
            cpu::conv_weight_grad_image(gw_chunk + grp * og * kdim, gi, img_x, og, shape,
                                        cpu::own_sgemm_thread_workspace(), add);
          }
          if (gx) {  // this image's and group's cells
            float* img = gx + (i * p.c + grp * g.c) * g.h * g.w;
            if (gx_forward) {
              cpu::to_conv_grid(back_image, gi, back, back_grid);
              cpu::conv_forward_grid(back_rows, back_image, back_offsets, flipped + grp * og * kdim, g.c, back_grid);
              cpu::grid_to_plane(img, back_rows, g.c, back, back_grid, nullptr, false);
            } else {
              gemm_with(bf16, true, false, kdim, plane, og, 1.f, w + grp * og * kdim, kdim, gi, plane, 0.f, cols,
                        plane);
              if (g.sh == 1 && g.sw == 1) {
                cpu::col2im_unit_stride(img, cols, shape);
              } else {
                std::fill(img, img + g.c * g.h * g.w, 0.f);
                col2im(img, cols, g);
              }
            }
          }
        }
      if (gw_grid)
        for (int64_t grp = 0; grp < p.groups; ++grp)
          cpu::transpose_rows(gw_chunk + grp * og * kdim, gwt + grp * og * kdim, kdim, og);
    }, kConvBackwardChunksPerThread);
    slots.sum();
  }

  void conv2d_forward(float* out, const float* x, const float* w, const ConvProblem& p) override {
    if (has_fused_conv2d()) return conv2d_forward_fused(out, nullptr, x, w, nullptr, {}, p);
    const ConvGeometry& g = p.geo;
    const int64_t og = p.oc / p.groups, kdim = g.c * g.kh * g.kw, plane = g.oh * g.ow;
    parallel_for(p.n, 1, [&](int64_t begin, int64_t end) {
      float* cols = thread_buffer<kCols>(kdim * plane);
      for (int64_t i = begin; i < end; ++i)
        for (int64_t grp = 0; grp < p.groups; ++grp) {
          im2col(cols, x + (i * p.c + grp * g.c) * g.h * g.w, g);
          gemm(false, false, og, plane, kdim, 1.f, w + grp * og * kdim, kdim, cols, plane, 0.f,
               out + (i * p.oc + grp * og) * plane, plane);
        }
    });
  }

  void conv2d_backward(float* gx, float* gw, const float* gout, const float* x, const float* w,
                       const ConvProblem& p) override {
    if (has_fused_conv2d()) return conv2d_backward_fused(gx, gw, nullptr, gout, nullptr, nullptr, x, w, {}, p);
    const ConvGeometry& g = p.geo;
    const int64_t og = p.oc / p.groups, kdim = g.c * g.kh * g.kw, plane = g.oh * g.ow;
    const int parts = parallel_parts(p.n, 1);
    const GradSlots slots(parts, gw, p.oc * kdim, nullptr, 0);
    parallel_for_chunks(p.n, 1, [&](int chunk, int64_t begin, int64_t end) {
      float* cols = thread_buffer<kCols>(kdim * plane);
      float* gw_chunk = slots.chunk(chunk).first;
      for (int64_t i = begin; i < end; ++i)
        for (int64_t grp = 0; grp < p.groups; ++grp) {
          const float* gi = gout + (i * p.oc + grp * og) * plane;
          if (gw) {  // dW (+)= dY · colsᵀ: the chunk's first image writes its slot
            im2col(cols, x + (i * p.c + grp * g.c) * g.h * g.w, g);
            gemm(false, true, og, kdim, plane, 1.f, gi, plane, cols, plane, i > begin ? 1.f : 0.f,
                 gw_chunk + grp * og * kdim, kdim);
          }
          if (gx) {  // dX += col2im(Wᵀ · dY)
            gemm(true, false, kdim, plane, og, 1.f, w + grp * og * kdim, kdim, gi, plane, 0.f, cols, plane);
            col2im(gx + (i * p.c + grp * g.c) * g.h * g.w, cols, g);
          }
        }
    });
    slots.sum();
  }

  // Pooling runs planes of `cells` input cells in parallel, each chunk at least this many cells.
  static int64_t plane_grain(int64_t cells) {
    return std::max<int64_t>(1, kParallelElements / 2 / std::max<int64_t>(1, cells));
  }
  static int64_t plane_grain(const ConvGeometry& g) { return plane_grain(g.h * g.w); }

  // 2x2 windows at stride 2 without padding (nearly every CNN's pooling): four loads and
  // branch-free selects per output, in scan order like math::window_max (a NaN wins).
  static void max_pool_2x2(float* out, float* argmax, const float* x, const ConvGeometry& g) {
    const float offs[3] = {1.f, float(g.w), float(g.w + 1)};
    for (int64_t y = 0; y < g.oh; ++y) {
      const float* r0 = x + 2 * y * g.w;
      const float* r1 = r0 + g.w;
      float* o = out + y * g.ow;
      float* a = argmax + y * g.ow;
      const float base = float(2 * y * g.w);
      int64_t xo = 0;
#if defined(__SSE2__)
      // Four outputs at a time: the even and odd columns of both rows split by shuffles,
      // then the same three selects as the scalar loop below, lane by lane.
      for (; xo + 4 <= g.ow; xo += 4) {
        const __m128 a0 = _mm_loadu_ps(r0 + 2 * xo), a1 = _mm_loadu_ps(r0 + 2 * xo + 4);
        const __m128 b0 = _mm_loadu_ps(r1 + 2 * xo), b1 = _mm_loadu_ps(r1 + 2 * xo + 4);
        const __m128 cand[3] = {_mm_shuffle_ps(a0, a1, _MM_SHUFFLE(3, 1, 3, 1)),
                                _mm_shuffle_ps(b0, b1, _MM_SHUFFLE(2, 0, 2, 0)),
                                _mm_shuffle_ps(b0, b1, _MM_SHUFFLE(3, 1, 3, 1))};
        __m128 best = _mm_shuffle_ps(a0, a1, _MM_SHUFFLE(2, 0, 2, 0));
        const __m128 first = _mm_add_ps(_mm_set1_ps(base), _mm_cvtepi32_ps(_mm_setr_epi32(
                                                              int(2 * xo), int(2 * xo + 2), int(2 * xo + 4), int(2 * xo + 6))));
        __m128 at = first;
        for (int k = 0; k < 3; ++k) {
          const __m128 take = _mm_or_ps(_mm_cmpgt_ps(cand[k], best), _mm_cmpunord_ps(cand[k], cand[k]));
          best = _mm_or_ps(_mm_and_ps(take, cand[k]), _mm_andnot_ps(take, best));
          at = _mm_or_ps(_mm_and_ps(take, _mm_add_ps(first, _mm_set1_ps(offs[k]))), _mm_andnot_ps(take, at));
        }
        _mm_storeu_ps(o + xo, best);
        _mm_storeu_ps(a + xo, at);
      }
#endif
      for (; xo < g.ow; ++xo) {
        float best = r0[2 * xo], at = base + float(2 * xo);
        const float cand[3] = {r0[2 * xo + 1], r1[2 * xo], r1[2 * xo + 1]};
        for (int k = 0; k < 3; ++k) {
          const bool take = cand[k] > best || cand[k] != cand[k];
          best = take ? cand[k] : best;
          at = take ? base + float(2 * xo) + offs[k] : at;
        }
        o[xo] = best;
        a[xo] = at;
      }
    }
  }

  void max_pool2d(float* out, float* argmax, const float* in, int64_t planes, const ConvGeometry& g) override {
    const bool two_by_two = g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0;
    parallel_for(planes, plane_grain(g), [&](int64_t begin, int64_t end) {
      if (two_by_two) {
        for (int64_t p = begin; p < end; ++p)
          max_pool_2x2(out + p * g.oh * g.ow, argmax + p * g.oh * g.ow, in + p * g.h * g.w, g);
        return;
      }
      for (int64_t p = begin; p < end; ++p) {
        const float* x = in + p * g.h * g.w;
        for (int64_t y = 0; y < g.oh; ++y)
          for (int64_t xo = 0; xo < g.ow; ++xo) {
            const math::WindowMax best = math::window_max(x, g, y, xo);
            const int64_t o = (p * g.oh + y) * g.ow + xo;
            out[o] = best.value;
            argmax[o] = float(best.at);
          }
      }
    });
  }

  void max_pool2d_backward(float* gin, const float* gout, const float* argmax, int64_t planes,
                           const ConvGeometry& g) override {
    const int64_t per = g.oh * g.ow;
    parallel_for(planes, plane_grain(g), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p)
        for (int64_t i = 0; i < per; ++i) {
          const int64_t at = int64_t(argmax[p * per + i]);
          if (at >= 0) gin[p * g.h * g.w + at] += gout[p * per + i];
        }
    });
  }

  void avg_pool2d(float* out, const float* in, int64_t planes, const ConvGeometry& g, bool include_pad) override {
    parallel_for(planes, plane_grain(g), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const float* x = in + p * g.h * g.w;
      for (int64_t y = 0; y < g.oh; ++y)
        for (int64_t xo = 0; xo < g.ow; ++xo) {
          double s = 0;
          for (int64_t iy = std::max<int64_t>(y * g.sh - g.ph, 0); iy < std::min(y * g.sh - g.ph + g.kh, g.h); ++iy)
            for (int64_t ix = std::max<int64_t>(xo * g.sw - g.pw, 0); ix < std::min(xo * g.sw - g.pw + g.kw, g.w); ++ix)
              s += x[iy * g.w + ix];
          out[(p * g.oh + y) * g.ow + xo] = float(s / double(math::pool_count(g, y, xo, include_pad)));
        }
    }
    });
  }

  void avg_pool2d_backward(float* gin, const float* gout, int64_t planes, const ConvGeometry& g,
                           bool include_pad) override {
    parallel_for(planes, plane_grain(g), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      float* gi = gin + p * g.h * g.w;
      for (int64_t y = 0; y < g.oh; ++y)
        for (int64_t xo = 0; xo < g.ow; ++xo) {
          const float v = gout[(p * g.oh + y) * g.ow + xo] / float(math::pool_count(g, y, xo, include_pad));
          for (int64_t iy = std::max<int64_t>(y * g.sh - g.ph, 0); iy < std::min(y * g.sh - g.ph + g.kh, g.h); ++iy)
            for (int64_t ix = std::max<int64_t>(xo * g.sw - g.pw, 0); ix < std::min(xo * g.sw - g.pw + g.kw, g.w); ++ix)
              gi[iy * g.w + ix] += v;
        }
    }
    });
  }

  void adaptive_pool2d(float* out, float* argmax, const float* in, int64_t planes,
                       const AdaptiveGeometry& g) override {
    const int64_t hw = g.h * g.w, per = g.oh * g.ow;
    parallel_for(planes, plane_grain(hw),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t p = begin; p < end; ++p)
                     for (int64_t y = 0; y < g.oh; ++y)
                       for (int64_t x = 0; x < g.ow; ++x)
                         math::adaptive_pool_cell(out + p * per, argmax ? argmax + p * per : nullptr, in + p * hw, g,
                                                  y, x);
                 });
  }

  void adaptive_pool2d_backward(float* gin, const float* gout, const float* argmax, int64_t planes,
                                const AdaptiveGeometry& g) override {
    const int64_t hw = g.h * g.w, per = g.oh * g.ow;
    if (!argmax && per == 1) {  // global average pooling: every cell gets its plane's share
      parallel_for(planes, plane_grain(hw), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const float share = 0.f + gout[p] / float(hw);  // as math::adaptive_pool_grad sums it
          for (int64_t i = 0; i < hw; ++i) gin[p * hw + i] += share;
        }
      });
      return;
    }
    parallel_for(planes, plane_grain(hw),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t p = begin; p < end; ++p)
                     for (int64_t iy = 0; iy < g.h; ++iy)
                       for (int64_t ix = 0; ix < g.w; ++ix)
                         gin[p * hw + iy * g.w + ix] +=
                             math::adaptive_pool_grad(gout + p * per, argmax ? argmax + p * per : nullptr, g, iy, ix);
                 });
  }

  void random_uniform(const Tensor& out, float lo, float hi, Generator& gen) override {
    std::lock_guard lock(gen.mutex());
    map1<false>(out, out, [&](float) { return lo + (hi - lo) * gen.uniform(); });
  }

  void random_normal(const Tensor& out, float mean, float std, Generator& gen) override {
    std::lock_guard lock(gen.mutex());
    map1<false>(out, out, [&](float) { return mean + std * gen.normal(); });
  }

  void batch_norm_stats(float* mean, float* var, float* invstd, const float* x, int64_t n, int64_t c, int64_t s,
                        float eps) override {
    cpu::batch_norm_stats(mean, var, invstd, x, n, c, s, eps);
  }
  void batch_norm_apply(float* y, const float* x, const float* mean, const float* invstd, const float* weight,
                        const float* bias, int64_t n, int64_t c, int64_t s) override {
    cpu::batch_norm_apply(y, x, mean, invstd, weight, bias, n, c, s);
  }
  void batch_norm_backward_reduce(float* sum_dy, float* sum_dy_xhat, const float* dy, const float* x,
                                  const float* mean, const float* invstd, int64_t n, int64_t c, int64_t s) override {
    cpu::batch_norm_backward_reduce(sum_dy, sum_dy_xhat, dy, x, mean, invstd, n, c, s);
  }
  void batch_norm_backward_input(float* dx, const float* dy, const float* x, const float* mean, const float* invstd,
                                 const float* weight, const float* sum_dy, const float* sum_dy_xhat, int64_t n,
                                 int64_t c, int64_t s) override {
    cpu::batch_norm_backward_input(dx, dy, x, mean, invstd, weight, sum_dy, sum_dy_xhat, n, c, s);
  }

  // -- sequence models: layer norm (ops/cpu/layer_norm.cpp) and the causal softmax --
  void layer_norm(float* y, float* mean, float* invstd, const float* x, const float* weight, const float* bias,
                  int64_t rows, int64_t d, float eps) override {
    cpu::layer_norm(y, mean, invstd, x, weight, bias, rows, d, eps);
  }
  void layer_norm_backward(float* dx, const float* dy, const float* x, const float* mean, const float* invstd,
                           const float* weight, int64_t rows, int64_t d) override {
    cpu::layer_norm_backward(dx, dy, x, mean, invstd, weight, rows, d);
  }
  void causal_softmax(float* out, const float* in, int64_t rows, int64_t t) override {
    parallel_for(rows, std::max<int64_t>(1, kParallelElements / std::max<int64_t>(1, t)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t seen = r % t + 1;
        softmax_run(out + r * t, in + r * t, seen, 1, false);
        std::fill(out + r * t + seen, out + (r + 1) * t, 0.f);
      }
    });
  }
  void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                         const AttentionProblem& p) override {
    cpu::attention_forward(out, lse, q, k, v, p);
  }
  void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q, const float* k,
                          const float* v, const float* out, const float* lse, const AttentionProblem& p) override {
    cpu::attention_backward(dq, dk, dv, dout, q, k, v, out, lse, p);
  }
  bool strided_attention() const override { return true; }
  void rnn_cell_forward(const RnnStep& s) override { cpu::rnn_cell_forward(s); }
  void rnn_cell_backward(const RnnStepGrad& s) override { cpu::rnn_cell_backward(s); }

  void sgd_step(float* param, const float* grad, float* buf, int64_t n, const SgdStep& s) override {
    parallel_for(n, kParallelElements / 2, [&](int64_t begin, int64_t end) {
      // Plain SGD: sgd_update's p - lr * (sign * g) as one multiply-add, vectorised (sign is ±1,
      // so lr * sign rounds nothing).
      if (!buf && s.weight_decay == 0.f) {
        float* __restrict p = param;
        const float* __restrict g = grad;
        const float step = s.lr * (s.maximize ? -1.f : 1.f);
        for (int64_t i = begin; i < end; ++i) p[i] -= step * g[i];
        return;
      }
      const SgdStep step = s;  // a copy the stores below cannot change: its fields stay in registers
      for (int64_t i = begin; i < end; ++i)
        param[i] = math::sgd_update(param[i], grad[i], buf ? buf + i : nullptr, step);
    }, kChunksPerThread);
  }

  void adam_step(float* param, const float* grad, float* m, float* v, float* vmax, int64_t n,
                 const AdamStep& s) override {
    const AdamScalars k = adam_scalars(s);
    const float sign = s.maximize ? -1.f : 1.f;
    if (cpu::own_sgemm_enabled()) {  // AVX-512: the same formula 16 lanes at a time
      const cpu::AdamConstants c{k.beta1, k.one_minus_beta1, k.beta2, k.one_minus_beta2, k.weight_decay, k.step, k.eps, k.decay};
      return parallel_for(n, kParallelElements / 2, [&](int64_t begin, int64_t end) {
        cpu::adam_update(param + begin, grad + begin, m + begin, v + begin, vmax ? vmax + begin : nullptr, end - begin,
                         c, sign, k.weight_decay != 0.f);
      }, kChunksPerThread);
    }
    // The options are template arguments so that each loop has no branch and vectorises.
    auto run = [&](auto decay_grad, auto amsgrad) {
      parallel_for(n, kParallelElements / 2, [&](int64_t begin, int64_t end) {
        float* __restrict p = param;
        float* __restrict mm = m;
        float* __restrict vv = v;
        float* __restrict vm = vmax;
        const float* __restrict g = grad;
        constexpr bool kAmsgrad = decltype(amsgrad)::value;
        for (int64_t i = begin; i < end; ++i)
          p[i] = math::adam_update(p[i], g[i], mm[i], vv[i], kAmsgrad ? &vm[i] : nullptr, k, sign,
                                   decltype(decay_grad)::value);
      }, kChunksPerThread);
    };
    using yes = std::true_type;
    using no = std::false_type;
    const bool wd = k.weight_decay != 0.f;
    if (vmax) wd ? run(yes{}, yes{}) : run(no{}, yes{});
    else wd ? run(yes{}, no{}) : run(no{}, no{});
  }
};

// y = act(z) over n contiguous values (y may be z).
void activate(UnaryOp act, float* y, const float* z, int64_t n) {
  if (act == UnaryOp::Gelu) return cpu::gelu(y, z, n);
  math::visit(act, [&]<UnaryOp Op>() {
    for (int64_t i = 0; i < n; ++i) y[i] = math::unary<Op>(z[i], 0.f, 0.f);
  });
}

}  // namespace

// Rows of x·Wᵀ + b in blocks of about 64 KB of output: each block's product is activated while
// it is still in cache, where an activation op after the product read the whole output back
// from memory. Blocks are whole register tiles of our kernel (24 rows) and run on the pool's
// threads, each a single-threaded product as gemm's are.
void cpu::linear_forward_fused(float* y, float* pre, const float* x, const float* w, const float* bias, UnaryOp act,
                               int64_t rows, int64_t in, int64_t out) {
  const int64_t block = std::max<int64_t>(24, (16384 / out + 23) / 24 * 24), blocks = (rows + block - 1) / block;
  const bool bf16 = cpu::bf16_products(), own = cpu::own_sgemm_enabled();
  auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = b * block, m = std::min(rows, r0 + block) - r0;
      float* z = (pre ? pre : y) + r0 * out;
      if (bias)
        for (int64_t i = 0; i < m; ++i) std::copy_n(bias, out, z + i * out);
      CpuBackend::product_here(bf16, own, false, true, m, out, in, 1.f, x + r0 * in, in, w, in, bias ? 1.f : 0.f, z,
                               out);
      if (act != UnaryOp::Copy) activate(act, y + r0 * out, z, m * out);
    }
  };
  // As gemm: a small product on this thread, and OpenBLAS's own threads when someone raised them.
  if (2.0 * double(rows) * double(out) * double(in) < CpuBackend::kParallelGemmFlops ||
      (!CpuBackend::ours() && openblas_get_num_threads() > 1))
    return run(0, blocks);
  parallel_for(blocks, 1, run);
}

Backend& cpu_backend() {
  static CpuBackend cpu = [] {
    num_threads();  // sizes the OpenBLAS pool once, explicitly
    return CpuBackend();
  }();
  return cpu;
}

Backend& backend(Device device) {
  if (device.is_cpu()) return cpu_backend();
  cuda::check_available(device);
  return cuda::device_backend(device.index);
}

}  // namespace plexus
