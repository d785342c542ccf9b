#include "ops/cpu/residual.h"

#include <algorithm>
#include <cmath>

#include "ops/cpu/layer_norm.h"

namespace plexus::cpu {
namespace {

// A 32-bit bijective mixer (Chris Wellons' lowbias32): every output bit depends on every input bit.
inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// splitmix64's finaliser: each row's own 32-bit key from the call's key and the row.
inline uint32_t row_key(uint64_t key, int64_t r) {
  uint64_t z = key + 0x9e3779b97f4a7c15ull * uint64_t(r + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return uint32_t((z ^ (z >> 31)) >> 32);
}

// Row r's mask times the scale, element j: 0 or 1/(1-p). Branch-free so the row loops vectorise.
inline float keep_scale(uint32_t rk, int64_t j, const DropoutDraw& draw) {
  return float(mix32(uint32_t(j) ^ rk) >= draw.threshold) * draw.scale;
}

}  // namespace

DropoutDraw dropout_draw(float p, bool training, uint64_t key) {
  if (!training || p == 0.f) return {};
  if (p >= 1.f) return {key, UINT32_MAX, 0.f};
  return {key, uint32_t(std::min(double(p) * 4294967296.0, 4294967295.0)), 1.f / (1.f - p)};
}

void residual_dropout(float* s, float* y, float* mean, float* invstd, const float* a, const float* b,
                      const float* weight, const float* bias, int64_t rows, int64_t d, float eps,
                      const DropoutDraw& draw) {
  each_row(rows, d, [&](int64_t r) {
    const float* ar = a + r * d;
    const float* br = b + r * d;
    float* sr = s + r * d;
    if (draw.keeps_all()) {
      for (int64_t j = 0; j < d; ++j) sr[j] = ar[j] + br[j];
    } else {
      const uint32_t rk = row_key(draw.key, r);
      for (int64_t j = 0; j < d; ++j) sr[j] = ar[j] + br[j] * keep_scale(rk, j, draw);
    }
    // The row is still in cache: its norm costs no further pass over memory.
    if (y) layer_norm_row(y + r * d, mean + r, invstd + r, sr, weight, bias, d, eps);
  });
}

void dropout_backward(float* db, const float* ds, int64_t rows, int64_t d, const DropoutDraw& draw) {
  each_row(rows, d, [&](int64_t r) {
    const uint32_t rk = row_key(draw.key, r);
    for (int64_t j = 0; j < d; ++j) db[r * d + j] = ds[r * d + j] * keep_scale(rk, j, draw);
  });
}

}  // namespace plexus::cpu
