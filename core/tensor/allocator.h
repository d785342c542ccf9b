#pragma once
// Per-device memory. Both allocators cache freed blocks by size class so a steady training
// step reuses the same memory instead of calling malloc / cudaMalloc (and taking page faults
// or device synchronisations) every time, as Knet's KnetArray pools and PyTorch's caching
// allocator do. Reserved memory = bytes_in_use + bytes_cached.
#include <cstddef>
#include <cstdint>

#include "tensor/device.h"

namespace plexus {

struct MemoryStats {
  int64_t bytes_in_use = 0;     // held by live storages (rounded to size classes)
  int64_t bytes_cached = 0;     // freed, kept for reuse
  int64_t peak_bytes_in_use = 0;
  int64_t allocations = 0;      // requests served
  int64_t system_allocations = 0;  // requests that reached the system allocator
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr, size_t bytes) = 0;
  virtual MemoryStats stats() const = 0;
  virtual void empty_cache() = 0;  // give cached blocks back to the system
};

Allocator& allocator_for(Device device);
// Page-locked host memory for staging copies to a CUDA device (cuda/allocator.cu); a block
// freed while a copy from it may still be queued is reused only after that copy is done.
Allocator& pinned_allocator();
MemoryStats memory_stats(Device device = Device::cpu());

}  // namespace plexus
