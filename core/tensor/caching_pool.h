#pragma once
// The bookkeeping the caching allocators share (CPU memory, CUDA device memory): a freed
// block waits in the free list of its size class and serves the next request of that class;
// statistics count what is in use, cached and the peak. `Source` supplies the memory:
//   void* obtain(size_t bytes);       // nullptr when out of memory (other failures throw)
//   void release(void* p);
//   [[noreturn]] void out_of_memory(size_t requested, const MemoryStats& stats);
// Running out first returns the cache to the source and retries once.
#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tensor/allocator.h"

namespace plexus {

// `step`-byte granularity up to `small_limit`, then four classes per power of two, so
// rounding wastes at most 25% and similar requests share blocks.
inline size_t size_class(size_t bytes, size_t step, size_t small_limit) {
  if (bytes == 0) bytes = 1;
  if (bytes <= small_limit) return (bytes + step - 1) / step * step;
  size_t pow2 = small_limit;
  while (pow2 * 2 < bytes) pow2 *= 2;
  const size_t quarter = pow2 / 4;
  return (bytes + quarter - 1) / quarter * quarter;
}

template <class Source>
class CachingPool final : public Allocator {
 public:
  CachingPool(Source source, size_t step, size_t small_limit)
      : source_(std::move(source)), step_(step), small_limit_(small_limit) {}
  ~CachingPool() override = default;  // pools live for the whole process (see allocator_for)

  void* allocate(size_t bytes) override {
    const size_t cls = size_class(bytes, step_, small_limit_);
    std::lock_guard lock(mu_);
    ++stats_.allocations;
    void* p = nullptr;
    std::vector<void*>& blocks = free_[cls];
    if (!blocks.empty()) {
      p = blocks.back();
      blocks.pop_back();
      stats_.bytes_cached -= int64_t(cls);
    } else {
      p = source_.obtain(cls);
      if (!p) {
        release_cached();
        p = source_.obtain(cls);
      }
      if (!p) source_.out_of_memory(bytes, stats_);
      ++stats_.system_allocations;
    }
    stats_.bytes_in_use += int64_t(cls);
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use) stats_.peak_bytes_in_use = stats_.bytes_in_use;
    return p;
  }

  void deallocate(void* ptr, size_t bytes) override {
    if (!ptr) return;
    const size_t cls = size_class(bytes, step_, small_limit_);
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
      for (void* p : blocks) source_.release(p);
    free_.clear();
    stats_.bytes_cached = 0;
  }

  Source source_;
  const size_t step_, small_limit_;
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  MemoryStats stats_;
};

}  // namespace plexus
