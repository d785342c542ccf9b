#include "tensor/allocator.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "cuda/cuda.h"
#include "tensor/caching_pool.h"
#include "util/out_of_memory.h"

namespace plexus {
namespace {

struct SystemMemory {
  void* obtain(size_t bytes) { return std::aligned_alloc(64, bytes); }
  void release(void* p) { std::free(p); }
  [[noreturn]] void out_of_memory(size_t bytes, const MemoryStats&) { throw_out_of_memory(bytes, "of CPU memory"); }
  bool refuses(size_t bytes) const { return allocation_refused_by_hook(bytes); }  // the test hook
};

}  // namespace

Allocator& allocator_for(Device device) {
  if (device.is_cpu()) {
    // Leaked on purpose: storages freed during static destruction must still find it.
    // 64-byte steps below 4 KiB.
    static auto* cpu = new CachingPool<SystemMemory>(SystemMemory{}, 64, 4096);
    return *cpu;
  }
  return cuda::device_allocator(device.index);
}

Allocator& pinned_allocator() { return cuda::host_pinned_allocator(); }

MemoryStats memory_stats(Device device) { return allocator_for(device).stats(); }

}  // namespace plexus
