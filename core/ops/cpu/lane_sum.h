#pragma once
// Σ f(j) over j < d in double, in kLanes independent partial sums: without reassociation
// (no -ffast-math) one running sum would be a serial chain of dependent adds the compiler
// cannot vectorise. The normalisations' statistics (batch_norm.cpp, layer_norm.cpp) use it.
#include <cstdint>

namespace plexus::cpu {

template <class F>
double lane_sum(int64_t d, F&& f) {
  constexpr int kLanes = 8;
  double acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= d; j += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += f(j + l);
  for (; j < d; ++j) acc[0] += f(j);
  double s = 0;
  for (double a : acc) s += a;
  return s;
}

}  // namespace plexus::cpu
