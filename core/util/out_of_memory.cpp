#include "util/out_of_memory.h"

#include <sys/resource.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "util/system_memory.h"

namespace plexus {
namespace {

std::atomic<uint64_t> g_refuse_from{0};

// The value in KiB of the line `key` of a /proc file ("MemAvailable:  8123456 kB"), as bytes;
// 0 when the file or the line is missing.
uint64_t proc_kib(const char* file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.compare(0, key.size(), key) == 0) {
      std::istringstream value(line.substr(key.size()));
      uint64_t kib = 0;
      value >> kib;
      return kib * 1024;
    }
  return 0;
}

}  // namespace

std::string memory_situation() {
  std::string text;
  try {  // the message is wanted most when memory is short: what cannot be read is left out
    const uint64_t total = physical_memory(), available = proc_kib("/proc/meminfo", "MemAvailable:");
    if (available && total)
      text = "the machine has " + memory_text(double(available)) + " of " + memory_text(double(total)) + " free";
    if (const uint64_t allowed = machine_memory(); allowed && allowed < total)
      text += (text.empty() ? "" : "; ") + std::string("this process's cgroup is limited to ") +
              memory_text(double(allowed));
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      text += (text.empty() ? "" : "; ") + std::string("this process is limited to ") +
              memory_text(double(limit.rlim_cur)) + " of address space (ulimit -v)";
      if (const uint64_t used = proc_kib("/proc/self/status", "VmSize:"))
        text += ", " + memory_text(double(used)) + " of it in use";
    }
  } catch (const std::exception&) {
  }
  return text;
}

void throw_out_of_memory(uint64_t bytes, const std::string& what_for) {
  g_refuse_from.store(0);  // the hook's one refusal has been reported
  const std::string situation = memory_situation();
  throw OutOfMemoryError("cannot allocate " + memory_text(double(bytes)) + " " + what_for +
                             (situation.empty() ? "" : " (" + situation + ")"),
                         bytes);
}

void refuse_allocations_from(uint64_t bytes) { g_refuse_from.store(bytes); }

bool allocation_refused_by_hook(uint64_t bytes) {
  const uint64_t from = g_refuse_from.load(std::memory_order_relaxed);
  return from != 0 && bytes >= from;
}

}  // namespace plexus
