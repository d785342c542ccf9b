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

  // Everything the next numbers depend on: a generator given this state draws what this one
  // would from here on (a run resumed in another process, session/resume.h).
  struct State {
    uint64_t seed = 0;
    uint64_t s[4] = {};
    bool has_spare = false;
    float spare = 0.f;
  };
  State state() const;
  void set_state(const State& state);

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
