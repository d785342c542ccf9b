// bench_lstm: CPU training speed of a character-level LSTM language model, the Plexus half of
// the comparison with PyTorch that scripts/bench-lstm drives (its twin is
// bench/reference/torch_lstm.py; model, data and timing are the same there, line for line).
//
//   bench_lstm [--runs R] [--steps S]
//
// Model: Embedding(64 -> 64), LSTM(64 -> hidden 256, one layer), Linear(256 -> 64); the
// logits [32, 64, 64] are reshaped to [32*64, 64] for cross-entropy (mean) against the next
// tokens [32*64]. Adam lr 1e-3. Batch 32, sequence 64, vocabulary 64.
// Data: 8 batches of uniformly random tokens (inputs and targets), resident before timing,
// taken in turn. A step: forward, loss, loss.item(), zero_grad, backward, optimizer step.
// A run: S steps (default 20) timed by wall clock, after a warm-up of 10 untimed steps
// before the first run (allocator cache, OpenBLAS buffers). One model trains through all runs.
//
// Output:
//   device: cpu (N threads, OPENBLAS_CORETYPE=..., OpenBLAS kernel ..., matrix product: ...)
//   flops_per_step <FLOP>    the products of one step's forward and backward passes x 2
//   run plexus <i> <seconds per step> <last loss>
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "ops/cpu/sgemm.h"
#include "plexus.h"

using namespace plexus;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kBatch = 32, kSeq = 64, kVocab = 64, kEmbed = 64, kHidden = 256, kBatches = 8;

struct Batch {
  Tensor inputs, targets;  // [kBatch, kSeq] token indices (floats), targets flat [kBatch * kSeq]
};

std::vector<Batch> make_data() {
  Generator gen(1234);
  std::vector<Batch> data;
  for (int64_t i = 0; i < kBatches; ++i) {
    const Tensor tokens = uniform({kBatch, kSeq + 1}, 0.f, float(kVocab), &gen);
    std::vector<float> v = tokens.to_vector();
    for (float& t : v) t = float(int64_t(t));
    const Tensor whole = from_vector(v, {kBatch, kSeq + 1});
    data.push_back({whole.narrow(1, 0, kSeq).contiguous(), whole.narrow(1, 1, kSeq).contiguous().reshape({kBatch * kSeq})});
  }
  return data;
}

// Forward products per step: the LSTM's input and recurrent projections and the output layer
// (the embedding is a lookup); backward does twice that; x 2 FLOPs per multiply-add.
double flops_per_step() {
  const double rows = double(kBatch * kSeq);
  const double macs = rows * 4 * kHidden * (kEmbed + kHidden) + rows * kHidden * kVocab;
  return 3 * macs * 2;
}

float train_steps(nn::Sequential& model, optim::Optimizer& opt, const std::vector<Batch>& data, int64_t steps,
                  int64_t& next) {
  float loss_value = 0;
  for (int64_t i = 0; i < steps; ++i) {
    const Batch& b = data[size_t(next++ % kBatches)];
    const Tensor logits = model(b.inputs);  // [kBatch, kSeq, kVocab]
    const Tensor loss = cross_entropy(logits.reshape({kBatch * kSeq, kVocab}), b.targets);
    loss_value = loss.item();
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  return loss_value;
}

int usage() {
  std::fprintf(stderr, "usage: bench_lstm [--runs R] [--steps S]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  int64_t steps = 20;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    if (a == "--runs") runs = std::atoi(argv[i + 1]);
    else if (a == "--steps") steps = std::atoll(argv[i + 1]);
    else return usage();
  }
  if (runs < 1 || steps < 1) return usage();
  try {
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    std::printf("device: cpu (%d threads, OPENBLAS_CORETYPE=%s, OpenBLAS kernel %s, matrix product: %s)\n",
                num_threads(), coretype ? coretype : "(unset)", openblas_get_corename(),
                cpu::product_kernel());
    std::printf("flops_per_step %.6g\n", flops_per_step());
    const std::vector<Batch> data = make_data();
    Generator gen(1000);
    nn::Sequential model;
    nn::RecurrentOptions lstm;
    lstm.hidden_size = kHidden;
    model.add(std::make_shared<nn::Embedding>(kVocab, kEmbed, &gen))
        .add(std::make_shared<nn::LSTM>(kEmbed, lstm, &gen))
        .add(std::make_shared<nn::Linear>(kHidden, kVocab, true, &gen));
    optim::Adam opt(model.parameters(), optim::AdamOptions{.lr = 1e-3});
    int64_t next = 0;
    train_steps(model, opt, data, 10, next);
    for (int r = 0; r < runs; ++r) {
      const auto t0 = Clock::now();
      const float loss = train_steps(model, opt, data, steps, next);
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      std::printf("run plexus %d %.6f %.4f\n", r, seconds / double(steps), loss);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
