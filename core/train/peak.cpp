#include "train/peak.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "cuda/cuda.h"
#include "io/atomic_file.h"
#include "ops/cpu/sbgemm.h"
#include "ops/cpu/sgemm.h"
#include "ops/ops.h"
#include "train/trainer.h"
#include "util/threads.h"

namespace plexus::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// The value of /proc/cpuinfo's first `field` line ("model name", "flags", "cpu MHz"), or "".
std::string cpuinfo(const std::string& field) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field, 0) == 0 && line.find_first_not_of(" \t", field.size()) == line.find(':'))
      if (const size_t colon = line.find(':'); colon != std::string::npos && colon + 2 <= line.size())
        return line.substr(colon + 2);
  return "";
}

std::string cpu_model() {
  const std::string model = cpuinfo("model name");
  return model.empty() ? "unknown CPU" : model;
}

// The CPU's product kernel: its rate depends on it as much as on the CPU (OPENBLAS_CORETYPE
// pins OpenBLAS to narrower vectors, PLEXUS_GEMM=openblas turns our kernels off).
std::string cpu_kernel() {
  if (cpu::own_sgemm_enabled() || cpu::avx2_sgemm_enabled()) return cpu::product_kernel();
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  return core && *core ? "OpenBLAS (" + std::string(core) + ")" : "OpenBLAS";
}

// bf16 products have a peak of their own, about twice FP32's (vdpbf16ps, tensor cores).
std::string key_of(Device device, Precision precision) {
  const std::string bf16 = precision_on(device, precision) == Precision::BF16 ? ", bf16 products" : "";
  if (device.is_cpu())
    return "cpu " + cpu_model() + ", " + std::to_string(num_threads()) + " threads, " + cpu_kernel() + bf16 +
           (bf16.empty() ? "" : " (" + std::string(cpu::bf16_kernel()) + ")");
  return "cuda " + cuda::properties(device.index).name + bf16;
}

bool has_flag(const std::string& flags, const std::string& flag) {
  return (" " + flags + " ").find(" " + flag + " ") != std::string::npos;
}

// The cores' fastest clock in GHz: cpufreq's maximum where the kernel has it, else the clock
// /proc/cpuinfo reports (a VM's nominal one); 0 when neither is there.
double clock_ghz() {
  std::ifstream max_khz("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (double khz = 0; max_khz >> khz && khz > 0) return khz / 1e6;
  const std::string mhz = cpuinfo("cpu MHz");
  return mhz.empty() ? 0 : std::atof(mhz.c_str()) / 1e3;
}

std::string fixed(double v, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
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
double measure(Device device, int64_t n, double budget) {
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

// The best over sizes: a CPU kernel peaks where its blocks fit the caches, which differs
// between kernels and CPUs; a GPU needs a large problem to fill its units.
double measure(Device device, Precision precision) {
  const PrecisionGuard guard(precision);
  if (!device.is_cpu()) return measure(device, 4096, 0.15);
  double best = 0;
  for (const int64_t n : {256, 512, 1024}) best = std::max(best, measure(device, n, 0.07));
  return best;
}

json read_cache(const fs::path& cache) {
  std::ifstream in(cache);
  if (!in) return json::object();
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : json::object();
}

// Sets the entry of `peak.key` in `entries` and writes them to `cache`. Best effort: when
// it cannot be written, the next run measures again.
void write_entry(const fs::path& cache, json& entries, const MachinePeak& peak) {
  entries[peak.key] = {{"gflops", peak.gflops}, {"measured", peak.measured}};
  try {
    std::error_code ignored;
    fs::create_directories(cache.parent_path(), ignored);
    io::write_file_atomically(cache, entries.dump(2) + "\n");
  } catch (const std::exception&) {
  }
}

}  // namespace

MachinePeak cpu_bound(int threads, Precision precision) {
  MachinePeak bound;
  const double ghz = clock_ghz();
  if (ghz <= 0 || threads < 1) return bound;
  const std::string flags = cpuinfo("flags");
  // FP32 lanes of the widest vectors; an FMA is two flops. Without FMA, a multiply and an add
  // unit each take a vector a cycle, which counts the same.
  const auto [lanes, isa] = has_flag(flags, "avx512f") ? std::pair{16, "AVX-512"}
                            : has_flag(flags, "avx2")  ? std::pair{8, "AVX2"}
                                                       : std::pair{4, "SSE"};
  const bool pairs = precision_on(Device::cpu(), precision) == Precision::BF16;  // vdpbf16ps: 2 products a lane
  if (pairs && cpu::cpu_has_amx_bf16()) {  // a 16 x 16 x 32 tile product (16,384 flops) each 16 cycles a core
    bound.bound_gflops = double(threads) * 1024 * ghz;
    bound.bound = std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
                  " × AMX tiles, 1,024 bf16 flops a cycle × " + fixed(ghz, 2) + " GHz";
    return bound;
  }
  const int fma_units = 2;
  bound.bound_gflops = double(threads) * lanes * fma_units * 2 * ghz * (pairs ? 2 : 1);
  bound.bound = std::to_string(threads) + (threads == 1 ? " thread" : " threads") + " × " + std::to_string(lanes) +
                (pairs ? " lanes of bf16 pairs (AVX512_BF16) × 2 products" : " FP32 lanes (" + std::string(isa) + ")") +
                " × " + std::to_string(fma_units) + " FMA units × 2 flops × " + fixed(ghz, 2) + " GHz";
  return bound;
}

std::string describe(const MachinePeak& peak) {
  if (peak.gflops <= 0) return "";
  const bool cpu = peak.key.rfind("cpu ", 0) == 0;
  std::string text = std::string(cpu ? "the fastest our matrix product ran here (" : "the fastest cuBLAS product ran here (") +
                     peak.key + (peak.measured.empty() ? "" : ", measured " + peak.measured) + "): " +
                     fixed(peak.gflops, 0) + " GFLOP/s";
  if (peak.bound_gflops > 0)
    text += ". The hardware's bound, " + peak.bound + ", is " + fixed(peak.bound_gflops, 0) + " GFLOP/s";
  return text + ".";
}

fs::path default_peak_cache() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path base = xdg && *xdg ? fs::path(xdg) : home && *home ? fs::path(home) / ".cache" : fs::path();
  return base.empty() ? base : base / "plexus" / "machine-peak.json";
}

MachinePeak machine_peak(Device device, const fs::path& cache, Precision precision) {
  MachinePeak peak = device.is_cpu() ? cpu_bound(num_threads(), precision) : MachinePeak{};
  peak.key = key_of(device, precision);
  json entries = cache.empty() ? json::object() : read_cache(cache);
  if (const auto it = entries.find(peak.key); it != entries.end() && it->is_object()) {
    const json& e = *it;
    if (e.contains("gflops") && e["gflops"].is_number() && e["gflops"].get<double>() > 0 && e.contains("measured") &&
        e["measured"].is_string())
    {
      peak.gflops = e["gflops"].get<double>();
      peak.measured = e["measured"].get<std::string>();
      peak.cached = true;
      return peak;
    }
  }
  try {
    peak.gflops = measure(device, precision);
  } catch (const std::exception&) {
    return peak;  // no figure rather than no run: training reports the failure if there is one
  }
  peak.measured = today();
  if (cache.empty()) return peak;
  write_entry(cache, entries, peak);
  return peak;
}

void remember_faster_run(const MachinePeak& peak, const RunResult& result, const fs::path& cache) {
  double fastest = 0;
  for (const EpochEnd& e : result.history) fastest = std::max(fastest, e.gflops);
  if (cache.empty() || peak.gflops <= 0 || fastest <= peak.gflops) return;
  MachinePeak raised = peak;
  raised.gflops = fastest;
  raised.measured = today();
  json entries = read_cache(cache);
  if (const auto it = entries.find(peak.key); it != entries.end() && it->is_object() && it->contains("gflops") &&
                                              (*it)["gflops"].is_number() && (*it)["gflops"].get<double>() >= fastest)
    return;  // another run raised it further meanwhile
  write_entry(cache, entries, raised);
}

}  // namespace plexus::train
