#include "train/node_stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "tensor/tensor.h"

namespace plexus::train {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Float lanes the compiler vectorises, each summing at most kBlock / kLanes values before they
// are folded into doubles: close to memory speed, and as exact as a figure on screen needs.
constexpr int kLanes = 16;
constexpr int64_t kBlock = 1024;

// The histogram counts at most this many values, evenly spread over the output.
constexpr int64_t kHistogramValues = int64_t(1) << 16;

struct Moments {
  double sum = 0, sum_sq = 0;
  int64_t finite = 0, zeros = 0;
  float lo = kInf, hi = -kInf;
};

// Counts every value as finite; NaN or Inf (or a square beyond float's range) shows as sums
// that are not finite, and the caller then takes exact_moments.
Moments lane_moments(const float* p, int64_t n) {
  Moments m;
  std::array<float, kLanes> lo, hi;
  lo.fill(kInf);
  hi.fill(-kInf);
  int64_t i = 0;
  while (n - i >= kLanes) {
    std::array<float, kLanes> s{}, q{};
    std::array<int32_t, kLanes> z{};
    for (const int64_t end = i + std::min(kBlock, (n - i) / kLanes * kLanes); i < end; i += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const float v = p[i + l];
        s[size_t(l)] += v;
        q[size_t(l)] += v * v;
        z[size_t(l)] += v == 0.f;
        lo[size_t(l)] = v < lo[size_t(l)] ? v : lo[size_t(l)];
        hi[size_t(l)] = v > hi[size_t(l)] ? v : hi[size_t(l)];
      }
    for (int l = 0; l < kLanes; ++l) {
      m.sum += s[size_t(l)];
      m.sum_sq += q[size_t(l)];
      m.zeros += z[size_t(l)];
    }
  }
  for (; i < n; ++i) {
    const float v = p[i];
    m.sum += v;
    m.sum_sq += double(v) * v;
    m.zeros += v == 0.f;
    m.lo = std::min(m.lo, v);
    m.hi = std::max(m.hi, v);
  }
  m.lo = std::min(m.lo, *std::min_element(lo.begin(), lo.end()));
  m.hi = std::max(m.hi, *std::max_element(hi.begin(), hi.end()));
  m.finite = n;
  return m;
}

// The finite values' moments, value by value.
Moments exact_moments(const float* p, int64_t n) {
  Moments m;
  for (int64_t i = 0; i < n; ++i) {
    const float v = p[i];
    if (!std::isfinite(v)) continue;
    ++m.finite;
    m.sum += v;
    m.sum_sq += double(v) * v;
    m.zeros += v == 0.f;
    m.lo = std::min(m.lo, v);
    m.hi = std::max(m.hi, v);
  }
  return m;
}

}  // namespace

double sum_of_squares(const float* p, int64_t n) {
  double total = 0;
  int64_t i = 0;
  while (n - i >= kLanes) {
    std::array<float, kLanes> q{};
    for (const int64_t end = i + std::min(kBlock, (n - i) / kLanes * kLanes); i < end; i += kLanes)
      for (int l = 0; l < kLanes; ++l) q[size_t(l)] += p[i + l] * p[i + l];
    for (float v : q) total += v;
  }
  for (; i < n; ++i) total += double(p[i]) * p[i];
  return total;
}

double distance_squared(const float* a, const float* b, int64_t n) {
  double total = 0;
  int64_t i = 0;
  while (n - i >= kLanes) {
    std::array<float, kLanes> q{};
    for (const int64_t end = i + std::min(kBlock, (n - i) / kLanes * kLanes); i < end; i += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const float d = a[i + l] - b[i + l];
        q[size_t(l)] += d * d;
      }
    for (float v : q) total += v;
  }
  for (; i < n; ++i) {
    const double d = double(a[i]) - b[i];
    total += d * d;
  }
  return total;
}

NodeStat output_stat(std::string node, const Tensor& output) {
  NodeStat s;
  s.node = std::move(node);
  s.histogram.assign(kHistogramBins, 0.f);
  // detach: reading the values must not join the autograd graph.
  const Tensor t = output.detach().to(Device::cpu()).contiguous();
  const int64_t count = t.numel();
  if (count == 0) return s;
  const float* data = t.data();

  Moments m = lane_moments(data, count);
  if (!std::isfinite(m.sum) || !std::isfinite(m.sum_sq)) m = exact_moments(data, count);
  s.finite = m.finite == count;
  s.zero_fraction = double(m.zeros) / double(count);

  // The values as [outer, units, inner]: a unit's values are `inner` consecutive floats. A
  // unit is alive once one value is not zero; its later values need no look.
  const Shape& shape = t.shape();
  int64_t units = 1, inner = 1;
  if (shape.size() == 2 || shape.size() == 3) {
    units = shape.back();
  } else if (shape.size() >= 4) {
    units = shape[1];
    inner = count / (shape[0] * shape[1]);
  }
  const int64_t outer = count / (units * inner);
  std::vector<unsigned char> alive(size_t(units), 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t u = 0; u < units; ++u) {
      if (alive[size_t(u)]) continue;
      const float* p = data + (o * units + u) * inner;
      alive[size_t(u)] = std::any_of(p, p + inner, [](float v) { return v != 0.f; });
    }
  s.dead_fraction = double(std::count(alive.begin(), alive.end(), 0)) / double(units);
  if (m.finite == 0) return s;

  s.min = m.lo;
  s.max = m.hi;
  s.mean = m.sum / double(m.finite);
  s.std = std::sqrt(std::max(0.0, m.sum_sq / double(m.finite) - s.mean * s.mean));

  // The histogram over [min, max]; the maximum goes to the last bin.
  std::array<int64_t, kHistogramBins> bins{};
  const double scale = m.hi > m.lo ? kHistogramBins / (double(m.hi) - double(m.lo)) : 0.0;
  const int64_t stride = (count + kHistogramValues - 1) / kHistogramValues;
  int64_t counted = 0;
  for (int64_t i = 0; i < count; i += stride) {
    const float v = data[i];
    if (!std::isfinite(v)) continue;
    ++counted;
    ++bins[size_t(std::min<int64_t>(int64_t((double(v) - m.lo) * scale), kHistogramBins - 1))];
  }
  for (int b = 0; b < kHistogramBins && counted > 0; ++b)
    s.histogram[size_t(b)] = float(double(bins[size_t(b)]) / double(counted));
  return s;
}

}  // namespace plexus::train
