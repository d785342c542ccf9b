#include "tensor/allocator.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "cuda/cuda.h"
#include "util/error.h"

namespace plexus {
namespace {

// Size classes: 64-byte granularity below 4 KiB, then four classes per power of two,
// so rounding wastes at most 25% and similar requests share blocks.
size_t size_class(size_t bytes) {
  if (bytes <= 4096) return (bytes + 63) & ~size_t(63);
  size_t pow2 = 4096;
  while (pow2 * 2 < bytes) pow2 *= 2;
  const size_t step = pow2 / 4;
  return (bytes + step - 1) / step * step;
}

class CpuCachingAllocator final : public Allocator {
 public:
  ~CpuCachingAllocator() override { empty_cache(); }

  void* allocate(size_t bytes) override {
    const size_t cls = size_class(bytes == 0 ? 1 : bytes);
    std::lock_guard lock(mu_);
    ++stats_.allocations;
    void* p = nullptr;
    auto it = free_.find(cls);
    if (it != free_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      stats_.bytes_cached -= int64_t(cls);
    } else {
      p = std::aligned_alloc(64, cls);
      if (!p) {
        release_cached();  // retry once with the cache returned to the system
        p = std::aligned_alloc(64, cls);
      }
      if (!p) throw Error("out of CPU memory allocating " + std::to_string(cls) + " bytes");
      ++stats_.system_allocations;
    }
    stats_.bytes_in_use += int64_t(cls);
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use) stats_.peak_bytes_in_use = stats_.bytes_in_use;
    return p;
  }

  void deallocate(void* ptr, size_t bytes) override {
    if (!ptr) return;
    const size_t cls = size_class(bytes == 0 ? 1 : bytes);
    std::lock_guard lock(mu_);
    free_[cls].push_back(ptr);
    stats_.bytes_in_use -= int64_t(cls);
    stats_.bytes_cached += int64_t(cls);
  }

  MemoryStats stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }

  void empty_cache() override {
    std::lock_guard lock(mu_);
    release_cached();
  }

 private:
  void release_cached() {
    for (auto& [cls, blocks] : free_)
      for (void* p : blocks) std::free(p);
    free_.clear();
    stats_.bytes_cached = 0;
  }

  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  MemoryStats stats_;
};

}  // namespace

Allocator& allocator_for(Device device) {
  if (device.is_cpu()) {
    // Leaked on purpose: storages freed during static destruction must still find it.
    static auto* cpu = new CpuCachingAllocator();
    return *cpu;
  }
  return cuda::device_allocator(device.index);
}

Allocator& pinned_allocator() { return cuda::host_pinned_allocator(); }

MemoryStats memory_stats(Device device) { return allocator_for(device).stats(); }

}  // namespace plexus
