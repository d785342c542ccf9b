// bench_gpu: training speed of a set of workloads on a device, for ratios against PyTorch
// running the same workloads (bench/reference/torch_gpu.py; scripts/bench-gpu runs both and
// prints the table).
//
//   bench_gpu [--device cuda:0|cpu] [--models a,b,...] [--epochs E] [--mnist DIR]
//             [--precision fp32|bf16] [--no-graphs] [--steps S]
//
// Workloads (name: model, batch, optimizer, data):
//   mlp            784-128-10                 batch 100   SGD lr 0.1             MNIST-shaped
//   mlp64          784-64-10                  batch 100   SGD lr 0.1             MNIST-shaped
//   lenet          LeNet (train/builtin.cpp)  batch 100   SGD lr 0.1             MNIST-shaped
//   lenet-b1024    LeNet                      batch 1024  SGD lr 0.1             MNIST-shaped
//   mlp1024-adam   784-1024-1024-10           batch 1024  Adam lr 1e-3           MNIST-shaped
//   resnet8        CIFAR ResNet-8 (below)     batch 1024  SGD lr 0.1, mom. 0.9   CIFAR-shaped
//   lstm           LSTM language model        batch 32    Adam lr 1e-3           tokens
//   transformer    2-block causal transformer batch 32    Adam lr 1e-3           tokens
// lstm is bench/bench_lstm.cpp's model: Embedding(64 -> 64), LSTM(hidden 256, one layer),
// Linear(256 -> 64). transformer: Embedding(64 -> 128) + PositionalEmbedding(64, 128), two
// pre-norm blocks (below), LayerNorm, Linear(128 -> 64). Both predict every next token: logits
// [N, 64, 64] against targets [N, 64], cross-entropy averaged over all positions.
// MNIST-shaped data: the MNIST training split from DIR standardised with its own mean and std,
// or else 60,000 synthetic N(0, 1) inputs [1, 28, 28] with random classes 0..9 from a fixed
// seed. CIFAR-shaped: 25,600 synthetic N(0, 1) inputs [3, 32, 32], random classes. Tokens:
// 3,200 sequences of 65 uniformly random tokens 0..63, the first 64 the input and the last 64
// the targets (100 steps an epoch). Each set is copied to the device once, before any timing
// (speed does not depend on the values).
//
// Training: cross-entropy. A step runs train::TrainingStep (what the Trainer runs) on batch i,
// a narrow of the resident tensors in order, which reads the loss back every step (one
// device-to-host read, as a loop logging its loss does). An epoch is every full batch. One
// warm-up epoch, then E timed epochs (default 3), each timed by wall clock from a device
// synchronisation to the next; the median is reported. Each workload runs eagerly (every op
// launched from the host) and with the steady step replayed as a CUDA graph (skipped with
// --no-graphs); with --precision bf16 a third run replays the graph with bf16 products.
// --steps S caps the steps of an epoch (for a profiler's short run).
//
// Output: the device, then per workload and variant one line
// "<variant> <workload> <device> <s/epoch> <loss>" with variant plexus (eager), plexus-graphs
// or plexus-bf16 (loss = the last step's), and "# ..." lines saying how the graph went. A
// CUDA device requested where none is usable prints "skipped: " and cuda::status() ("no
// CUDA device (<why>)") and exits 0.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/cuda.h"
#include "plexus.h"
#include "train/builtin.h"
#include "train/step.h"

using namespace plexus;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kMnistSamples = 60000, kCifarSamples = 25600;
constexpr int64_t kSequences = 3200, kSeq = 64, kVocab = 64;

enum class DataKind { Mnist, Cifar, Tokens };

struct ResidentData {
  Tensor inputs;   // [N, C, H, W] images, or [N, T] token ids as floats, on the device
  Tensor targets;  // [N] classes or [N, T] next tokens, as floats, on the device
  std::string description;
};

void sync(Device device) {
  if (device.is_cuda()) cuda::synchronize(device);
}

ResidentData synthetic(int64_t n, const Shape& sample, Device device) {
  Generator gen(1);
  Shape shape{n};
  shape.insert(shape.end(), sample.begin(), sample.end());
  const Tensor inputs = randn(shape, &gen);
  std::vector<float> classes(static_cast<size_t>(n));
  for (float& c : classes) c = float(gen.next_u64() % 10);
  return {inputs.to(device), from_vector(classes, {n}).to(device),
          "synthetic N(0, 1) " + to_string(sample) + ", random labels"};
}

ResidentData random_tokens(Device device) {
  Generator gen(1);
  std::vector<float> ids(static_cast<size_t>(kSequences * (kSeq + 1)));
  for (float& t : ids) t = float(gen.next_u64() % kVocab);
  const Tensor tokens = from_vector(ids, {kSequences, kSeq + 1});
  return {tokens.narrow(1, 0, kSeq).contiguous().to(device), tokens.narrow(1, 1, kSeq).contiguous().to(device),
          "uniformly random tokens 0.." + std::to_string(kVocab - 1) + ", sequences of " + std::to_string(kSeq)};
}

ResidentData load_mnist(const std::string& mnist_dir, Device device) {
  if (mnist_dir.empty()) return synthetic(kMnistSamples, {1, 28, 28}, device);
  const data::MnistDataset mnist(mnist_dir, data::Split::Train);
  const Tensor& images = mnist.images();  // one contiguous [N, 1, 28, 28] tensor in [0, 1]
  double sum = 0, sum_sq = 0;
  const float* p = images.data();
  for (int64_t i = 0; i < images.numel(); ++i) {
    sum += p[i];
    sum_sq += double(p[i]) * p[i];
  }
  const double mean = sum / double(images.numel());
  const double std = std::sqrt(sum_sq / double(images.numel()) - mean * mean);
  std::ostringstream s;
  s << "MNIST " << mnist_dir << " (mean " << mean << ", std " << std << ")";
  return {((images - float(mean)) / float(std)).to(device), mnist.labels().to(device), s.str()};
}

// ResNet's basic block (He et al. 2016): two 3x3 convolutions with batch norm, and the input
// added back (through a strided 1x1 convolution and batch norm where the shape changes).
class BasicBlock final : public nn::Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride, Generator* gen) {
    const Conv2dOptions first{.stride_h = stride, .stride_w = stride, .pad_h = 1, .pad_w = 1};
    conv1_ = register_module("conv1", std::make_shared<nn::Conv2d>(in, out, 3, first, false, gen));
    bn1_ = register_module("bn1", std::make_shared<nn::BatchNorm2d>(out));
    conv2_ = register_module("conv2", std::make_shared<nn::Conv2d>(out, out, 3, Conv2dOptions{.pad_h = 1, .pad_w = 1},
                                                                   false, gen));
    bn2_ = register_module("bn2", std::make_shared<nn::BatchNorm2d>(out));
    if (stride != 1 || in != out) {
      const Conv2dOptions down{.stride_h = stride, .stride_w = stride};
      shortcut_ = register_module("shortcut", std::make_shared<nn::Sequential>());
      shortcut_->add(std::make_shared<nn::Conv2d>(in, out, 1, down, false, gen))
          .add(std::make_shared<nn::BatchNorm2d>(out));
    }
  }
  Tensor forward(const Tensor& x) override {
    const Tensor y = (*bn2_)((*conv2_)(relu((*bn1_)((*conv1_)(x)))));
    return relu(y + (shortcut_ ? (*shortcut_)(x) : x));
  }
  std::string type_name() const override { return "BasicBlock"; }

 private:
  std::shared_ptr<nn::Conv2d> conv1_, conv2_;
  std::shared_ptr<nn::BatchNorm2d> bn1_, bn2_;
  std::shared_ptr<nn::Sequential> shortcut_;
};

// CIFAR ResNet-8: a 3x3 stem of 16 channels, one basic block per stage (16, 32, 64 channels,
// the last two halving the resolution), global average pooling, a linear classifier.
std::shared_ptr<nn::Module> resnet8(Generator* gen) {
  auto m = std::make_shared<nn::Sequential>();
  m->add(std::make_shared<nn::Conv2d>(3, 16, 3, Conv2dOptions{.pad_h = 1, .pad_w = 1}, false, gen))
      .add(std::make_shared<nn::BatchNorm2d>(16))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<BasicBlock>(16, 16, 1, gen))
      .add(std::make_shared<BasicBlock>(16, 32, 2, gen))
      .add(std::make_shared<BasicBlock>(32, 64, 2, gen))
      .add(std::make_shared<nn::AvgPool2d>(8))
      .add(std::make_shared<nn::Flatten>())
      .add(std::make_shared<nn::Linear>(64, 10, true, gen));
  return m;
}

// bench_lstm's model: the LSTM's whole output sequence goes through the linear layer.
std::shared_ptr<nn::Module> lstm_model(Generator* gen) {
  nn::RecurrentOptions lstm;
  lstm.hidden_size = 256;
  auto m = std::make_shared<nn::Sequential>();
  m->add(std::make_shared<nn::Embedding>(kVocab, 64, gen))
      .add(std::make_shared<nn::LSTM>(64, lstm, gen))
      .add(std::make_shared<nn::Linear>(256, kVocab, true, gen));
  return m;
}

// A pre-norm transformer block (GPT-2's order): x + attention(LayerNorm(x)), then
// x + MLP(LayerNorm(x)) with a 4x wide GELU hidden layer.
class PreNormBlock final : public nn::Module {
 public:
  PreNormBlock(int64_t embed, int64_t heads, Generator* gen) {
    ln1_ = register_module("ln1", std::make_shared<nn::LayerNorm>(embed));
    attn_ = register_module("attn", std::make_shared<nn::MultiheadAttention>(embed, heads, true, 0.f, gen));
    ln2_ = register_module("ln2", std::make_shared<nn::LayerNorm>(embed));
    fc1_ = register_module("fc1", std::make_shared<nn::Linear>(embed, 4 * embed, true, gen));
    fc2_ = register_module("fc2", std::make_shared<nn::Linear>(4 * embed, embed, true, gen));
  }
  Tensor forward(const Tensor& x) override {
    const Tensor y = x + (*attn_)((*ln1_)(x));
    return y + (*fc2_)(gelu((*fc1_)((*ln2_)(y))));
  }
  std::string type_name() const override { return "PreNormBlock"; }

 private:
  std::shared_ptr<nn::LayerNorm> ln1_, ln2_;
  std::shared_ptr<nn::MultiheadAttention> attn_;
  std::shared_ptr<nn::Linear> fc1_, fc2_;
};

std::shared_ptr<nn::Module> transformer(Generator* gen) {
  constexpr int64_t kEmbed = 128;
  auto m = std::make_shared<nn::Sequential>();
  m->add(std::make_shared<nn::Embedding>(kVocab, kEmbed, gen))
      .add(std::make_shared<nn::PositionalEmbedding>(kSeq, kEmbed, gen))
      .add(std::make_shared<PreNormBlock>(kEmbed, 4, gen))
      .add(std::make_shared<PreNormBlock>(kEmbed, 4, gen))
      .add(std::make_shared<nn::LayerNorm>(kEmbed))
      .add(std::make_shared<nn::Linear>(kEmbed, kVocab, true, gen));
  return m;
}

struct Workload {
  std::string name;
  int64_t batch;
  DataKind data;
  std::function<std::shared_ptr<nn::Module>(Generator*)> model;
  std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)> optimizer;
};

const std::vector<Workload>& workloads() {
  const auto sgd = [](double momentum) {
    return [momentum](std::vector<Tensor> p) -> std::unique_ptr<optim::Optimizer> {
      return std::make_unique<optim::SGD>(std::move(p), optim::SGDOptions{.lr = 0.1, .momentum = momentum});
    };
  };
  const auto adam = [](std::vector<Tensor> p) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::Adam>(std::move(p), optim::AdamOptions{.lr = 1e-3});
  };
  const auto builtin = [](const char* name) {
    return [name](Generator* gen) { return train::make_builtin_model(name, gen); };
  };
  using enum DataKind;
  static const std::vector<Workload> all{
      {"mlp", 100, Mnist, builtin("mlp"), sgd(0)},
      {"mlp64", 100, Mnist, builtin("mlp64"), sgd(0)},
      {"lenet", 100, Mnist, builtin("lenet"), sgd(0)},
      {"lenet-b1024", 1024, Mnist, builtin("lenet"), sgd(0)},
      {"mlp1024-adam", 1024, Mnist, builtin("mlp1024"), adam},
      {"resnet8", 1024, Cifar, resnet8, sgd(0.9)},
      {"lstm", 32, Tokens, lstm_model, adam},
      {"transformer", 32, Tokens, transformer, adam},
  };
  return all;
}

const Workload* find_workload(const std::string& name) {
  for (const Workload& w : workloads())
    if (w.name == name) return &w;
  return nullptr;
}

struct Timing {
  double seconds;  // median per epoch
  float loss;      // the last step's
  std::string graph_note;
};

int64_t g_max_steps = 0;  // --steps; 0 = every full batch

Timing bench(const Workload& w, const ResidentData& data, Device device, int epochs, bool graphs, Precision precision) {
  const PrecisionGuard guard(precision);
  Generator gen(1);
  const auto model = w.model(&gen);
  model->to(device);
  const auto opt = w.optimizer(model->parameters());
  train::TrainingStep step(*model, *opt,
                           {.loss = [](const Tensor& out, const Tensor& y) { return cross_entropy(out, y); },
                            .classification = false,
                            .cuda_graphs = graphs});
  int64_t steps = data.inputs.size(0) / w.batch;
  if (g_max_steps > 0) steps = std::min(steps, g_max_steps);
  float loss = 0;
  auto run_epoch = [&] {
    for (int64_t i = 0; i < steps; ++i) {
      const train::StepResult r =
          step.run(data.inputs.narrow(0, i * w.batch, w.batch), data.targets.narrow(0, i * w.batch, w.batch));
      if (!r.updated) throw Error(w.name + ": the loss became " + std::to_string(r.loss));
      loss = r.loss;
    }
  };
  run_epoch();  // warm-up: allocator caches, library handles, kernel selection, the capture
  std::vector<double> seconds;
  for (int e = 0; e < epochs; ++e) {
    sync(device);
    const auto t0 = Clock::now();
    run_epoch();
    sync(device);
    seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  const double median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  return {median, loss, step.graph_note()};
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream s(text);
  for (std::string part; std::getline(s, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string workload_names() {
  std::string names;
  for (const Workload& w : workloads()) names += (names.empty() ? "" : ",") + w.name;
  return names;
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_gpu [--device cuda:0|cpu] [--models %s] [--epochs E] [--mnist DIR] "
               "[--precision fp32|bf16] [--no-graphs] [--steps S]\n",
               workload_names().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device_text = "cuda:0", mnist_dir;
  std::vector<std::string> models{"mlp", "mlp64", "lenet"};
  int epochs = 3;
  bool graphs = true;
  Precision precision = Precision::FP32;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-graphs") {
      graphs = false;
      continue;
    }
    if (i + 1 >= argc) return usage();
    if (a == "--device") device_text = argv[++i];
    else if (a == "--models") models = split_commas(argv[++i]);
    else if (a == "--epochs") epochs = std::atoi(argv[++i]);
    else if (a == "--mnist") mnist_dir = argv[++i];
    else if (a == "--steps") g_max_steps = std::atoll(argv[++i]);
    else if (a == "--precision") {
      try {
        precision = parse_precision(argv[++i]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
      }
    } else return usage();
  }
  if (epochs < 1 || models.empty()) return usage();
  for (const std::string& m : models)
    if (!find_workload(m)) {
      std::fprintf(stderr, "error: unknown workload '%s' (known: %s)\n", m.c_str(), workload_names().c_str());
      return 2;
    }

  try {
    const Device device = parse_device(device_text);
    if (device.is_cuda()) {
      if (cuda::device_count() == 0) {
        std::printf("skipped: %s\n", cuda::status().c_str());  // "no CUDA device (why)"
        return 0;
      }
      cuda::check_available(device);
      const cuda::DeviceProperties p = cuda::properties(device.index);
      std::printf("device: %s (%s, compute %d.%d, %d SMs, %.1f GiB)\n", p.name.c_str(), device.str().c_str(),
                  p.compute_major, p.compute_minor, p.multiprocessors, double(p.total_memory) / (1 << 30));
      std::printf("convolutions: %s\n", cuda::convolution_engine(device.index).c_str());
    } else {
      std::printf("device: cpu (%d threads)\n", num_threads());
      graphs = false;
      precision = Precision::FP32;
    }
    std::printf("settings: median of %d epochs after 1 warm-up; variants: eager%s%s\n", epochs,
                graphs ? ", CUDA graphs" : "", precision == Precision::BF16 ? ", CUDA graphs + bf16 products" : "");
    std::fflush(stdout);

    ResidentData datasets[3];  // by DataKind, made when a workload first needs it
    for (const std::string& m : models) {
      const Workload& w = *find_workload(m);
      ResidentData& data = datasets[static_cast<int>(w.data)];
      if (!data.inputs.defined()) {
        switch (w.data) {
          case DataKind::Mnist: data = load_mnist(mnist_dir, device); break;
          case DataKind::Cifar: data = synthetic(kCifarSamples, {3, 32, 32}, device); break;
          case DataKind::Tokens: data = random_tokens(device); break;
        }
        sync(device);
        std::printf("data: %s, %lld samples\n", data.description.c_str(), (long long)data.inputs.size(0));
      }
      const auto report = [&](const char* variant, const Timing& t) {
        std::printf("%s %s %s %.4f %.4f\n", variant, m.c_str(), device.str().c_str(), t.seconds, t.loss);
        if (!t.graph_note.empty()) std::printf("# %s %s: %s\n", variant, m.c_str(), t.graph_note.c_str());
        std::fflush(stdout);
      };
      std::printf("# %s: batch %lld, %lld steps/epoch\n", m.c_str(), (long long)w.batch,
                  (long long)(data.inputs.size(0) / w.batch));
      report("plexus", bench(w, data, device, epochs, false, Precision::FP32));
      if (graphs) report("plexus-graphs", bench(w, data, device, epochs, true, Precision::FP32));
      if (precision == Precision::BF16) report("plexus-bf16", bench(w, data, device, epochs, graphs, precision));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
