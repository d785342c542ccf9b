#pragma once
// Seeded random numbers. Our own uniform/normal transforms (not <random>'s distributions,
// whose output differs between standard libraries) keep runs reproducible everywhere.
#include <cstdint>
#include <mutex>

namespace plexus {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0x5eed) { manual_seed(seed); }
  void manual_seed(uint64_t seed);
  uint64_t seed() const { return seed_; }

  uint64_t next_u64();    // xoshiro256**
  float uniform();        // [0, 1)
  float normal();         // N(0, 1), Box-Muller
  std::mutex& mutex() { return mu_; }  // held by ops that draw many numbers

 private:
  uint64_t seed_ = 0;
  uint64_t s_[4] = {};
  bool has_spare_ = false;
  float spare_ = 0.f;
  std::mutex mu_;
};

Generator& default_generator();
void manual_seed(uint64_t seed);  // seeds the default generator

}  // namespace plexus
