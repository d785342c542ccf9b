// Device memory through a caching allocator (tensor/caching_pool.h), page-locked host memory
// for staging, and the copies between them.
//
// Device blocks are cached by size class and reused at once when freed: every kernel and copy
// of a device runs on its one stream, so work queued later cannot overtake work that still
// reads the old contents. Running out of memory first returns the cache to CUDA and retries;
// if that fails too, the error names the request and the allocator's statistics.
//
// A pinned host block may be the source of a copy that is still queued when its tensor dies,
// so a freed block carries an event recorded on every active stream and is handed out again
// only once those events have completed.
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/cuda.h"
#include "cuda/runtime.h"
#include "tensor/caching_pool.h"
#include "util/error.h"

namespace plexus::cuda {
namespace {

// 512-byte steps below 1 MiB (cudaMalloc aligns to 256 bytes anyway).
constexpr size_t kStep = 512, kSmallLimit = size_t(1) << 20;

std::string mib(int64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
  return b;
}

struct DeviceMemory {
  int index;

  void* obtain(size_t bytes) {
    use_device(index);
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // out of memory is not sticky; clear it so the retry starts clean
      return nullptr;
    }
    check(e, ("cudaMalloc(" + std::to_string(bytes) + " bytes)").c_str());
    return p;
  }
  // cudaFree waits for the device, so no queued kernel still uses a block it returns.
  void release(void* p) {
    use_device(index);
    check(cudaFree(p), "cudaFree");
  }
  [[noreturn]] void out_of_memory(size_t bytes, const MemoryStats& s) {
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    cudaGetLastError();
    throw DeviceError("out of memory on cuda:" + std::to_string(index) + ": requested " + std::to_string(bytes) +
                      " bytes (" + mib(int64_t(bytes)) + "); in use " + mib(s.bytes_in_use) + ", cached " +
                      mib(s.bytes_cached) + ", peak " + mib(s.peak_bytes_in_use) + ", device free " +
                      mib(int64_t(free_bytes)) + " of " + mib(int64_t(total)));
  }
};

class PinnedHostAllocator final : public Allocator {
  struct Freed {
    void* ptr;
    std::vector<cudaEvent_t> events;  // recorded on each active stream at free time
  };

 public:
  void* allocate(size_t bytes) override {
    const size_t cls = size_class(bytes, kStep, kSmallLimit);
    std::lock_guard lock(mu_);
    ++stats_.allocations;
    void* p = nullptr;
    auto& blocks = free_[cls];
    for (size_t i = 0; i < blocks.size() && !p; ++i)
      if (completed(blocks[i])) {
        p = blocks[i].ptr;
        recycle(blocks[i].events);
        blocks.erase(blocks.begin() + std::ptrdiff_t(i));
        stats_.bytes_cached -= int64_t(cls);
      }
    if (!p) {
      const cudaError_t e = cudaHostAlloc(&p, cls, cudaHostAllocDefault);
      if (e != cudaSuccess) {
        cudaGetLastError();
        throw DeviceError("cudaHostAlloc(" + std::to_string(cls) + " bytes) failed: " + cudaGetErrorString(e) +
                          " (page-locked host memory for copies to the GPU)");
      }
      ++stats_.system_allocations;
    }
    stats_.bytes_in_use += int64_t(cls);
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
    return p;
  }

  void deallocate(void* ptr, size_t bytes) override {
    if (!ptr) return;
    const size_t cls = size_class(bytes, kStep, kSmallLimit);
    Freed f{ptr, {}};
    for (int d = 0; d < device_count(); ++d) {
      use_device(d);
      cudaEvent_t e = take_event();
      check(cudaEventRecord(e, stream(d)), "cudaEventRecord");
      f.events.push_back(e);
    }
    std::lock_guard lock(mu_);
    free_[cls].push_back(std::move(f));
    stats_.bytes_in_use -= int64_t(cls);
    stats_.bytes_cached += int64_t(cls);
  }

  MemoryStats stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }

  void empty_cache() override {
    std::lock_guard lock(mu_);
    for (auto& [cls, blocks] : free_)
      for (Freed& f : blocks) {
        for (cudaEvent_t e : f.events) check(cudaEventSynchronize(e), "cudaEventSynchronize");
        recycle(f.events);
        check(cudaFreeHost(f.ptr), "cudaFreeHost");
      }
    free_.clear();
    stats_.bytes_cached = 0;
  }

 private:
  static bool completed(const Freed& f) {
    for (cudaEvent_t e : f.events) {
      const cudaError_t s = cudaEventQuery(e);
      if (s == cudaErrorNotReady) return false;
      check(s, "cudaEventQuery");
    }
    return true;
  }
  cudaEvent_t take_event() {
    {
      std::lock_guard lock(mu_);
      if (!events_.empty()) {
        cudaEvent_t e = events_.back();
        events_.pop_back();
        return e;
      }
    }
    cudaEvent_t e;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    return e;
  }
  void recycle(std::vector<cudaEvent_t>& es) {  // mu_ held
    events_.insert(events_.end(), es.begin(), es.end());
    es.clear();
  }

  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<Freed>> free_;
  std::vector<cudaEvent_t> events_;
  MemoryStats stats_;
};

}  // namespace

namespace {
using DevicePool = CachingPool<DeviceMemory>;

DevicePool& device_pool(int index) {
  check_available(Device::cuda(index));
  static std::mutex mu;
  // Leaked on purpose: storages freed during static destruction must still find them.
  static std::vector<DevicePool*> pools(size_t(device_count()), nullptr);
  std::lock_guard lock(mu);
  auto& a = pools[size_t(index)];
  if (!a) a = new DevicePool(DeviceMemory{index}, kStep, kSmallLimit);
  return *a;
}
}  // namespace

Allocator& device_allocator(int index) { return device_pool(index); }

uint32_t open_private_pool(int index) { return device_pool(index).open_private(); }
void close_private_pool(int index) { device_pool(index).close_private(); }
void release_private_pool(int index, uint32_t id) { device_pool(index).release_private(id); }

Allocator& host_pinned_allocator() {
  static auto* pinned = new PinnedHostAllocator();
  return *pinned;
}

void copy_to_device(float* dst, int index, const float* src, int64_t count) {
  if (count == 0) return;
  use_device(index);
  check(cudaMemcpyAsync(dst, src, size_t(count) * sizeof(float), cudaMemcpyHostToDevice, stream(index)),
        "cudaMemcpyAsync (host to device)");
}

void copy_to_host(float* dst, const float* src, int index, int64_t count) {
  if (count > 0) {
    use_device(index);
    // Small reads (a loss, a few statistics) bounce through page-locked memory: a truly
    // asynchronous copy, so the one wait in synchronize_stream covers it and the fault record.
    constexpr int64_t kBounce = 16384;  // floats
    if (count <= kBounce) {
      static std::mutex mu;
      static std::unordered_map<int, float*> buffers;  // one per device, kept for the process
      std::lock_guard lock(mu);
      float*& bounce = buffers[index];
      if (!bounce)
        check(cudaHostAlloc(reinterpret_cast<void**>(&bounce), kBounce * sizeof(float), cudaHostAllocDefault),
              "cudaHostAlloc (bounce buffer for reads from the GPU)");
      check(cudaMemcpyAsync(bounce, src, size_t(count) * sizeof(float), cudaMemcpyDeviceToHost, stream(index)),
            "cudaMemcpyAsync (device to host)");
      synchronize_stream(index);
      std::memcpy(dst, bounce, size_t(count) * sizeof(float));
      return;
    }
    check(cudaMemcpyAsync(dst, src, size_t(count) * sizeof(float), cudaMemcpyDeviceToHost, stream(index)),
          "cudaMemcpyAsync (device to host)");
  }
  synchronize_stream(index);
}

}  // namespace plexus::cuda
