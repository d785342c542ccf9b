#pragma once
// The core's one CPU thread pool. OpenBLAS runs single-threaded inside it: a matrix product
// is split here into per-thread blocks, like every other large loop, so exactly one set of
// threads ever spins on the cores (two pools spinning on two cores slow everything down
// several times). The pool has num_threads() - 1 workers; the calling thread does the
// first chunk itself, then any chunk no worker has started (a worker whose core another
// thread took), so a preempted thread delays a loop by at most the chunk it is in. A parallel_for inside another (or while another thread holds the
// pool) runs serially on its caller, so kernels may nest them freely.
#include <cstdint>
#include <type_traits>

namespace plexus {

namespace detail {
using ChunkFn = void (*)(void* ctx, int chunk, int64_t begin, int64_t end);
void parallel_run(int64_t n, int64_t grain, int per_thread, ChunkFn fn, void* ctx);
}  // namespace detail

// The most chunks a loop is split into.
constexpr int kMaxParts = 1024;

// How many chunks parallel_for(n, grain, ...) splits [0, n) into: min(threads * per_thread,
// n / grain), at least 1, and 1 on one thread. Chunk c covers [c * n / parts, (c + 1) * n /
// parts), whichever thread runs it, so per-chunk partial results summed in chunk order give
// the same answer in every run. More chunks than threads balance a loop whose threads run at
// different speeds (a core shared with another process, a worker that wakes late).
int parallel_parts(int64_t n, int64_t grain, int per_thread = 1);

// Calls f(chunk, begin, end) on disjoint chunks covering [0, n), in parallel when there are
// threads and n >= 2 * grain. The chunk index (< parallel_parts(n, grain)) lets a caller
// keep per-chunk partial results (parallel_parts(n, grain, per_thread) of them). A thread
// may run several chunks, one after another. An exception f throws (a scratch buffer refused
// memory) ends its chunk only; the others still run, and the first is rethrown here after them.
template <class F>
void parallel_for_chunks(int64_t n, int64_t grain, F&& f, int per_thread = 1) {
  using Fn = std::remove_reference_t<F>;
  detail::parallel_run(
      n, grain, per_thread, [](void* ctx, int c, int64_t b, int64_t e) { (*static_cast<Fn*>(ctx))(c, b, e); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

// The same with f(begin, end).
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f, int per_thread = 1) {
  parallel_for_chunks(n, grain, [&f](int, int64_t b, int64_t e) { f(b, e); }, per_thread);
}

// True on a pool worker, and on a caller while it runs a parallel loop.
bool in_parallel_region();

}  // namespace plexus
