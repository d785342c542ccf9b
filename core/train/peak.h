#pragma once
// This machine's peak, to set a run's achieved GFLOP/s against (the train events'
// peak_gflops): the rate of our own matrix product (ops matmul: our CPU product on the
// training threads, cuBLAS on a GPU) on a square problem. Measured once and kept in a small
// cache file keyed by what decides it (the CPU model and thread count, or the GPU's name), so
// only the first run on a machine spends the fraction of a second.
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
};

// $XDG_CACHE_HOME/plexus/machine-peak.json, else $HOME/.cache/plexus/machine-peak.json; ""
// when neither variable is set. (core has no Qt: the GUI passes its own cache folder.)
std::filesystem::path default_peak_cache();

// The peak of `device` with this thread's thread count (num_threads()): from `cache` when it
// holds that key, else measured now (about 0.2 s, on this thread: call it on the thread that
// will train, never on a UI thread) and added to `cache`. The cache is best effort: a missing
// or unreadable file means measuring, one that cannot be written is left as it was, and ""
// means no cache. Delete the file to measure again (after a change of hardware settings).
// On a GPU with `precision` bf16 it is the peak of bf16 products (ops/precision.h), kept
// under its own key; the CPU computes in FP32 whatever the setting.
MachinePeak machine_peak(Device device, const std::filesystem::path& cache, Precision precision = Precision::FP32);

}  // namespace plexus::train
