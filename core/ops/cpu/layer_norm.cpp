#include "ops/cpu/layer_norm.h"

#include <cmath>

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

}  // namespace plexus::cpu
