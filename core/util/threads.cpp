#include "util/threads.h"

#include <cblas.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "util/error.h"

namespace plexus {
namespace {
int default_threads() {
  if (const char* env = std::getenv("PLEXUS_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::atomic<int>& current() {
  static std::atomic<int> n = [] {
    const int d = default_threads();
    openblas_set_num_threads(d);
    return d;
  }();
  return n;
}
}  // namespace

int num_threads() { return current().load(); }

void set_num_threads(int n) {
  if (n < 1) throw ValueError("set_num_threads: need at least 1 thread, got " + std::to_string(n));
  current().store(n);
  openblas_set_num_threads(n);
}

}  // namespace plexus
