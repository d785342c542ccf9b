#include "util/threads.h"

#include <cblas.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "util/error.h"

namespace plexus {
namespace {

int read_int(const std::string& path) {
  int v = -1;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    if (std::fscanf(f, "%d", &v) != 1) v = -1;
    std::fclose(f);
  }
  return v;
}

int default_threads() {
  if (const char* env = std::getenv("PLEXUS_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return physical_cores();
}

std::atomic<int>& current() {
  static std::atomic<int> n = [] {
    openblas_set_num_threads(1);  // our pool splits the products (util/parallel.h)
    return default_threads();
  }();
  return n;
}

}  // namespace

int physical_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int logical = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                                  : int(std::thread::hardware_concurrency());
  std::set<std::pair<int, int>> cores;  // (package, core) pairs
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    const std::string topo = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    const int package = read_int(topo + "physical_package_id"), core = read_int(topo + "core_id");
    if (package < 0 || core < 0) return std::max(1, logical);  // no topology: count logical CPUs
    cores.insert({package, core});
  }
  return std::max<int>(1, int(cores.size()));
}

int num_threads() { return current().load(); }

void set_num_threads(int n) {
  if (n < 1) throw ValueError("set_num_threads: need at least 1 thread, got " + std::to_string(n));
  current().store(n);
}

}  // namespace plexus
