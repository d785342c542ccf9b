#include "tensor/generator.h"

#include <cmath>

namespace plexus {
namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

void Generator::manual_seed(uint64_t seed) {
  seed_ = seed;
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
  has_spare_ = false;
}

Generator::State Generator::state() const {
  State st;
  st.seed = seed_;
  for (int i = 0; i < 4; ++i) st.s[i] = s_[i];
  st.has_spare = has_spare_;
  st.spare = spare_;
  return st;
}

void Generator::set_state(const State& st) {
  seed_ = st.seed;
  for (int i = 0; i < 4; ++i) s_[i] = st.s[i];
  has_spare_ = st.has_spare;
  spare_ = st.spare;
}

uint64_t Generator::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

float Generator::uniform() { return float(next_u64() >> 40) * 0x1.0p-24f; }

float Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // u1 in (0, 1] so log(u1) is finite.
  const double u1 = (double(next_u64() >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = double(next_u64() >> 11) * 0x1.0p-53;
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_ = float(r * std::sin(theta));
  has_spare_ = true;
  return float(r * std::cos(theta));
}

Generator& default_generator() {
  static Generator gen;
  return gen;
}

void manual_seed(uint64_t seed) {
  std::lock_guard lock(default_generator().mutex());
  default_generator().manual_seed(seed);
}

}  // namespace plexus
