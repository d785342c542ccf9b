#include "util/system_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace plexus {
namespace {

namespace fs = std::filesystem;

// The limit written in a cgroup file: a byte count, or "max" (none). v1 writes "no limit" as
// a huge page-aligned number, which min() with the physical memory then ignores.
std::optional<uint64_t> read_limit(const fs::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || value > (UINT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + uint64_t(c - '0');
  }
  return value;
}

// The lowest limit in `file` of the cgroup `path` (as /proc/self/cgroup names it) and of every
// cgroup above it, under the hierarchy mounted at `mount`. Inside a cgroup namespace the path
// is "/" and the mount's top is the container's own cgroup.
std::optional<uint64_t> lowest_limit(const fs::path& mount, const std::string& path, const char* file) {
  std::optional<uint64_t> lowest;
  for (fs::path p = fs::path(path).relative_path();; p = p.parent_path()) {
    if (const auto limit = read_limit(mount / p / file)) lowest = std::min(lowest.value_or(UINT64_MAX), *limit);
    if (p.empty()) break;
  }
  return lowest;
}

}  // namespace

uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return uint64_t(pages) * uint64_t(page_size);
}

std::optional<uint64_t> cgroup_memory_limit(const std::string& proc_self_cgroup, const fs::path& root) {
  std::optional<uint64_t> lowest;
  const auto lower = [&](std::optional<uint64_t> limit) {
    if (limit) lowest = std::min(lowest.value_or(UINT64_MAX), *limit);
  };
  // Lines "hierarchy-id:controllers:path"; v2 has id 0 and no controllers.
  std::istringstream lines(proc_self_cgroup);
  for (std::string line; std::getline(lines, line);) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      lower(lowest_limit(root, path, "memory.max"));
    } else {
      std::istringstream names(controllers);
      for (std::string name; std::getline(names, name, ',');)
        if (name == "memory") lower(lowest_limit(root / "memory", path, "memory.limit_in_bytes"));
    }
  }
  return lowest;
}

uint64_t machine_memory() {
  static const uint64_t memory = [] {
    std::ifstream in("/proc/self/cgroup");
    std::ostringstream text;
    text << in.rdbuf();
    const uint64_t physical = physical_memory();
    const std::optional<uint64_t> limit = cgroup_memory_limit(text.str(), "/sys/fs/cgroup");
    if (!limit) return physical;
    return physical ? std::min(physical, *limit) : *limit;
  }();
  return memory;
}

std::string memory_text(double bytes) {
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  char buffer[48];
  if (bytes < 1024) {
    std::snprintf(buffer, sizeof buffer, "%.0f bytes", bytes);
    return buffer;
  }
  size_t unit = 0;
  bytes /= 1024;
  // 1023.96 KiB would print as "1024.0 KiB": move up once it rounds to 1024.
  while (bytes >= 1023.95 && unit + 1 < std::size(units)) bytes /= 1024, ++unit;
  // Absurd sizes (a graph's estimate can pass 1024 EiB) keep three digits in exponent form.
  std::snprintf(buffer, sizeof buffer, bytes < 1023.95 ? "%.1f %s" : "%.3g %s", bytes, units[unit]);
  return buffer;
}

}  // namespace plexus
