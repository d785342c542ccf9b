#pragma once
// The bookkeeping the caching allocators share (CPU memory, CUDA device memory): a freed
// block waits in the free list of its size class and serves the next request of that class;
// statistics count what is in use, cached and the peak. `Source` supplies the memory:
//   void* obtain(size_t bytes);       // nullptr when out of memory (other failures throw)
//   void release(void* p);
//   [[noreturn]] void out_of_memory(size_t requested, const MemoryStats& stats);
//   bool refuses(size_t requested);   // optional: true refuses the request at once
// Running out first returns the cache to the source and retries once.
//
// Private pools (CUDA graph capture, cuda/step_graph.cu): while one is open, every allocation is
// served from blocks it owns and blocks it owns return to it when freed, so the memory a
// captured graph reads and writes is never handed to anyone else while the graph lives. A
// block of the shared pool freed while a private pool is open is held back too: the captured
// work still refers to it. Releasing the private pool gives all of this to the shared pool.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <stdexcept>
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
    // A source may refuse a request whatever the cache holds (the CPU's test hook, util/out_of_memory.h).
    if constexpr (requires { source_.refuses(bytes); })
      if (source_.refuses(bytes)) source_.out_of_memory(bytes, stats_);
    const bool priv = open_ != 0;
    std::vector<void*>& blocks = priv ? privates_[open_].free[cls] : free_[cls];
    void* p = nullptr;
    if (!blocks.empty()) {
      p = blocks.back();
      blocks.pop_back();
      stats_.bytes_cached -= int64_t(cls);
    } else {
      p = source_.obtain(cls);
      // No cache release while capturing: freeing device memory would end the capture.
      if (!p && !priv) {
        release_cached();
        p = source_.obtain(cls);
      }
      if (!p) source_.out_of_memory(bytes, stats_);
      ++stats_.system_allocations;
      if (priv) owner_[p] = open_;
    }
    stats_.bytes_in_use += int64_t(cls);
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use) stats_.peak_bytes_in_use = stats_.bytes_in_use;
    return p;
  }

  void deallocate(void* ptr, size_t bytes) override {
    if (!ptr) return;
    const size_t cls = size_class(bytes, step_, small_limit_);
    std::lock_guard lock(mu_);
    stats_.bytes_in_use -= int64_t(cls);
    stats_.bytes_cached += int64_t(cls);
    if (!owner_.empty()) {
      if (const auto it = owner_.find(ptr); it != owner_.end()) {
        privates_[it->second].free[cls].push_back(ptr);
        return;
      }
    }
    if (open_ != 0) {
      privates_[open_].held.emplace_back(cls, ptr);
      return;
    }
    free_[cls].push_back(ptr);
  }

  // Opens a new private pool (see above) and returns its id; one is open at a time.
  uint32_t open_private() {
    std::lock_guard lock(mu_);
    if (open_ != 0) throw std::logic_error("CachingPool: a private pool is already open");
    open_ = ++last_private_;
    privates_[open_];
    return open_;
  }
  // Allocations go to the shared pool again; the private pool stays reserved.
  void close_private() {
    std::lock_guard lock(mu_);
    open_ = 0;
  }
  // The private pool's blocks join the shared pool: free ones at once, the rest when freed.
  void release_private(uint32_t id) {
    std::lock_guard lock(mu_);
    if (open_ == id) open_ = 0;
    const auto it = privates_.find(id);
    if (it == privates_.end()) return;
    for (auto& [cls, blocks] : it->second.free) {
      std::vector<void*>& shared = free_[cls];
      shared.insert(shared.end(), blocks.begin(), blocks.end());
    }
    for (const auto& [cls, p] : it->second.held) free_[cls].push_back(p);
    privates_.erase(it);
    for (auto o = owner_.begin(); o != owner_.end();) o = o->second == id ? owner_.erase(o) : std::next(o);
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
  void release_cached() {  // the shared pool's cache; private pools keep theirs
    for (auto& [cls, blocks] : free_) {
      for (void* p : blocks) source_.release(p);
      stats_.bytes_cached -= int64_t(cls * blocks.size());
    }
    free_.clear();
  }

  Source source_;
  const size_t step_, small_limit_;
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  MemoryStats stats_;

  struct Private {
    std::unordered_map<size_t, std::vector<void*>> free;
    std::vector<std::pair<size_t, void*>> held;  // shared blocks freed while it was open
  };
  std::unordered_map<uint32_t, Private> privates_;
  std::unordered_map<void*, uint32_t> owner_;  // blocks obtained for a private pool
  uint32_t open_ = 0, last_private_ = 0;
};

}  // namespace plexus
