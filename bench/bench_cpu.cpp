// bench_cpu: CPU training speed of four workloads, the Plexus half of the comparison with
// PyTorch that scripts/bench-cpu drives (its twin is bench/reference/torch_cpu.py; the
// workloads, data and timing below are the same there, line for line).
//
//   bench_cpu --workload a|b|c|d [--runs R] [--first-run F] [--mnist DIR] [--steps S] [--epochs E] [--precision fp32|bf16]
//
// Workloads (cross-entropy loss throughout):
//   a  MLP 784-128-10, SGD lr 0.1, batch 100
//   b  MLP 784-64-10 (the Knet paper's MLP), SGD lr 0.1, batch 100
//   c  LeNet (conv 5x5x20, ReLU, max-pool 2, conv 5x5x50, ReLU, max-pool 2, 500, ReLU, 10),
//      SGD lr 0.1, batch 100
//   d  MLP 784-1024-1024-10, Adam lr 1e-3, batch 128
// Data: MNIST from DIR (default data/mnist), images standardised with the training split's
// mean and std (the test split with the same), resident in memory before any timing (made from
// the files' bytes, with no float copy of the raw images besides). An epoch takes the batches
// in order as views of the resident tensors (no shuffle, no copy), the last partial batch
// included.
// A step: forward, loss, loss.item() (as a loop that logs its loss does), zero_grad,
// backward, optimizer step. A run: a fresh model seeded 1000 + run (runs are numbered from
// --first-run F, default 0, so that separate processes can train different seeds), one epoch timed by wall
// clock, then (untimed) test accuracy in eval mode without grad, batch 1000. Before the first
// run a throwaway model trains 20 steps (warm-up: allocator cache, OpenBLAS buffers).
// --steps S times only the first S steps of the epoch and skips the evaluation.
// --epochs E makes a run E epochs of one model (timed together, evaluated after the last);
// --precision bf16 multiplies in bfloat16 where the CPU has AVX512_BF16 (ops/precision.h), as
// scripts/bench-bf16 compares.
// --subnormals E instead trains two models of the workload, seeded alike, for E epochs in
// lockstep: one as the core runs by default, flushing subnormal floats to zero
// (util/subnormals.h), one keeping them; each epoch is timed for both, one after the other
// in this process (which goes first alternates), and their ratio printed.
//
// Output:
//   device: cpu (N threads, OpenBLAS kernel K, OPENBLAS_CORETYPE=..., matrix product: ..., precision P)
//   samples <N>             training samples per epoch
//   flops <w> <FLOP>        the multiply-adds of one epoch's forward and backward passes x 2
//   run plexus <w> <i> <seconds> <test accuracy %> <last loss>
//   subnormals <w> epoch <e> flush <seconds> keep <seconds> ratio <flush/keep>   (--subnormals)
//   sgemm_peak <GFLOP/s>    OpenBLAS's cblas_sgemm 1024x1024x1024 on as many threads, median of 15
//   gemm_peak <GFLOP/s>     Plexus's own CPU product (matmul), the same size and threads, median of 15
#include <cblas.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "ops/cpu/sbgemm.h"
#include "ops/cpu/sgemm.h"
#include "plexus.h"
#include "train/builtin.h"

using namespace plexus;
using Clock = std::chrono::steady_clock;

namespace {

struct Workload {
  char id;
  std::string model;  // a built-in model name, or "mlp1024"
  int64_t batch;
  bool adam;
};

const Workload kWorkloads[] = {
    {'a', "mlp", 100, false},
    {'b', "mlp64", 100, false},
    {'c', "lenet", 100, false},
    {'d', "mlp1024", 128, true},
};

struct Split {
  Tensor inputs;   // [N, 1, 28, 28], standardised
  Tensor targets;  // [N], classes as floats
};

// The images as (x - mean) / std straight from their bytes: one float copy per split, none of
// the images in [0, 1] besides (the same numbers as `images() - mean` then `/ std`, which is
// `* (1 / std)`).
Tensor standardised(const data::MnistDataset& d, float mean, float std) {
  std::array<float, 256> value{};
  for (size_t k = 0; k < value.size(); ++k) value[k] = (float(k) * data::MnistDataset::kPixelScale + -mean) * (1.f / std);
  Tensor out = empty({d.size(), 1, d.height(), d.width()});
  float* o = out.data();
  const uint8_t* p = d.pixel_bytes();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = value[p[i]];
  return out;
}

std::pair<Split, Split> load(const std::string& dir) {
  Split train_split;
  train::MeanStd m;
  {  // the training images' mapping goes before the test split's is made (peak memory)
    const data::MnistDataset train(dir, data::Split::Train);
    m = train::image_mean_std(train);  // in double, from the bytes' counts
    train_split = {standardised(train, m.mean, m.std), train.labels()};
  }
  const data::MnistDataset test(dir, data::Split::Test);
  return {train_split, {standardised(test, m.mean, m.std), test.labels()}};
}

std::shared_ptr<nn::Module> make_model(const Workload& w, Generator* gen) {
  return train::make_builtin_model(w.model, gen);
}

// Multiply-adds per sample of each weight layer, in order: the forward pass and the weight
// gradient do each once, the input gradient all but the first layer's (its input needs none).
std::vector<double> layer_macs(const Workload& w) {
  if (w.model == "mlp") return {784.0 * 128, 128.0 * 10};
  if (w.model == "mlp64") return {784.0 * 64, 64.0 * 10};
  if (w.model == "lenet") return {20.0 * 25 * 24 * 24, 50.0 * 500 * 8 * 8, 800.0 * 500, 500.0 * 10};
  return {784.0 * 1024, 1024.0 * 1024, 1024.0 * 10};
}

double epoch_flops(const Workload& w, int64_t samples) {
  const std::vector<double> macs = layer_macs(w);
  double per_sample = 0;
  for (size_t l = 0; l < macs.size(); ++l) per_sample += 2 * macs[l] * (l == 0 ? 2 : 3);
  return per_sample * double(samples);
}

// OpenBLAS's own multi-threaded sgemm on the same thread count (Plexus keeps OpenBLAS at
// one thread and splits products itself; for this measurement OpenBLAS gets them all).
double sgemm_peak_gflops() {
  openblas_set_num_threads(num_threads());
  const int n = 1024;
  std::vector<float> a(size_t(n) * n, 0.5f), b(size_t(n) * n, 0.25f), c(size_t(n) * n);
  std::vector<double> rates;
  for (int i = 0; i < 18; ++i) {
    const auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (i >= 3) rates.push_back(2.0 * n * n * n / s / 1e9);  // the first calls warm OpenBLAS up
  }
  openblas_set_num_threads(1);
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

// Plexus's matmul on the same problem: the product its training steps run (its own AVX-512
// kernel split across the pool, or OpenBLAS per block; ops/cpu/sgemm.h).
double gemm_peak_gflops() {
  const int64_t n = 1024;
  const Tensor a = full({n, n}, 0.5f), b = full({n, n}, 0.25f);
  std::vector<double> rates;
  for (int i = 0; i < 18; ++i) {
    const auto t0 = Clock::now();
    const Tensor c = matmul(a, b);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (i >= 3) rates.push_back(2.0 * double(n * n * n) / s / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

struct RunResult {
  double seconds;
  float loss;
};

// Trains `model` over the first `steps` batches (all batches when steps < 0).
RunResult train_epoch(const Workload& w, nn::Module& model, optim::Optimizer& opt, const Split& train,
                      int64_t steps) {
  const int64_t n = train.inputs.size(0);
  const int64_t batches = (n + w.batch - 1) / w.batch;
  if (steps < 0 || steps > batches) steps = batches;
  float loss_value = 0;
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t start = i * w.batch, len = std::min(w.batch, n - start);
    const Tensor loss = cross_entropy(model(train.inputs.narrow(0, start, len)), train.targets.narrow(0, start, len));
    loss_value = loss.item();
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  return {std::chrono::duration<double>(Clock::now() - t0).count(), loss_value};
}

double test_accuracy(nn::Module& model, const Split& test) {
  NoGradGuard no_grad;
  model.eval();
  const int64_t n = test.inputs.size(0);
  int64_t correct = 0;
  for (int64_t start = 0; start < n; start += 1000) {
    const int64_t len = std::min<int64_t>(1000, n - start);
    const std::vector<float> predicted = argmax(model(test.inputs.narrow(0, start, len)), 1).to_vector();
    const std::vector<float> truth = test.targets.narrow(0, start, len).to_vector();
    for (int64_t i = 0; i < len; ++i) correct += predicted[size_t(i)] == truth[size_t(i)];
  }
  model.train();
  return 100.0 * double(correct) / double(n);
}

std::unique_ptr<optim::Optimizer> make_optimizer(const Workload& w, nn::Module& model) {
  if (w.adam) return std::make_unique<optim::Adam>(model.parameters(), optim::AdamOptions{.lr = 1e-3});
  return std::make_unique<optim::SGD>(model.parameters(), optim::SGDOptions{.lr = 0.1});
}

// --subnormals: the same model flushing and keeping subnormals, epoch by epoch.
void compare_subnormals(const Workload& w, const Split& train, int epochs) {
  struct Side {
    std::shared_ptr<nn::Module> model;
    std::unique_ptr<optim::Optimizer> opt;
  };
  Side side[2];  // flush, keep
  for (Side& s : side) {
    Generator gen(1000);
    s.model = make_model(w, &gen);
    s.opt = make_optimizer(w, *s.model);
  }
  for (int e = 0; e < epochs; ++e) {
    double seconds[2];
    for (int i = 0; i < 2; ++i) {
      const int k = (i + e) % 2;  // which goes first alternates: a VM's slow spells fall on both
      set_flush_subnormals(k == 0);
      seconds[k] = train_epoch(w, *side[k].model, *side[k].opt, train, -1).seconds;
    }
    set_flush_subnormals(true);
    std::printf("subnormals %c epoch %d flush %.4f keep %.4f ratio %.3f\n", w.id, e, seconds[0], seconds[1],
                seconds[0] / seconds[1]);
    std::fflush(stdout);
  }
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_cpu --workload a|b|c|d [--runs R] [--first-run F] [--mnist DIR] [--steps S] [--epochs E] "
               "[--precision fp32|bf16] [--subnormals E]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mnist_dir = "data/mnist";
  const Workload* workload = nullptr;
  int runs = 5;
  int64_t steps = -1;
  int subnormal_epochs = 0;
  int epochs = 1;
  int first_run = 0;
  Precision precision = Precision::FP32;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string v = argv[++i];
    if (a == "--workload") {
      for (const Workload& w : kWorkloads)
        if (v.size() == 1 && v[0] == w.id) workload = &w;
      if (!workload) return usage();
    } else if (a == "--runs") {
      runs = std::atoi(v.c_str());
    } else if (a == "--first-run") {
      first_run = std::atoi(v.c_str());
      if (first_run < 0) return usage();
    } else if (a == "--mnist") {
      mnist_dir = v;
    } else if (a == "--steps") {
      steps = std::atoll(v.c_str());
    } else if (a == "--epochs") {
      epochs = std::atoi(v.c_str());
      if (epochs < 1) return usage();
    } else if (a == "--precision") {
      if (v != "fp32" && v != "bf16") return usage();
      precision = parse_precision(v);
    } else if (a == "--subnormals") {
      subnormal_epochs = std::atoi(v.c_str());
      if (subnormal_epochs < 1) return usage();
    } else {
      return usage();
    }
  }
  if (!workload || runs < 1) return usage();

  try {
    const PrecisionGuard guard(precision);
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    const Precision computed = precision_on(Device::cpu(), precision);
    std::printf("device: cpu (%d threads, OpenBLAS kernel %s, OPENBLAS_CORETYPE=%s, matrix product: %s, precision %s%s%s)\n",
                num_threads(), openblas_get_corename(), coretype ? coretype : "(unset)", cpu::product_kernel(),
                precision_name(computed), computed == Precision::BF16 ? " by " : "",
                computed == Precision::BF16 ? cpu::bf16_kernel() : "");
    {  // the data goes before the peaks are measured: their buffers are no part of the workload's memory
      const auto [train, test] = load(mnist_dir);
      const int64_t samples = train.inputs.size(0);
      std::printf("samples %lld\n", (long long)samples);
      std::printf("flops %c %.6g\n", workload->id, epoch_flops(*workload, samples));
      std::fflush(stdout);

      {
        Generator gen(1);
        const auto model = make_model(*workload, &gen);
        const auto opt = make_optimizer(*workload, *model);
        train_epoch(*workload, *model, *opt, train, 20);
      }
      if (subnormal_epochs > 0) {
        compare_subnormals(*workload, train, subnormal_epochs);
        return 0;
      }
      for (int r = first_run; r < first_run + runs; ++r) {
        Generator gen(uint64_t(1000 + r));
        const auto model = make_model(*workload, &gen);
        const auto opt = make_optimizer(*workload, *model);
        RunResult result{0, 0};
        for (int e = 0; e < epochs; ++e) {
          const RunResult epoch = train_epoch(*workload, *model, *opt, train, steps);
          result = {result.seconds + epoch.seconds, epoch.loss};
        }
        const double accuracy = steps < 0 ? test_accuracy(*model, test) : std::nan("");
        std::printf("run plexus %c %d %.4f %.2f %.4f\n", workload->id, r, result.seconds, accuracy, result.loss);
        std::fflush(stdout);
      }
    }
    allocator_for(Device::cpu()).empty_cache();  // the freed data's blocks, kept for reuse, back to the system
    // Last: once OpenBLAS has run its own threads they spin for a while, and would slow
    // the training runs above.
    std::printf("gemm_peak %.1f\n", gemm_peak_gflops());
    std::printf("sgemm_peak %.1f\n", sgemm_peak_gflops());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
