#pragma once
// How much memory this process can have: the machine's physical memory, lowered by the memory
// limit of its cgroup (a container's or a systemd slice's), so that work which cannot fit is
// refused with a message instead of ending in an out-of-memory kill. The validator checks a
// graph's training estimate against it; dataset loading checks its float copies.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace plexus {

// Physical memory in bytes (sysconf: pages * page size); 0 when the system does not say.
uint64_t physical_memory();

// The lowest memory limit set on the cgroups of `proc_self_cgroup` (the text of
// /proc/self/cgroup) or on any cgroup above them, read under the cgroup mount `root`:
// cgroup v2 "memory.max" ("max" = no limit), v1 "memory/.../memory.limit_in_bytes". Files that
// are missing or unreadable set no limit. nullopt when none is set.
std::optional<uint64_t> cgroup_memory_limit(const std::string& proc_self_cgroup, const std::filesystem::path& root);

// min(physical memory, this process's cgroup limit under /sys/fs/cgroup), read once per
// process; 0 when neither is known (callers then skip their checks).
uint64_t machine_memory();

// A byte count in binary units for messages: "512 bytes", "1.5 KiB", "15.6 GiB", "2.0 PiB".
std::string memory_text(double bytes);

}  // namespace plexus
