#include "train/node_stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "tensor/tensor.h"

namespace plexus::train {

NodeStat output_stat(std::string node, const Tensor& output) {
  NodeStat s;
  s.node = std::move(node);
  s.histogram.assign(kHistogramBins, 0.f);
  // detach: reading the values must not join the autograd graph.
  const Tensor t = output.detach().to(Device::cpu()).contiguous();
  const int64_t count = t.numel();
  if (count == 0) return s;
  const Shape& shape = t.shape();
  // The values as [outer, units, inner]: a unit's values are `inner` consecutive floats.
  int64_t units = 1, inner = 1;
  if (shape.size() == 2 || shape.size() == 3) {
    units = shape.back();
  } else if (shape.size() >= 4) {
    units = shape[1];
    inner = count / (shape[0] * shape[1]);
  }
  const int64_t outer = count / (units * inner);
  const float* data = t.data();

  // Pass 1: moments and range of the finite non-zero values (zeros are folded in after), the
  // zeros, and which units were non-zero for some example.
  std::vector<unsigned char> alive(size_t(units), 0);
  double sum = 0, sum_sq = 0;
  int64_t nonzero_finite = 0, zeros = 0;
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t u = 0; u < units; ++u) {
      const float* p = data + (o * units + u) * inner;
      int64_t unit_zeros = 0;
      for (int64_t i = 0; i < inner; ++i) {
        const float v = p[i];
        if (v == 0.f) {
          ++unit_zeros;
        } else if (std::isfinite(v)) {
          ++nonzero_finite;
          sum += v;
          sum_sq += double(v) * v;
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
      zeros += unit_zeros;
      if (unit_zeros < inner) alive[size_t(u)] = 1;
    }
  const int64_t finite = nonzero_finite + zeros;
  s.finite = finite == count;
  s.zero_fraction = double(zeros) / double(count);
  s.dead_fraction = double(std::count(alive.begin(), alive.end(), 0)) / double(units);
  if (finite == 0) return s;
  if (zeros > 0) {
    lo = std::min(lo, 0.f);
    hi = std::max(hi, 0.f);
  }
  s.min = lo;
  s.max = hi;
  s.mean = sum / double(finite);
  s.std = std::sqrt(std::max(0.0, sum_sq / double(finite) - s.mean * s.mean));

  // Pass 2: the histogram over [min, max]; the maximum goes to the last bin.
  std::array<int64_t, kHistogramBins> bins{};
  const double scale = hi > lo ? kHistogramBins / (double(hi) - double(lo)) : 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const float v = data[i];
    if (!std::isfinite(v)) continue;
    ++bins[size_t(std::min<int64_t>(int64_t((double(v) - lo) * scale), kHistogramBins - 1))];
  }
  for (int b = 0; b < kHistogramBins; ++b) s.histogram[size_t(b)] = float(double(bins[size_t(b)]) / double(finite));
  return s;
}

}  // namespace plexus::train
