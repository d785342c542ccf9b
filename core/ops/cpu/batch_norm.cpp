#include "ops/cpu/batch_norm.h"

#include <algorithm>
#include <cmath>

#include "ops/cpu/lane_sum.h"
#include "util/parallel.h"

namespace plexus::cpu {
namespace {

// Calls f(first element, count) for every run of channel ch's values: s contiguous values per
// image.
template <class F>
void for_channel(int64_t n, int64_t c, int64_t s, int64_t ch, F&& f) {
  for (int64_t b = 0; b < n; ++b) f((b * c + ch) * s, s);
}

// Channels split across threads; each channel's work is about n*s values.
template <class F>
void each_channel(int64_t n, int64_t c, int64_t s, F&& f) {
  const int64_t per_channel = std::max<int64_t>(1, n * s);
  parallel_for(c, std::max<int64_t>(1, (int64_t(1) << 15) / per_channel), [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) f(ch);
  });
}

}  // namespace

void batch_norm_stats(float* mean, float* var, float* invstd, const float* x, int64_t n, int64_t c, int64_t s,
                      float eps) {
  const double count = double(n * s);
  each_channel(n, c, s, [&](int64_t ch) {
    double sum = 0;
    for_channel(n, c, s, ch, [&](int64_t at, int64_t len) {
      sum += lane_sum(len, [&](int64_t i) { return double(x[at + i]); });
    });
    const double mu = sum / count;
    double sq = 0;  // two passes: the variance of centred values, exact for any offset
    for_channel(n, c, s, ch, [&](int64_t at, int64_t len) {
      sq += lane_sum(len, [&](int64_t i) { return (x[at + i] - mu) * (x[at + i] - mu); });
    });
    const double v = sq / count;
    mean[ch] = float(mu);
    var[ch] = float(v);
    invstd[ch] = float(1.0 / std::sqrt(v + double(eps)));
  });
}

void batch_norm_apply(float* y, const float* x, const float* mean, const float* invstd, const float* weight,
                      const float* bias, int64_t n, int64_t c, int64_t s) {
  each_channel(n, c, s, [&](int64_t ch) {
    const float scale = invstd[ch] * (weight ? weight[ch] : 1.f), mu = mean[ch], shift = bias ? bias[ch] : 0.f;
    for_channel(n, c, s, ch, [&](int64_t at, int64_t len) {
      for (int64_t i = 0; i < len; ++i) y[at + i] = (x[at + i] - mu) * scale + shift;
    });
  });
}

void batch_norm_backward_reduce(float* sum_dy, float* sum_dy_xhat, const float* dy, const float* x, const float* mean,
                                const float* invstd, int64_t n, int64_t c, int64_t s) {
  each_channel(n, c, s, [&](int64_t ch) {
    double a = 0, b = 0;
    const double mu = mean[ch];
    for_channel(n, c, s, ch, [&](int64_t at, int64_t len) {
      a += lane_sum(len, [&](int64_t i) { return double(dy[at + i]); });
      b += lane_sum(len, [&](int64_t i) { return double(dy[at + i]) * (x[at + i] - mu); });
    });
    sum_dy[ch] = float(a);
    sum_dy_xhat[ch] = float(b * invstd[ch]);
  });
}

void batch_norm_backward_input(float* dx, const float* dy, const float* x, const float* mean, const float* invstd,
                               const float* weight, const float* sum_dy, const float* sum_dy_xhat, int64_t n,
                               int64_t c, int64_t s) {
  const float inv_count = 1.f / float(std::max<int64_t>(1, n * s));
  each_channel(n, c, s, [&](int64_t ch) {
    const float k = invstd[ch], scale = k * (weight ? weight[ch] : 1.f), mu = mean[ch];
    const float a = sum_dy ? sum_dy[ch] * inv_count : 0.f, b = sum_dy_xhat ? sum_dy_xhat[ch] * inv_count : 0.f;
    for_channel(n, c, s, ch, [&](int64_t at, int64_t len) {
      for (int64_t i = 0; i < len; ++i) dx[at + i] = scale * (dy[at + i] - a - (x[at + i] - mu) * k * b);
    });
  });
}

}  // namespace plexus::cpu
