#include "ops/cpu/layer_norm.h"

#include <cmath>
#include <vector>

#include "ops/cpu/lane_sum.h"

namespace plexus::cpu {

void layer_norm_row(float* yr, float* mean, float* invstd, const float* xr, const float* weight, const float* bias,
                    int64_t d, float eps) {
  const double mu = lane_sum(d, [&](int64_t j) { return double(xr[j]); }) / double(d);
  // Two passes: the variance of centred values, exact for any offset.
  const double var = lane_sum(d, [&](int64_t j) { return (xr[j] - mu) * (xr[j] - mu); }) / double(d);
  const float m = float(mu), k = float(1.0 / std::sqrt(var + double(eps)));
  *mean = m;
  *invstd = k;
  if (weight && bias)
    for (int64_t j = 0; j < d; ++j) yr[j] = (xr[j] - m) * k * weight[j] + bias[j];
  else
    for (int64_t j = 0; j < d; ++j) yr[j] = (xr[j] - m) * k * (weight ? weight[j] : 1.f) + (bias ? bias[j] : 0.f);
}

void layer_norm(float* y, float* mean, float* invstd, const float* x, const float* weight, const float* bias,
                int64_t rows, int64_t d, float eps) {
  each_row(rows, d, [&](int64_t r) { layer_norm_row(y + r * d, mean + r, invstd + r, x + r * d, weight, bias, d, eps); });
}

void layer_norm_backward(float* dx, const float* dy, const float* x, const float* mean, const float* invstd,
                         const float* weight, int64_t rows, int64_t d) {
  each_row(rows, d, [&](int64_t r) {
    const float* xr = x + r * d;
    const float* gr = dy + r * d;
    float* out = dx + r * d;
    const float m = mean[r], k = invstd[r];
    auto dyw = [&](int64_t j) { return weight ? gr[j] * weight[j] : gr[j]; };
    const double a = lane_sum(d, [&](int64_t j) { return double(dyw(j)); }) / double(d);
    const double b = lane_sum(d, [&](int64_t j) { return double(dyw(j)) * ((xr[j] - m) * k); }) / double(d);
    const float fa = float(a), fb = float(b);
    for (int64_t j = 0; j < d; ++j) out[j] = k * (dyw(j) - fa - (xr[j] - m) * k * fb);
  });
}

void layer_norm_param_grads(float* gw, float* gb, const float* dy, const float* x, const float* mean,
                            const float* invstd, int64_t rows, int64_t d) {
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(1, d));
  std::vector<double> partial(size_t(parallel_parts(rows, grain)) * size_t(2 * d), 0.0);
  parallel_for_chunks(rows, grain, [&](int chunk, int64_t begin, int64_t end) {
    double* sw = partial.data() + size_t(chunk) * size_t(2 * d);
    double* sb = sw + d;
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * d;
      const float* gr = dy + r * d;
      const float m = mean[r], k = invstd[r];
      for (int64_t j = 0; j < d; ++j) {
        sw[j] += double(gr[j] * ((xr[j] - m) * k));
        sb[j] += double(gr[j]);
      }
    }
  });
  for (int64_t j = 0; j < d; ++j) {
    double tw = 0, tb = 0;
    for (size_t c = 0; c < partial.size(); c += size_t(2 * d)) {
      tw += partial[c + size_t(j)];
      tb += partial[c + size_t(d + j)];
    }
    if (gw) gw[j] = float(tw);
    if (gb) gb[j] = float(tb);
  }
}

}  // namespace plexus::cpu
