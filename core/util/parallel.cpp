#include "util/parallel.h"

#include <cblas.h>
#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "util/threads.h"

namespace plexus {
namespace {

thread_local bool t_in_region = false;

// After a job a worker spins this long for the next one before it sleeps: a training step
// issues parallel loops microseconds apart, and waking a sleeping thread costs tens of µs.
constexpr auto kSpin = std::chrono::microseconds(200);

class Pool {
 public:
  explicit Pool(int threads) : threads_(threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
  }
  ~Pool() {
    stop_.store(true);
    generation_.fetch_add(1);
    {
      std::lock_guard lock(sleep_mu_);
      wake_.notify_all();
    }
    for (std::thread& t : workers_) t.join();
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  int threads() const { return threads_; }

  // False when the pool is busy with another caller's loop.
  bool try_run(int parts, int64_t n, detail::ChunkFn fn, void* ctx) {
    std::unique_lock lock(busy_, std::try_to_lock);
    if (!lock) return false;
    fn_ = fn;
    ctx_ = ctx;
    n_ = n;
    parts_ = parts;
    remaining_.store(int(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1);  // seq_cst: pairs with the sleepers_ count in wait_for_change()
    if (sleepers_.load() > 0) {
      std::lock_guard sleep_lock(sleep_mu_);
      wake_.notify_all();
    }
    t_in_region = true;
    fn(ctx, 0, 0, n / parts);
    t_in_region = false;
    while (remaining_.load(std::memory_order_acquire) > 0) _mm_pause();
    return true;
  }

 private:
  void work(int index) {
    t_in_region = true;
    uint32_t seen = 0;  // the value at construction: a job published before we start still counts
    for (;;) {
      wait_for_change(seen);
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load()) return;
      if (index < parts_) fn_(ctx_, index, index * n_ / parts_, (index + 1) * n_ / parts_);
      remaining_.fetch_sub(1, std::memory_order_release);
    }
  }

  void wait_for_change(uint32_t seen) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0;; ++i) {
      if (generation_.load(std::memory_order_acquire) != seen) return;
      _mm_pause();
      if ((i & 255) == 255 && std::chrono::steady_clock::now() > until) break;
    }
    std::unique_lock lock(sleep_mu_);
    sleepers_.fetch_add(1);  // seq_cst: either the caller sees it and notifies, or we see its bump
    wake_.wait(lock, [&] { return generation_.load() != seen; });
    sleepers_.fetch_sub(1);
  }

  const int threads_;
  std::vector<std::thread> workers_;
  std::mutex busy_;
  std::atomic<uint32_t> generation_{0};
  std::atomic<int> remaining_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::mutex sleep_mu_;
  std::condition_variable wake_;
  // The current job; written by the caller before generation_ is bumped.
  detail::ChunkFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0;
  int parts_ = 1;
};

// Replaced when num_threads() changes; the last user of an old pool joins its workers.
// Never destroyed: a loop run during static destruction must still find it.
std::shared_ptr<Pool> pool() {
  static auto* mu = new std::mutex;
  static auto* current = new std::shared_ptr<Pool>;
  std::lock_guard lock(*mu);
  const int want = num_threads();
  if (!*current || (*current)->threads() != want) *current = std::make_shared<Pool>(want);
  return *current;
}

}  // namespace

int parallel_parts(int64_t n, int64_t grain) {
  const int64_t by_size = grain > 0 ? n / grain : n;
  return int(std::max<int64_t>(1, std::min<int64_t>(num_threads(), by_size)));
}

bool in_parallel_region() { return t_in_region; }

void detail::parallel_run(int64_t n, int64_t grain, ChunkFn fn, void* ctx) {
  if (n <= 0) return;
  const int parts = parallel_parts(n, grain);
  // Serial when small, nested, or when another thread has the pool; a single chunk leaves
  // the loops inside it free to use the pool (a product inside a one-image convolution).
  if (parts > 1 && !t_in_region && pool()->try_run(parts, n, fn, ctx)) return;
  fn(ctx, 0, 0, n);
}

}  // namespace plexus
