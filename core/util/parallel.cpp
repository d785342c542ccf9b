#include "util/parallel.h"

#include <cblas.h>
#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "util/subnormals.h"
#include "util/threads.h"

namespace plexus {
namespace {

thread_local bool t_in_region = false;

// After a job a worker spins this long for the next one before it sleeps, and the caller this
// long for the workers' chunks: a training step issues parallel loops microseconds apart, and
// waking a sleeping thread costs tens of µs.
constexpr auto kSpin = std::chrono::microseconds(200);

// Spins until `done()` or kSpin has passed; true when done.
template <class Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (done()) return true;
    _mm_pause();
    if ((i & 255) == 255 && std::chrono::steady_clock::now() > until) return false;
  }
}

// The caller runs chunk 0; every other chunk goes to whoever asks for it next, the caller
// included once its chunk is done, so a job of more chunks than threads balances itself. A
// worker that lost its core (to a GUI's thread, another process: the pool has as many threads
// as cores, so any other runnable thread preempts one of them) thus costs the job at most the
// chunk it had started, instead of the caller spinning until it runs again.
class Pool {
 public:
  explicit Pool(int threads) : threads_(threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    stop_.store(true);
    // Odd for good: a worker that read stop_ as false just before this cannot take it for a
    // job (the fields still describe the caller's last one, long returned), reads nothing,
    // and on its next look finds the sequence changed and stop_ set.
    sequence_.fetch_add(1);
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
    // Published under a sequence lock (odd while written): a worker may still be reading the
    // previous job, preempted since, and must see that it changed. The fields are stored with
    // release (no fences: ThreadSanitizer does not model them), so a worker that reads one
    // new value also sees the odd mark before it.
    const uint64_t before = sequence_.load(std::memory_order_relaxed);
    sequence_.store(before + 1, std::memory_order_relaxed);
    fn_.store(fn, std::memory_order_release);
    ctx_.store(ctx, std::memory_order_release);
    n_.store(n, std::memory_order_release);
    parts_.store(parts, std::memory_order_release);
    remaining_.store(parts - 1, std::memory_order_relaxed);
    const uint64_t job = before + 2;
    next_.store(job << kChunkBits | 1, std::memory_order_release);
    sequence_.store(job);  // seq_cst: pairs with the sleepers_ count in wait_for_change()
    if (sleepers_.load() > 0) {
      std::lock_guard sleep_lock(sleep_mu_);
      wake_.notify_all();
    }
    t_in_region = true;
    fn(ctx, 0, 0, n / parts);
    for (int c; claim(job, parts, c);) {  // the chunks no worker has started yet
      fn(ctx, c, c * n / parts, (c + 1) * n / parts);
      remaining_.fetch_sub(1);
    }
    t_in_region = false;
    wait_for_workers();
    return true;
  }

 private:
  struct Job {
    uint64_t id = 0;
    detail::ChunkFn fn = nullptr;
    void* ctx = nullptr;
    int64_t n = 0;
    int parts = 1;
  };

  // The job published now; false while one is being written.
  bool read_job(Job& job) const {
    job.id = sequence_.load(std::memory_order_acquire);
    if (job.id & 1) return false;
    // Acquire, each: the second look at the sequence cannot move before them.
    job.fn = fn_.load(std::memory_order_acquire);
    job.ctx = ctx_.load(std::memory_order_acquire);
    job.n = n_.load(std::memory_order_acquire);
    job.parts = parts_.load(std::memory_order_acquire);
    return sequence_.load(std::memory_order_relaxed) == job.id;
  }

  // Takes the next chunk c of job `job`; false when none is left or the job is no longer the
  // current one (a worker that read an older job takes nothing from a newer one).
  bool claim(uint64_t job, int parts, int& c) {
    uint64_t seen = next_.load(std::memory_order_relaxed);
    for (;;) {
      if (seen >> kChunkBits != (job << kChunkBits) >> kChunkBits) return false;
      c = int(seen & kChunkMask);
      if (c >= parts) return false;
      if (next_.compare_exchange_weak(seen, seen + 1)) return true;
    }
  }

  void work() {
    t_in_region = true;
    uint64_t seen = 0;  // the value at construction: a job published before we start still counts
    for (;;) {
      wait_for_change(seen);
      if (stop_.load()) return;
      Job job;
      if (!read_job(job)) continue;  // being written: look again
      seen = job.id;
      for (int c; claim(job.id, job.parts, c);) {
        job.fn(job.ctx, c, c * job.n / job.parts, (c + 1) * job.n / job.parts);
        // seq_cst, both: either the caller sees the count reach 0, or we see it waiting.
        if (remaining_.fetch_sub(1) == 1 && caller_waits_.load()) {
          std::lock_guard lock(done_mu_);
          done_.notify_one();
        }
      }
    }
  }

  // The caller, after its chunks: the workers' usually end within microseconds; past the
  // spin it sleeps, leaving its core to a worker that was preempted mid-chunk.
  void wait_for_workers() {
    if (spin_until([&] { return remaining_.load(std::memory_order_acquire) == 0; })) return;
    std::unique_lock lock(done_mu_);
    caller_waits_.store(true);
    done_.wait(lock, [&] { return remaining_.load() == 0; });
    caller_waits_.store(false);
  }

  void wait_for_change(uint64_t seen) {
    if (spin_until([&] { return sequence_.load(std::memory_order_acquire) != seen; })) return;
    std::unique_lock lock(sleep_mu_);
    sleepers_.fetch_add(1);  // seq_cst: either the caller sees it and notifies, or we see its bump
    wake_.wait(lock, [&] { return sequence_.load() != seen; });
    sleepers_.fetch_sub(1);
  }

  const int threads_;
  std::vector<std::thread> workers_;
  std::mutex busy_;
  std::atomic<uint64_t> sequence_{0};  // the current job's id (even), odd while one is written and once stopped
  // The current job's next chunk to hand out, under its id: job << kChunkBits | chunk.
  static constexpr int kChunkBits = 16;
  static constexpr uint64_t kChunkMask = (uint64_t(1) << kChunkBits) - 1;
  std::atomic<uint64_t> next_{0};
  std::atomic<int> remaining_{0};      // the current job's chunks past the first not done yet
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> caller_waits_{false};
  std::mutex sleep_mu_, done_mu_;
  std::condition_variable wake_, done_;
  // The current job, written by the caller inside the sequence lock.
  std::atomic<detail::ChunkFn> fn_{nullptr};
  std::atomic<void*> ctx_{nullptr};
  std::atomic<int64_t> n_{0};
  std::atomic<int> parts_{1};
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

int parallel_parts(int64_t n, int64_t grain, int per_thread) {
  const int threads = num_threads();
  if (threads < 2) return 1;
  const int64_t by_size = grain > 0 ? n / grain : n;
  const int64_t most = std::min<int64_t>(int64_t(threads) * std::max(1, per_thread), kMaxParts);
  return int(std::max<int64_t>(1, std::min<int64_t>(most, by_size)));
}

bool in_parallel_region() { return t_in_region; }

void detail::parallel_run(int64_t n, int64_t grain, int per_thread, ChunkFn fn, void* ctx) {
  if (n <= 0) return;
  // Every chunk, on whichever thread, runs under the subnormal setting read here
  // (util/subnormals.h); setting it per chunk leaves no thread's state behind.
  // An exception must not leave a pool worker (that would end the process): the first a chunk
  // throws is kept and rethrown on the caller once every chunk is done.
  struct Job {
    ChunkFn fn;
    void* ctx;
    bool flush;
    std::atomic<bool> failed{false};
    std::exception_ptr error;  // written by the one chunk that set `failed`
  } job{fn, ctx, flush_subnormals(), {}, {}};
  const ChunkFn chunk = [](void* c, int part, int64_t b, int64_t e) {
    Job& j = *static_cast<Job*>(c);
    const SubnormalScope subnormals(j.flush);
    try {
      j.fn(j.ctx, part, b, e);
    } catch (...) {
      if (!j.failed.exchange(true)) j.error = std::current_exception();
    }
  };
  const int parts = parallel_parts(n, grain, per_thread);
  // Serial when small, nested, or when another thread has the pool; a single chunk leaves
  // the loops inside it free to use the pool (a product inside a one-image convolution).
  if (parts <= 1 || t_in_region || !pool()->try_run(parts, n, chunk, &job)) chunk(&job, 0, 0, n);
  // The pool's end of the loop (wait_for_workers) orders the workers' writes before this read.
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace plexus
