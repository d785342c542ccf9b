#pragma once
// This machine's peak, to set a run's achieved GFLOP/s against (the train events'
// peak_gflops): the best rate of our own matrix product (ops matmul: our CPU product on the
// training threads, with the kernel this machine runs (AVX-512 or OpenBLAS's), cuBLAS on a
// GPU) over square problems of a few sizes. Measured once and kept in a small cache file keyed
// by what decides it (the CPU model, thread count and kernel, or the GPU's name), so only the
// first run on a machine spends the fraction of a second. Beside it, for CPUs, the hardware's
// bound: threads × FP32 lanes × FMA units × 2 flops × clock, which tells how far the best
// kernel is from the arithmetic the cores could do.
#include <filesystem>
#include <string>

#include "ops/precision.h"
#include "tensor/device.h"

namespace plexus::train {

struct MachinePeak {
  double gflops = 0;     // 0: not measured (a product that failed)
  std::string key;       // what it is the peak of: "cpu Intel(R) Xeon(R) ..., 2 threads", "cuda NVIDIA H100 ..."
  std::string measured;  // the day it was measured, "2026-11-25"
  bool cached = false;   // read from the cache file, not measured now
  // The hardware's bound and how it is worked out ("2 threads × 16 FP32 lanes (AVX-512) × 2 FMA
  // units × 2 flops × 3.70 GHz"); 0 and "" where it is not known (GPUs, CPUs without a clock).
  double bound_gflops = 0;
  std::string bound;
};

struct RunResult;

// A run whose epochs ran faster than `peak` (measured while the machine was busy, or by a
// kernel slower than the run's products) raises the cache's entry for `peak.key` to its
// fastest epoch: the fastest rate seen here is the machine's peak. Best effort, as the cache is.
void remember_faster_run(const MachinePeak& peak, const RunResult& result, const std::filesystem::path& cache);

// What a share of `peak` is of, for a tooltip: "the fastest our matrix product ran here (cpu
// ..., measured 2026-11-29): 190 GFLOP/s. The hardware's bound, 2 threads × ..., is 237
// GFLOP/s." "" when nothing was measured.
std::string describe(const MachinePeak& peak);

// The CPU bound of `threads` threads from /proc/cpuinfo (and cpufreq's maximum clock where the
// kernel exposes it), assuming two FMA units a core, as current x86 server cores have; a
// MachinePeak with only bound_gflops and bound set, both empty when the clock is unknown.
// With bf16 products (precision_on the CPU: AVX512_BF16) each lane multiplies a pair, twice FP32's;
// with AMX-BF16, a core's tiles do 1,024 flops a cycle.
MachinePeak cpu_bound(int threads, Precision precision = Precision::FP32);

// $XDG_CACHE_HOME/plexus/machine-peak.json, else $HOME/.cache/plexus/machine-peak.json; ""
// when neither variable is set. (core has no Qt: the GUI passes its own cache folder.)
std::filesystem::path default_peak_cache();

// The peak of `device` with this thread's thread count (num_threads()): from `cache` when it
// holds that key, else measured now (about 0.2 s, on this thread: call it on the thread that
// will train, never on a UI thread) and added to `cache`. The cache is best effort: a missing
// or unreadable file means measuring, one that cannot be written is left as it was, and ""
// means no cache. Delete the file to measure again (after a change of hardware settings).
// With `precision` bf16 it is the peak of bf16 products (ops/precision.h), kept under its own
// key, on a GPU and on a CPU with AVX512_BF16 (on any other CPU: FP32's).
MachinePeak machine_peak(Device device, const std::filesystem::path& cache, Precision precision = Precision::FP32);

}  // namespace plexus::train
