#include "ops/cpu/attention.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/cpu/isa.h"
#include "ops/cpu/lane_sum.h"
#include "util/parallel.h"

namespace plexus::cpu {
namespace {

using Problem = Backend::AttentionProblem;

// Queries and keys per tile: a 64 × 64 block of scores (16 KB) and its probabilities stay in L1/L2.
constexpr int64_t kQueryTile = 64, kKeyTile = 64;

// e^x for x <= 0 (a score minus its row's running maximum) by Cephes's polynomial, within 2 ulp
// of std::exp: a loop of it vectorises where std::exp is a call per element. Below -87, 2^n
// would leave the normal range; such weights (< 2e-38) count as e^-87.
inline float exp_nonpositive(float x) {
  x = std::max(x, -87.f);
  const float n = (x * 1.44269504f + 12582912.f) - 12582912.f;  // round(x / ln 2)
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * r * r + r + 1.f;
  return y * std::bit_cast<float>((int32_t(n) + 127) << 23);
}

// The keys batch row b sees at all (its key_lengths entry, at least 1, at most s).
int64_t visible_keys(const Problem& p, int64_t b) {
  if (!p.key_lengths) return p.s;
  const float len = p.key_lengths[b / p.rows_per_length];
  if (!(len < float(p.s))) return p.s;
  return std::max<int64_t>(1, int64_t(std::ceil(len)));
}

// How many of the key tile [j0, j0 + cols) query i sees: the rest of its row is masked.
int64_t seen_in_tile(const Problem& p, int64_t keys, int64_t i, int64_t j0, int64_t cols) {
  const int64_t end = p.causal ? std::min(keys, i + 1) : keys;
  return std::clamp<int64_t>(end - j0, 0, cols);
}

// Row r of the tile, `seen` probabilities exp(x - shift) then zeros; returns their sum. The sum is
// kept in 16 float lanes (up to 64 terms in [0, 1] each: a relative error of 1e-7, far under the
// 1e-5 the fused attention is held to) so that the loop vectorises whole.
constexpr int kLanes = 16;
[[gnu::always_inline]] inline float exp_row_run(float* x, int64_t seen, int64_t cols, float shift) {
  float acc[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= seen; c += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      x[c + l] = exp_nonpositive(x[c + l] - shift);
      acc[l] += x[c + l];
    }
  for (; c < seen; ++c) {
    x[c] = exp_nonpositive(x[c] - shift);
    acc[0] += x[c];
  }
  std::fill(x + seen, x + cols, 0.f);
  float sum = 0.f;
  for (const float a : acc) sum += a;
  return sum;
}

// The largest of x[0 .. n), n >= 1, in 16 lanes (std::max_element's scan does not vectorise).
[[gnu::always_inline]] inline float max_run(const float* x, int64_t n) {
  float lane[kLanes];
  std::fill(lane, lane + kLanes, x[0]);
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = std::max(lane[l], x[c + l]);
  for (; c < n; ++c) lane[0] = std::max(lane[0], x[c]);
  return *std::max_element(lane, lane + kLanes);
}

float exp_row_baseline(float* x, int64_t seen, int64_t cols, float shift) { return exp_row_run(x, seen, cols, shift); }
float max_row_baseline(const float* x, int64_t n) { return max_run(x, n); }

// Copies vectorised 16 floats wide where the CPU has AVX-512, 8 where it has AVX2 (4 in the
// baseline), picked at run time as in gelu.cpp; the polynomial's steps may then be fused multiply-adds.
#ifdef PLEXUS_CPU_ISA_COPIES
#define PLEXUS_ATTENTION_COPY(suffix, isa)                                                          \
  [[gnu::target(isa)]] float exp_row_##suffix(float* x, int64_t seen, int64_t cols, float shift) { \
    return exp_row_run(x, seen, cols, shift);                                                       \
  }                                                                                                 \
  [[gnu::target(isa)]] float max_row_##suffix(const float* x, int64_t n) { return max_run(x, n); }
PLEXUS_ATTENTION_COPY(avx512, "avx512f,avx512vl,fma")
PLEXUS_ATTENTION_COPY(avx2, "avx2,fma")
#undef PLEXUS_ATTENTION_COPY
#endif

float exp_row(float* x, int64_t seen, int64_t cols, float shift) {
#ifdef PLEXUS_CPU_ISA_COPIES
  if (kAvx512) return exp_row_avx512(x, seen, cols, shift);
  if (kAvx2) return exp_row_avx2(x, seen, cols, shift);
#endif
  return exp_row_baseline(x, seen, cols, shift);
}

float max_row(const float* x, int64_t n) {
#ifdef PLEXUS_CPU_ISA_COPIES
  if (kAvx512) return max_row_avx512(x, n);
  if (kAvx2) return max_row_avx2(x, n);
#endif
  return max_row_baseline(x, n);
}

// Where batch row b of a tensor laid out as `st` starts.
int64_t start(const Problem& p, const Backend::AttentionStrides& st, int64_t b) {
  return b / p.heads * st.batch + b % p.heads * st.head;
}

// Zeros in the first `cols` floats of `rows` rows `ld` apart.
void fill_rows(float* x, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) std::fill(x + r * ld, x + r * ld + cols, 0.f);
}

// Batch rows split across the pool, each chunk with its own tile buffers.
template <class F>
void each_batch_row(const Problem& p, int64_t scratch_floats, F&& f) {
  parallel_for(p.batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(static_cast<size_t>(scratch_floats));
    for (int64_t b = begin; b < end; ++b) f(b, scratch.data());
  });
}

}  // namespace

void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v, const Problem& p) {
  Backend& be = cpu_backend();
  const int64_t t = p.t, d = p.d, lq = p.q.row, lkv = p.kv.row, lo = p.out.row;
  each_batch_row(p, kQueryTile * kKeyTile + 2 * kQueryTile, [&](int64_t b, float* scratch) {
    float* scores = scratch;
    float* row_max = scratch + kQueryTile * kKeyTile;
    float* row_sum = row_max + kQueryTile;
    const float *qb = q + start(p, p.q, b), *kb = k + start(p, p.kv, b), *vb = v + start(p, p.kv, b);
    float* ob = out + start(p, p.out, b);
    const int64_t keys = visible_keys(p, b);
    for (int64_t i0 = 0; i0 < t; i0 += kQueryTile) {
      const int64_t rows = std::min(kQueryTile, t - i0);
      // Causal: the tiles right of the diagonal are never computed.
      const int64_t keys_end = p.causal ? std::min(keys, i0 + rows) : keys;
      fill_rows(ob + i0 * lo, rows, d, lo);
      std::fill(row_max, row_max + rows, -std::numeric_limits<float>::infinity());
      std::fill(row_sum, row_sum + rows, 0.f);
      for (int64_t j0 = 0; j0 < keys_end; j0 += kKeyTile) {
        const int64_t cols = std::min(kKeyTile, keys_end - j0);
        be.gemm(false, true, rows, cols, d, p.scale, qb + i0 * lq, lq, kb + j0 * lkv, lkv, 0.f, scores, cols);
        for (int64_t r = 0; r < rows; ++r) {
          float* x = scores + r * cols;
          const int64_t seen = seen_in_tile(p, keys, i0 + r, j0, cols);
          if (seen == 0) {
            std::fill(x, x + cols, 0.f);
            continue;
          }
          // Online softmax: a new maximum rescales what the row has summed and accumulated.
          const float m = std::max(row_max[r], max_row(x, seen));
          const float sum = exp_row(x, seen, cols, m);
          if (m != row_max[r]) {
            const float shrink = row_sum[r] == 0.f ? 0.f : exp_nonpositive(row_max[r] - m);
            row_sum[r] *= shrink;
            for (float* o = ob + (i0 + r) * lo; o != ob + (i0 + r) * lo + d; ++o) *o *= shrink;
            row_max[r] = m;
          }
          row_sum[r] += sum;
        }
        be.gemm(false, false, rows, d, cols, 1.f, scores, cols, vb + j0 * lkv, lkv, 1.f, ob + i0 * lo, lo);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const float inv = 1.f / row_sum[r];
        for (float* o = ob + (i0 + r) * lo; o != ob + (i0 + r) * lo + d; ++o) *o *= inv;
        lse[b * t + i0 + r] = row_max[r] + std::log(row_sum[r]);
      }
    }
  });
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q, const float* k,
                        const float* v, const float* out, const float* lse, const Problem& p) {
  Backend& be = cpu_backend();
  const int64_t t = p.t, s = p.s, d = p.d, lq = p.q.row, lkv = p.kv.row, lo = p.out.row;
  each_batch_row(p, 2 * kQueryTile * kKeyTile + t, [&](int64_t b, float* scratch) {
    float* probs = scratch;
    float* dscores = scratch + kQueryTile * kKeyTile;
    float* delta = dscores + kQueryTile * kKeyTile;
    const float *qb = q + start(p, p.q, b), *kb = k + start(p, p.kv, b), *vb = v + start(p, p.kv, b);
    const float *dob = dout + start(p, p.out, b), *ob = out + start(p, p.out, b), *lb = lse + b * t;
    float *dqb = dq + start(p, p.q, b), *dkb = dk + start(p, p.kv, b), *dvb = dv + start(p, p.kv, b);
    // D_i = dO_i · O_i, the softmax derivative's row term Σ_j P_ij dP_ij.
    for (int64_t i = 0; i < t; ++i)
      delta[i] = float(lane_sum(d, [&](int64_t c) { return double(dob[i * lo + c]) * ob[i * lo + c]; }));
    fill_rows(dqb, t, d, lq);
    fill_rows(dkb, s, d, lkv);
    fill_rows(dvb, s, d, lkv);
    const int64_t keys = visible_keys(p, b);
    for (int64_t j0 = 0; j0 < keys; j0 += kKeyTile) {
      const int64_t cols = std::min(kKeyTile, keys - j0);
      // Causal: the query tiles above this key tile never see it.
      for (int64_t i0 = p.causal ? j0 / kQueryTile * kQueryTile : 0; i0 < t; i0 += kQueryTile) {
        const int64_t rows = std::min(kQueryTile, t - i0);
        // The weights again, from the scores and each query's log-sum-exp.
        be.gemm(false, true, rows, cols, d, p.scale, qb + i0 * lq, lq, kb + j0 * lkv, lkv, 0.f, probs, cols);
        for (int64_t r = 0; r < rows; ++r)
          exp_row(probs + r * cols, seen_in_tile(p, keys, i0 + r, j0, cols), cols, lb[i0 + r]);
        be.gemm(true, false, cols, d, rows, 1.f, probs, cols, dob + i0 * lo, lo, 1.f, dvb + j0 * lkv, lkv);
        be.gemm(false, true, rows, cols, d, 1.f, dob + i0 * lo, lo, vb + j0 * lkv, lkv, 0.f, dscores, cols);
        for (int64_t r = 0; r < rows; ++r) {
          const float* pr = probs + r * cols;
          float* ds = dscores + r * cols;
          const float di = delta[i0 + r];
          for (int64_t c = 0; c < cols; ++c) ds[c] = pr[c] * (ds[c] - di);
        }
        be.gemm(false, false, rows, d, cols, p.scale, dscores, cols, kb + j0 * lkv, lkv, 1.f, dqb + i0 * lq, lq);
        be.gemm(true, false, cols, d, rows, p.scale, dscores, cols, qb + i0 * lq, lq, 1.f, dkb + j0 * lkv, lkv);
      }
    }
  });
}

}  // namespace plexus::cpu
