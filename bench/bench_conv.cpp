// bench_conv: the CPU time of LeNet's layers one op at a time, and of each convolution with
// its ReLU and pooling fused (batch 100, the pool's default threads; PLEXUS_NUM_THREADS=1
// for one core), to see where a training step of workload (c) of bench_cpu goes.
//
//   bench_conv [--reps R] [--cpu] [--only TEXT]
//
// Each line: the op, forward µs and backward µs (median of R repetitions, default 200), by
// the wall clock, or with --cpu by the process's CPU time (with one thread: what the op
// costs whatever else the machine runs). --only times just the lines whose name contains
// TEXT (to profile one op).
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "plexus.h"

using namespace plexus;
namespace {

bool g_cpu_time = false;
std::string g_only;

double now_us() {
  timespec ts{};
  clock_gettime(g_cpu_time ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times f(input) forward and its backward from a fixed upstream gradient.
void time_op(const char* name, const Tensor& input0, const std::vector<Tensor>& params,
             const std::function<Tensor(const Tensor&)>& f, int reps) {
  if (std::string(name).find(g_only) == std::string::npos) return;
  Tensor input = input0.detach();
  input.requires_grad_(input0.requires_grad());
  std::vector<double> fwd, bwd;
  for (int r = 0; r < reps + 5; ++r) {
    for (const Tensor& p : params) p.set_grad(Tensor());
    const double t0 = now_us();
    const Tensor y = f(input);
    const double t1 = now_us();
    y.backward(ones(y.shape()));
    const double t2 = now_us();
    if (r < 5) continue;
    fwd.push_back(t1 - t0);
    bwd.push_back(t2 - t1);
  }
  std::printf("%-32s fwd %8.1f us  bwd %8.1f us\n", name, median(fwd), median(bwd));
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cpu") g_cpu_time = true;
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--only" && i + 1 < argc) g_only = argv[++i];
  }
  std::printf("device: cpu (%d threads), %s time\n", num_threads(), g_cpu_time ? "CPU" : "wall");
  Generator gen(1);
  auto leaf = [&](const Shape& s, bool grad = true) {
    Tensor t = randn(s, &gen);
    t.requires_grad_(grad);
    return t;
  };
  const Tensor x1 = leaf({100, 1, 28, 28}, false), w1 = leaf({20, 1, 5, 5}), b1 = leaf({20});
  const Tensor x2 = leaf({100, 20, 12, 12}), w2 = leaf({50, 20, 5, 5}), b2 = leaf({50});
  const Tensor r1 = leaf({100, 20, 24, 24}), r2 = leaf({100, 50, 8, 8});
  time_op("conv1 1->20 5x5 (no dX)", x1, {w1, b1}, [&](const Tensor& x) { return conv2d(x, w1, b1); }, reps);
  time_op("relu [100,20,24,24]", r1, {}, [](const Tensor& x) { return relu(x); }, reps);
  time_op("max_pool 2 [100,20,24,24]", r1, {}, [](const Tensor& x) { return max_pool2d(x, {2, 2}); }, reps);
  time_op("conv2 20->50 5x5", x2, {w2, b2}, [&](const Tensor& x) { return conv2d(x, w2, b2); }, reps);
  time_op("relu [100,50,8,8]", r2, {}, [](const Tensor& x) { return relu(x); }, reps);
  time_op("max_pool 2 [100,50,8,8]", r2, {}, [](const Tensor& x) { return max_pool2d(x, {2, 2}); }, reps);
  // What nn::Sequential runs for LeNet: each conv with its ReLU and pooling as one op.
  time_op("conv1 + relu + max_pool fused", x1, {w1, b1},
          [&](const Tensor& x) { return conv2d_relu_max_pool2d(x, w1, b1, {}, true, true); }, reps);
  time_op("conv2 + relu + max_pool fused", x2, {w2, b2},
          [&](const Tensor& x) { return conv2d_relu_max_pool2d(x, w2, b2, {}, true, true); }, reps);
  return 0;
}
