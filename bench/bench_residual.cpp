// bench_residual: the fused residual step (residual_dropout, ops/residual.h: a + dropout(b) and
// LayerNorm of that sum) against the ops it replaces (a + dropout(b), then layer_norm), on the
// names transformer's residual stream at T = 256 ([32, 256, 64], p = 0.2, LayerNorm weight and
// bias learnt), forward alone and forward + backward.
//
//   bench_residual [--reps N]   (default 40)
//
// The two sides alternate call by call, so machine noise hits both alike; prints the load, then
// min and median per call in ms.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "autograd/grad.h"
#include "ops/ops.h"
#include "ops/residual.h"

using namespace plexus;

namespace {

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string one, five;
  f >> one >> five;
  return one + " " + five;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 40;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::max(1, std::atoi(argv[i + 1]));
  Generator gen(1);
  const Shape shape{32, 256, 64};
  Tensor a = randn(shape, &gen), b = randn(shape, &gen), w = randn({64}, &gen), bias = randn({64}, &gen);
  for (Tensor* t : {&a, &b, &w, &bias}) t->requires_grad_();
  const Tensor u = randn(shape, &gen), v = randn(shape, &gen);
  auto step = [&](bool fused, bool backward) {
    Tensor s, y;
    if (fused) {
      const ResidualOutputs o = residual_dropout(a, b, 0.2f, true, &gen, ResidualNorm{w, bias, 1e-5f});
      s = o.sum;
      y = o.normed;
    } else {
      s = a + dropout(b, 0.2f, true, &gen);
      y = layer_norm(s, w, bias, 1e-5f);
    }
    if (backward) autograd::grad({s, y}, {a, b, w, bias}, {u, v});
  };
  std::printf("load average (1, 5 min) before: %s\n", load_average().c_str());
  for (const bool backward : {false, true}) {
    std::vector<double> ms[2];
    for (int rep = 0; rep < reps; ++rep)
      for (const bool fused : {false, true}) {
        const auto t0 = std::chrono::steady_clock::now();
        step(fused, backward);
        ms[fused].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
    for (std::vector<double>& t : ms) std::sort(t.begin(), t.end());
    std::printf("%-18s unfused min %.3f median %.3f ms | fused min %.3f median %.3f ms\n",
                backward ? "forward+backward" : "forward", ms[0][0], ms[0][size_t(reps) / 2], ms[1][0],
                ms[1][size_t(reps) / 2]);
  }
  std::printf("load average (1, 5 min) after: %s\n", load_average().c_str());
}
