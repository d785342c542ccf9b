// bench_matmul: plexus::matmul (its own AVX-512 or AVX2 product where the CPU has one, else OpenBLAS;
// ops/cpu/sgemm.h) against cblas_sgemm called directly on the same input buffers, in the
// same process, with the same thread count on both sides.
//
//   bench_matmul [--threads N] [--quick]
//
// For every shape: check once that both outputs agree, warm up, then alternate blocks of
// calls to ours and to the direct sgemm (so machine noise hits both sides alike) until each
// side has run for at least 0.3 s (0.05 s with --quick). Each block follows ~10 ms of untimed
// calls of its side, and ours waits 150 ms after OpenBLAS's block for its threads to stop
// spinning (they would otherwise run on our cores). Each call is timed on its own; the
// table shows the median and best per-call time as GFLOP/s, and ours/direct ratios
// (ratio = direct time / our time, so 1.0 means no overhead).
//
// Our matmul allocates its output on every call (from the caching allocator, so the same
// block comes back each time) and the timing includes freeing it; the direct side writes
// into one preallocated C. Always exits 0; the last line is "min ratio: X (target >= 0.95)",
// taken over the median ratios.
#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ops/cpu/sgemm.h"
#include "plexus.h"

using namespace plexus;
using Clock = std::chrono::steady_clock;

namespace {

struct Case {
  std::string name;
  Shape a_shape, b_shape;  // shapes of the stored (row-major) inputs
  bool ta, tb;             // ours multiplies a.t() / b.t() when set; BLAS gets CblasTrans
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--threads N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  // The same thread count for both sides: our pool (which runs our product) and OpenBLAS's.
  set_num_threads(threads);
  openblas_set_num_threads(threads);
  const double min_side_s = quick ? 0.05 : 0.3;

  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  const char* env_threads = std::getenv("OPENBLAS_NUM_THREADS");
  std::printf("OPENBLAS_CORETYPE=%s\n", coretype ? coretype : "(unset)");
  std::printf("OPENBLAS_NUM_THREADS=%s\n", env_threads ? env_threads : "(unset)");
  std::printf("openblas_get_num_threads()=%d (requested --threads %d)\n", openblas_get_num_threads(), threads);
  std::printf("openblas_get_config()=%s\n", openblas_get_config());
  std::printf("openblas_get_corename()=%s\n", openblas_get_corename());
  std::printf("plexus matrix product: %s, %d threads\n",
              cpu::product_kernel(), num_threads());
  std::printf("nproc=%ld (hardware_concurrency=%u)\n", sysconf(_SC_NPROCESSORS_ONLN),
              std::thread::hardware_concurrency());
  std::printf("min time per side per shape: %.2f s%s\n\n", min_side_s, quick ? " (--quick)" : "");

  const std::vector<Case> cases = {
      {"256x256 @ 256x256", {256, 256}, {256, 256}, false, false},
      {"512x512 @ 512x512", {512, 512}, {512, 512}, false, false},
      {"1024x1024 @ 1024x1024", {1024, 1024}, {1024, 1024}, false, false},
      {"x[100,784] @ w[784,128]", {100, 784}, {784, 128}, false, false},     // forward
      {"x.t() @ g[100,128]", {100, 784}, {100, 128}, true, false},          // dW = xᵀ·g
      {"g[100,128] @ w[784,128].t()", {100, 128}, {784, 128}, false, true},  // g·wᵀ
      // MLP 784-1024-1024-10 at batch 128 (bench_cpu's workload d), linear's own products:
      {"x[128,784] @ w[1024,784].t()", {128, 784}, {1024, 784}, false, true},      // forward
      {"h[128,1024] @ w[1024,1024].t()", {128, 1024}, {1024, 1024}, false, true},  // forward
      {"g[128,1024].t() @ h[128,1024]", {128, 1024}, {128, 1024}, true, false},    // dW
      {"g[128,1024] @ w[1024,1024]", {128, 1024}, {1024, 1024}, false, false},     // dX
      // The names transformer at sequence 256, batch 32 (8192 positions, width 64): the
      // feed-forward Linear's products, and one 64-query, 64-key tile of attention's.
      {"x[8192,64] @ w[256,64].t()", {8192, 64}, {256, 64}, false, true},     // forward
      {"g[8192,256] @ w[256,64]", {8192, 256}, {256, 64}, false, false},      // dX
      {"g[8192,256].t() @ x[8192,64]", {8192, 256}, {8192, 64}, true, false},  // dW
      {"q[64,16] @ k[64,16].t()", {64, 16}, {64, 16}, false, true},           // scores
      {"p[64,64] @ v[64,16]", {64, 64}, {64, 16}, false, false},              // weighted values
  };

  Generator gen(1234);
  double min_ratio = 1e30;
  int64_t max_sys_allocs = 0;  // system allocations during any shape's timed loop
  std::printf("%-30s %5s %5s %5s | %9s %9s | %9s %9s | %6s %6s | %6s\n", "shape (C = A.B)", "M", "N", "K",
              "ours med", "ours best", "blas med", "blas best", "ratio", "ratio", "reps");
  std::printf("%-30s %5s %5s %5s | %9s %9s | %9s %9s | %6s %6s | %6s\n", "", "", "", "", "GFLOP/s", "GFLOP/s",
              "GFLOP/s", "GFLOP/s", "med", "best", "/side");

  for (const Case& c : cases) {
    const Tensor a = randn(c.a_shape, &gen), b = randn(c.b_shape, &gen);
    const Tensor av = c.ta ? a.t() : a, bv = c.tb ? b.t() : b;  // the logical operands
    const int M = int(av.shape()[0]), K = int(av.shape()[1]), N = int(bv.shape()[1]);
    const int lda = int(a.shape()[1]), ldb = int(b.shape()[1]), ldc = N;
    const double flops = 2.0 * M * N * K;

    float* cbuf = static_cast<float*>(std::aligned_alloc(64, size_t(M) * N * sizeof(float)));
    auto direct = [&] {
      cblas_sgemm(CblasRowMajor, c.ta ? CblasTrans : CblasNoTrans, c.tb ? CblasTrans : CblasNoTrans, M, N, K, 1.f,
                  a.data(), lda, b.data(), ldb, 0.f, cbuf, ldc);
    };
    float* volatile sink = nullptr;  // keeps the result "used"
    auto ours = [&] {
      Tensor out = matmul(av, bv);
      sink = out.data();
    };  // `out` is freed (back to the cache) inside the timed region

    // Correctness, once per shape.
    {
      const Tensor out = matmul(av, bv);
      direct();
      if (out.shape() != Shape{M, N}) {
        std::fprintf(stderr, "error: %s: ours has shape %s\n", c.name.c_str(), to_string(out.shape()).c_str());
        return 1;
      }
      const std::vector<float> o = out.to_vector();
      double max_diff = 0, max_abs = 0;
      for (size_t i = 0; i < o.size(); ++i) {
        max_diff = std::max(max_diff, double(std::fabs(o[i] - cbuf[i])));
        max_abs = std::max(max_abs, double(std::fabs(cbuf[i])));
      }
      if (!(max_diff <= 1e-5 * (1.0 + max_abs))) {
        std::fprintf(stderr, "error: %s: outputs differ, max abs diff %g (max |C| %g)\n", c.name.c_str(), max_diff,
                     max_abs);
        return 1;
      }
    }

    // Warm-up: ~50 ms per side (at least 3 calls), which also sizes the blocks.
    auto time_one = [](const std::function<void()>& f) {
      const auto t0 = Clock::now();
      f();
      return seconds_since(t0);
    };
    double warm_ours = 0, warm_direct = 0;
    int warm_calls = 0;
    for (const auto t0 = Clock::now(); warm_calls < 3 || seconds_since(t0) < 0.1; ++warm_calls) {
      warm_ours += time_one(ours);
      warm_direct += time_one(direct);
    }
    const double per_call = std::max(1e-7, 0.5 * (warm_ours + warm_direct) / warm_calls);
    // Blocks of ~10 ms (1..50 calls) so that there are many A/B alternations.
    const int block = std::clamp(int(0.01 / per_call), 1, 50);

    std::vector<double> t_ours, t_direct;
    const int64_t sys_allocs_before = memory_stats().system_allocations;
    double total_ours = 0, total_direct = 0;
    for (int round = 0; total_ours < min_side_s || total_direct < min_side_s; ++round) {
      // Alternate which side goes first, too.
      for (int side = 0; side < 2; ++side) {
        const bool run_ours = (side == 0) == (round % 2 == 0);
        // After its last call OpenBLAS's threads spin for about 2^28 cycles before they
        // sleep; on two cores they would take the cores of our block. Wait them out, then
        // give each block an untimed lead-in of ~10 ms (threads woken, clocks up) on both sides.
        if (run_ours && side == 1) std::this_thread::sleep_for(std::chrono::milliseconds(150));
        for (const auto t0 = Clock::now(); seconds_since(t0) < 0.01;) run_ours ? ours() : direct();
        for (int r = 0; r < block; ++r) {
          const double t = time_one(run_ours ? std::function<void()>(ours) : std::function<void()>(direct));
          (run_ours ? t_ours : t_direct).push_back(t);
          (run_ours ? total_ours : total_direct) += t;
        }
      }
    }
    std::free(cbuf);
    // Our output block should come from the allocator's cache on every timed call.
    max_sys_allocs = std::max(max_sys_allocs, memory_stats().system_allocations - sys_allocs_before);

    const double med_o = median(t_ours), med_d = median(t_direct);
    const double best_o = *std::min_element(t_ours.begin(), t_ours.end());
    const double best_d = *std::min_element(t_direct.begin(), t_direct.end());
    const double ratio_med = med_d / med_o, ratio_best = best_d / best_o;
    min_ratio = std::min(min_ratio, ratio_med);
    std::printf("%-30s %5d %5d %5d | %9.1f %9.1f | %9.1f %9.1f | %6.3f %6.3f | %6zu\n", c.name.c_str(), M, N, K,
                flops / med_o * 1e-9, flops / best_o * 1e-9, flops / med_d * 1e-9, flops / best_d * 1e-9, ratio_med,
                ratio_best, t_ours.size());
    std::fflush(stdout);
  }
  std::printf("\nsystem allocations by our matmul during the timed loops: %lld (0 = every output came from "
              "the cache)\n",
              static_cast<long long>(max_sys_allocs));
  std::printf("min ratio: %.3f (target >= 0.95)\n", min_ratio);
  return 0;
}
