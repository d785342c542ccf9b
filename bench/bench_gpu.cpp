// bench_gpu: training speed of the built-in models on a device, for a ratio against PyTorch
// running the same workload (bench/reference/torch_gpu.py; scripts/bench-gpu runs both and
// prints the table).
//
//   bench_gpu [--device cuda:0|cpu] [--models mlp,mlp64,lenet] [--epochs E] [--mnist DIR]
//
// Data: the MNIST training split from DIR (train-images-idx3-ubyte[.gz], train-labels-idx1-
// ubyte[.gz]) standardised with its own mean and std, or else 60,000 synthetic N(0, 1) inputs
// [1, 28, 28] with random classes 0..9 from a fixed seed (speed does not depend on the
// values). The whole set is copied to the device once, before any timing.
//
// Training: batch 100, SGD lr 0.1 without momentum, cross-entropy. A step takes batch i as
// a narrow of the resident tensors (in order, no copy), runs forward and the loss, reads the
// loss with item() (one device-to-host read per step, as a loop logging its loss does), then
// zero_grad, backward, step. An epoch is every full batch (600 steps for 60,000 samples).
// One warm-up epoch, then E timed epochs (default 3), each timed by wall clock from a device
// synchronisation to the next; the median is reported.
//
// Output: the device, then per model one line "plexus <model> <device> <s/epoch> <loss>"
// (loss = the last step's). A CUDA device requested where none is usable prints
// "skipped: " and cuda::status() ("no CUDA device (<why>)") and exits 0.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/cuda.h"
#include "plexus.h"
#include "train/builtin.h"

using namespace plexus;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kBatch = 100;
constexpr int64_t kSyntheticSamples = 60000;

struct ResidentData {
  Tensor inputs;   // [N, 1, 28, 28] on the device
  Tensor targets;  // [N], classes as floats, on the device
  std::string description;
};

void sync(Device device) {
  if (device.is_cuda()) cuda::synchronize(device);
}

ResidentData load_data(const std::string& mnist_dir, Device device) {
  Tensor inputs, targets;
  std::string description;
  if (!mnist_dir.empty()) {
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
    inputs = (images - float(mean)) / float(std);
    targets = mnist.labels();
    std::ostringstream s;
    s << "MNIST " << mnist_dir << " (mean " << mean << ", std " << std << ")";
    description = s.str();
  } else {
    Generator gen(1);
    inputs = randn({kSyntheticSamples, 1, 28, 28}, &gen);
    std::vector<float> classes(kSyntheticSamples);
    for (float& c : classes) c = float(gen.next_u64() % 10);
    targets = from_vector(classes, {kSyntheticSamples});
    description = "synthetic N(0, 1), random labels";
  }
  ResidentData d{inputs.to(device), targets.to(device), description};
  sync(device);
  return d;
}

// Seconds per epoch (median of `epochs` timed epochs after one warm-up) and the last loss.
std::pair<double, float> bench_model(const std::string& name, const ResidentData& data, Device device,
                                     int epochs) {
  Generator gen(1);
  const auto model = train::make_builtin_model(name, &gen);
  model->to(device);
  optim::SGD sgd(model->parameters(), {.lr = 0.1});

  const int64_t steps = data.inputs.size(0) / kBatch;
  float loss_value = 0;
  auto run_epoch = [&] {
    for (int64_t i = 0; i < steps; ++i) {
      const Tensor x = data.inputs.narrow(0, i * kBatch, kBatch);
      const Tensor y = data.targets.narrow(0, i * kBatch, kBatch);
      const Tensor loss = cross_entropy((*model)(x), y);
      loss_value = loss.item();
      sgd.zero_grad();
      loss.backward();
      sgd.step();
    }
  };

  run_epoch();  // warm-up: allocator caches, library handles, kernel selection
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
  return {median, loss_value};
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream s(text);
  for (std::string part; std::getline(s, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_gpu [--device cuda:0|cpu] [--models mlp,mlp64,lenet] [--epochs E] [--mnist DIR]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device_text = "cuda:0", mnist_dir;
  std::vector<std::string> models{"mlp", "mlp64", "lenet"};
  int epochs = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    if (a == "--device") device_text = argv[++i];
    else if (a == "--models") models = split_commas(argv[++i]);
    else if (a == "--epochs") epochs = std::atoi(argv[++i]);
    else if (a == "--mnist") mnist_dir = argv[++i];
    else return usage();
  }
  if (epochs < 1 || models.empty()) return usage();

  try {
    const Device device = parse_device(device_text);
    for (const std::string& m : models) {
      const auto& known = train::builtin_model_names();
      if (std::find(known.begin(), known.end(), m) == known.end()) {
        std::fprintf(stderr, "error: unknown model '%s' (built-in: mlp, mlp64, lenet)\n", m.c_str());
        return 2;
      }
    }
    if (device.is_cuda()) {
      if (cuda::device_count() == 0) {
        std::printf("skipped: %s\n", cuda::status().c_str());  // "no CUDA device (why)"
        return 0;
      }
      cuda::check_available(device);
      const cuda::DeviceProperties p = cuda::properties(device.index);
      std::printf("device: %s (%s, compute %d.%d, %d SMs, %.1f GiB)\n", p.name.c_str(), device.str().c_str(),
                  p.compute_major, p.compute_minor, p.multiprocessors, double(p.total_memory) / (1 << 30));
    } else {
      std::printf("device: cpu (%d threads)\n", num_threads());
    }

    const ResidentData data = load_data(mnist_dir, device);
    std::printf("data: %s, %lld samples, batch %lld, %lld steps/epoch; SGD lr 0.1; median of %d epochs after 1 "
                "warm-up\n",
                data.description.c_str(), (long long)data.inputs.size(0), (long long)kBatch,
                (long long)(data.inputs.size(0) / kBatch), epochs);
    std::fflush(stdout);
    for (const std::string& m : models) {
      const auto [seconds, loss] = bench_model(m, data, device, epochs);
      std::printf("plexus %s %s %.4f %.4f\n", m.c_str(), device.str().c_str(), seconds, loss);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
