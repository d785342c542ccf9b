#include "train/peak.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "cuda/cuda.h"
#include "io/atomic_file.h"
#include "ops/ops.h"
#include "util/threads.h"

namespace plexus::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0)
      if (const size_t colon = line.find(':'); colon != std::string::npos && colon + 2 <= line.size())
        return line.substr(colon + 2);
  return "unknown CPU";
}

std::string key_of(Device device, Precision precision) {
  if (device.is_cpu()) return "cpu " + cpu_model() + ", " + std::to_string(num_threads()) + " threads";
  return "cuda " + cuda::properties(device.index).name + (precision == Precision::BF16 ? ", bf16 products" : "");
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &local);
  return text;
}

// The best rate of n×n×n products over about `budget` seconds after one warm-up (the first
// call sizes buffers and wakes the pool): the peak is what the product reaches undisturbed.
// On a GPU each timing waits for the device.
double measure(Device device, Precision precision) {
  const PrecisionGuard guard(device.is_cpu() ? Precision::FP32 : precision);
  const int64_t n = device.is_cpu() ? 1024 : 4096;
  const double budget = 0.15;
  const Tensor a = full({n, n}, 0.5f, device), b = full({n, n}, 0.25f, device);
  const auto product = [&] {
    const Tensor c = matmul(a, b);
    if (!device.is_cpu()) cuda::synchronize(device);
  };
  product();
  double best = 0, spent = 0;
  for (int i = 0; i < 3 || (spent < budget && i < 50); ++i) {
    const auto t0 = Clock::now();
    product();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    spent += s;
    best = std::max(best, 2.0 * double(n) * double(n) * double(n) / s / 1e9);
  }
  return best;
}

json read_cache(const fs::path& cache) {
  std::ifstream in(cache);
  if (!in) return json::object();
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : json::object();
}

}  // namespace

fs::path default_peak_cache() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path base = xdg && *xdg ? fs::path(xdg) : home && *home ? fs::path(home) / ".cache" : fs::path();
  return base.empty() ? base : base / "plexus" / "machine-peak.json";
}

MachinePeak machine_peak(Device device, const fs::path& cache, Precision precision) {
  MachinePeak peak;
  peak.key = key_of(device, precision);
  json entries = cache.empty() ? json::object() : read_cache(cache);
  if (const auto it = entries.find(peak.key); it != entries.end() && it->is_object()) {
    const json& e = *it;
    if (e.contains("gflops") && e["gflops"].is_number() && e["gflops"].get<double>() > 0 && e.contains("measured") &&
        e["measured"].is_string())
      return {e["gflops"].get<double>(), peak.key, e["measured"].get<std::string>(), true};
  }
  try {
    peak.gflops = measure(device, precision);
  } catch (const std::exception&) {
    return peak;  // no figure rather than no run: training reports the failure if there is one
  }
  peak.measured = today();
  if (cache.empty()) return peak;
  entries[peak.key] = {{"gflops", peak.gflops}, {"measured", peak.measured}};
  try {
    std::error_code ignored;
    fs::create_directories(cache.parent_path(), ignored);
    io::write_file_atomically(cache, entries.dump(2) + "\n");
  } catch (const std::exception&) {
    // Best effort: the next run measures again.
  }
  return peak;
}

}  // namespace plexus::train
