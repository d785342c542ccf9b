// The caching pool's private pools (tensor/caching_pool.h), which keep the memory a captured
// CUDA graph uses away from everyone else while the graph lives. Tested on a fake source of
// numbered blocks, so it runs on every machine.
#include "support/check.h"

#include <cstdint>
#include <new>
#include <set>
#include <vector>

#include "tensor/caching_pool.h"

using namespace plexus;

namespace {

// Hands out distinct fake addresses and remembers what was released.
struct FakeSource {
  std::vector<uintptr_t>* released;
  uintptr_t next = 0x1000;
  size_t limit_blocks = 1000;
  size_t obtained = 0;

  void* obtain(size_t bytes) {
    if (obtained == limit_blocks) return nullptr;
    ++obtained;
    const uintptr_t p = next;
    next += bytes + 0x1000;
    return reinterpret_cast<void*>(p);
  }
  void release(void* p) { released->push_back(reinterpret_cast<uintptr_t>(p)); }
  [[noreturn]] void out_of_memory(size_t, const MemoryStats&) { throw std::bad_alloc(); }
};

}  // namespace

TEST(sharedBlocksAreReused) {
  std::vector<uintptr_t> released;
  CachingPool<FakeSource> pool(FakeSource{&released}, 512, 1 << 20);
  void* a = pool.allocate(1000);
  pool.deallocate(a, 1000);
  COMPARE(pool.allocate(1000), a);  // same size class: the cached block
  COMPARE(pool.stats().system_allocations, int64_t(1));
}

TEST(aPrivatePoolNeverServesOrTakesSharedBlocks) {
  std::vector<uintptr_t> released;
  CachingPool<FakeSource> pool(FakeSource{&released}, 512, 1 << 20);
  void* shared_free = pool.allocate(1000);
  void* shared_live = pool.allocate(1000);
  pool.deallocate(shared_free, 1000);  // cached in the shared pool

  const uint32_t id = pool.open_private();
  VERIFY(id != 0);
  void* inside = pool.allocate(1000);
  VERIFY2(inside != shared_free, "a capture must not be served a shared block");
  pool.deallocate(inside, 1000);
  COMPARE(pool.allocate(1000), inside);  // reused within the capture: same stream order
  // A shared block freed during the capture is held: the captured work still reads it.
  pool.deallocate(shared_live, 1000);
  void* kept = pool.allocate(1000 * 2);  // another class, from the source
  pool.close_private();

  // Outside the capture the shared pool serves what it had, never the private blocks or
  // the held one.
  void* after = pool.allocate(1000);
  COMPARE(after, shared_free);
  void* fresh = pool.allocate(1000);
  VERIFY(fresh != inside && fresh != shared_live);
  // A private block freed after the capture goes back to its pool, not to the shared one.
  pool.deallocate(inside, 1000);
  void* again = pool.allocate(1000);
  VERIFY(again != inside && again != shared_live);

  // Releasing the private pool hands everything over: its free block and the held one are
  // now served to the shared pool, and its live block returns there when freed.
  pool.release_private(id);
  std::set<void*> served{pool.allocate(1000), pool.allocate(1000)};
  VERIFY(served.count(inside) && served.count(shared_live));
  pool.deallocate(kept, 2000);
  COMPARE(pool.allocate(2000), kept);
}

TEST(statisticsCountPrivateBlocks) {
  std::vector<uintptr_t> released;
  CachingPool<FakeSource> pool(FakeSource{&released}, 512, 1 << 20);
  const uint32_t id = pool.open_private();
  void* a = pool.allocate(512);
  COMPARE(pool.stats().bytes_in_use, int64_t(512));
  pool.deallocate(a, 512);
  pool.close_private();
  COMPARE(pool.stats().bytes_in_use, int64_t(0));
  COMPARE(pool.stats().bytes_cached, int64_t(512));
  // empty_cache returns the shared cache only: the private block stays reserved.
  void* s = pool.allocate(1024);
  pool.deallocate(s, 1024);
  pool.empty_cache();
  COMPARE(pool.stats().bytes_cached, int64_t(512));
  COMPARE(released.size(), size_t(1));
  pool.release_private(id);
  pool.empty_cache();
  COMPARE(pool.stats().bytes_cached, int64_t(0));
  COMPARE(released.size(), size_t(2));
}

TEST(noCacheReleaseWhileCapturing) {
  // Out of memory during a capture must not free cached blocks (that would end the
  // capture): the request fails instead.
  std::vector<uintptr_t> released;
  FakeSource source{&released};
  source.limit_blocks = 1;
  CachingPool<FakeSource> pool(source, 512, 1 << 20);
  void* a = pool.allocate(512);
  pool.deallocate(a, 512);
  pool.open_private();
  VERIFY_THROWS(std::bad_alloc, pool.allocate(512));
  VERIFY(released.empty());
  pool.close_private();
  COMPARE(pool.allocate(512), a);
}

TEST(oneOpenAtATime) {
  std::vector<uintptr_t> released;
  CachingPool<FakeSource> pool(FakeSource{&released}, 512, 1 << 20);
  pool.open_private();
  VERIFY_THROWS(std::logic_error, pool.open_private());
}

