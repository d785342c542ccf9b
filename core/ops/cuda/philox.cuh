#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator, so element i of a random fill is a pure function of (key, i) and
// any launch shape gives the same numbers. Included by backend.cu only.
#include <cstdint>

namespace plexus::cuda {
namespace {

struct Philox128 {
  uint64_t a, b;  // 128 random bits
};

__device__ __forceinline__ Philox128 philox4x32_10(uint64_t key, uint64_t counter) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0, c3 = 0;
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(kM0, c0), lo0 = kM0 * c0;
    const uint32_t hi1 = __umulhi(kM1, c2), lo1 = kM1 * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  return {(uint64_t(c0) << 32) | c1, (uint64_t(c2) << 32) | c3};
}

// Uniform in [0, 1) with a 24-bit mantissa, as Generator::uniform.
__device__ __forceinline__ float uniform_at(uint64_t key, uint64_t i) {
  return float(philox4x32_10(key, i).a >> 40) * 0x1.0p-24f;
}

// N(0, 1) by Box-Muller as Generator::normal: elements 2k and 2k+1 share one pair (u1, u2) and
// take r*cos and r*sin.
__device__ __forceinline__ float normal_at(uint64_t key, uint64_t i) {
  const Philox128 bits = philox4x32_10(key, i >> 1);
  const double u1 = (double(bits.a >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]: log is finite
  const double u2 = double(bits.b >> 11) * 0x1.0p-53;
  const double r = sqrt(-2.0 * log(u1));
  const double theta = 6.283185307179586476925 * u2;
  return float((i & 1) ? r * sin(theta) : r * cos(theta));
}

}  // namespace
}  // namespace plexus::cuda
