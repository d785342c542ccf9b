// bench_gpu_models: training steps of real-size project graphs on a device, FP32 and bf16, with
// the model FLOP utilisation (issue 49, item 4). Its twin is bench/reference/torch_gpu_models.py;
// scripts/bench-gpu-models runs both and prints the table.
//
//   bench_gpu_models [--device cuda:0|cpu] [--models gpt,resnet] [--precisions fp32,bf16]
//                    [--batch B] [--warmup W] [--steps S] [--runs R] [--no-graphs]
//
// Workloads (run from the repository root, where these paths resolve):
//   gpt     bench/projects/gpt_char_6x384.plexus: 6 pre-norm blocks of causal attention (6 heads)
//           and a 4x GELU MLP, width 384, 256 characters, vocabulary 54 (the names data's);
//           batch 64, the project's Adam
//   resnet  examples/fashion_resnet.plexus: the examples' ResNet (16-32-64 channels, 28x28x1);
//           batch 256 (the project's is 128), the project's SGD (Nesterov momentum, weight decay)
// The graph is compiled as `plexus-cli train` compiles it (layers::compile, seed 1, the
// project's optimizer and parameter groups), against the shapes of its dataset; the data are
// synthetic and resident on the device, 8 batches used in turn (random token ids and next
// tokens for gpt, N(0, 1) images and random classes for resnet): speed does not depend on the
// values, and the device machine needs no dataset. --batch overrides both batches (a smoke run).
//
// A step is train::TrainingStep, what the Trainer runs: forward, cross-entropy, backward, the
// update and the loss read back. Variants: eager (every op launched from the host) and, on
// CUDA, graphs (the steady step captured once and replayed; the Trainer's default there), each
// at every precision asked for (bf16: products on bf16 operands, FP32 accumulation and
// weights; ops/precision.h). W warm-up steps (default 10: the capture, allocator caches,
// cuBLAS and cuDNN choices), then R runs of S steps, each timed by wall clock from a device
// synchronisation to the next; the median run gives the step time.
//
// Model FLOPs: graph::estimate_compute's training FLOPs per example (6 per multiply-add of
// every product, the causal attention's T×T ones counted in full; elementwise work not
// counted) times examples per second. MFU: that rate over the device's dense peak for the
// precision (kPeaks below, FP32 without TF32 for fp32, as neither side uses TF32); "-" where
// the peak is not known (the CPU, another GPU).
//
// Output: "device: ...", "peak: ..." and per workload
//   model <name> <project> parameters <P> flops_per_example <F> batch <B>
//   result <variant> <name> <precision> <ms/step> <examples/s> <model TFLOP/s> <MFU %|-> <loss>
// with variant plexus or plexus-graphs, and "# ..." commentary. A CUDA device requested where
// none is usable prints "skipped: no CUDA device (...)" and exits 0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graph/compute.h"
#include "plexus.h"
#include "session/optimizer_groups.h"
#include "train/step.h"

using namespace plexus;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kBatches = 8;  // distinct resident batches, used in turn

// Dense peaks (without structured sparsity) from NVIDIA's datasheets: H100 Tensor Core GPU
// (SXM5, PCIe, NVL) and H200 Tensor Core GPU (SXM, NVL), in TFLOP/s. FP32 is the CUDA cores'
// (not TF32); bf16 the tensor cores' with FP32 accumulation. GH200 has the H100 SXM's figures.
// The first entry whose text the device's name contains applies.
struct DevicePeak {
  const char* name_contains;
  const char* source;
  double fp32_tflops, bf16_tflops;
};
// clang-format off
constexpr DevicePeak kPeaks[] = {
    {"H100 PCIe", "H100 PCIe datasheet", 51.2, 756},
    {"H100 NVL", "H100 NVL datasheet", 60, 835},
    {"H200 NVL", "H200 NVL datasheet", 60, 835},
    {"H100", "H100 SXM5 datasheet", 67, 989},
    {"H200", "H200 SXM datasheet", 67, 989},
};
// clang-format on

const DevicePeak* find_peak(const std::string& device_name) {
  for (const DevicePeak& p : kPeaks)
    if (device_name.find(p.name_contains) != std::string::npos) return &p;
  return nullptr;
}

struct Workload {
  std::string project;
  int64_t batch;
  graph::DatasetInfo data;  // the shapes of the project's dataset
  bool tokens;              // inputs are token ids (a text's windows), else values
};

// By name.
const std::map<std::string, Workload> kWorkloads{
    {"gpt",
     {"bench/projects/gpt_char_6x384.plexus", 64, {.input_shape = {256}, .label_shape = {256}, .classes = 54}, true}},
    {"resnet",
     {"examples/fashion_resnet.plexus", 256, {.input_shape = {1, 28, 28}, .label_shape = {}, .classes = 10}, false}},
};

// kBatches batches of `batch` examples shaped as the workload's data, resident on `device`:
// random token ids or N(0, 1) values in, random classes (next token ids) out, as floats.
struct ResidentData {
  Tensor inputs, targets;
};
ResidentData synthetic(const Workload& w, int64_t batch, Device device) {
  const graph::DatasetInfo& info = w.data;
  Generator gen(1);
  const int64_t n = kBatches * batch;
  const auto classes = [&](Shape shape) {
    shape.insert(shape.begin(), n);
    std::vector<float> values(static_cast<size_t>(numel(shape)));
    for (float& v : values) v = float(gen.next_u64() % uint64_t(info.classes));
    return from_vector(values, shape).to(device);
  };
  Shape inputs{n};
  inputs.insert(inputs.end(), info.input_shape.begin(), info.input_shape.end());
  return {w.tokens ? classes(info.input_shape) : randn(inputs, &gen).to(device), classes(info.label_shape)};
}

void sync(Device device) {
  if (device.is_cuda()) cuda::synchronize(device);
}

struct Settings {
  Device device = Device::cpu();
  int64_t batch = 0;  // 0: the workload's
  int warmup = 10, steps = 20, runs = 3;
};

struct Timing {
  double step_seconds;  // median run's, per step
  float loss;           // the last step's
  std::string graph_note;
};

// Each variant compiles the graph afresh: the same initial weights (the project's seed) and a
// new optimizer.
Timing bench(const graph::Graph& graph, const graph::DatasetInfo& info, const ResidentData& data, int64_t batch,
             const Settings& s, bool graphs, Precision precision) {
  const PrecisionGuard guard(precision_on(s.device, precision));
  const layers::CompiledGraph compiled = layers::compile(graph, info, graph.training.seed);
  nn::Module& model = *compiled.model;
  model.to(s.device);
  const auto optimizer = optim::make_optimizer(graph.training, session::parameter_groups(graph, model));
  train::TrainingStep step(model, *optimizer, {.loss = compiled.loss, .classification = false, .cuda_graphs = graphs});
  int64_t at = 0;
  float loss = 0;
  const auto run = [&](int steps) {
    for (int i = 0; i < steps; ++i, at = (at + 1) % kBatches) {
      const train::StepResult r =
          step.run(data.inputs.narrow(0, at * batch, batch), data.targets.narrow(0, at * batch, batch));
      if (!r.updated) throw Error("the loss became " + std::to_string(r.loss));
      loss = r.loss;
    }
  };
  run(s.warmup);
  std::vector<double> seconds;
  for (int r = 0; r < s.runs; ++r) {
    sync(s.device);
    const auto t0 = Clock::now();
    run(s.steps);
    sync(s.device);
    seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / s.steps);
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds[seconds.size() / 2], loss, step.graph_note()};
}

// "a,b,,c" -> {"a", "b", "c"}
std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> parts;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find(',', at), text.size());
    if (end > at) parts.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  return parts;
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_gpu_models [--device cuda:0|cpu] [--models gpt,resnet] [--precisions fp32,bf16] "
               "[--batch B] [--warmup W] [--steps S] [--runs R] [--no-graphs]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device_text = "cuda:0";
  std::vector<std::string> models{"gpt", "resnet"}, precision_names{"fp32", "bf16"};
  Settings s;
  bool graphs = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;  // an option's value
    if (a == "--no-graphs") {
      graphs = false;
      continue;
    }
    if (!v) return usage();
    ++i;
    if (a == "--device")
      device_text = v;
    else if (a == "--models")
      models = split_commas(v);
    else if (a == "--precisions")
      precision_names = split_commas(v);
    else if (a == "--batch")
      s.batch = std::atoll(v);
    else if (a == "--warmup")
      s.warmup = std::atoi(v);
    else if (a == "--steps")
      s.steps = std::atoi(v);
    else if (a == "--runs")
      s.runs = std::atoi(v);
    else
      return usage();
  }
  if (models.empty() || precision_names.empty() || s.batch < 0 || s.warmup < 0 || s.steps < 1 || s.runs < 1)
    return usage();
  for (const std::string& m : models)
    if (!kWorkloads.count(m)) {
      std::fprintf(stderr, "error: unknown workload '%s' (known: gpt, resnet)\n", m.c_str());
      return 2;
    }

  try {
    std::vector<Precision> precisions;
    for (const std::string& p : precision_names) precisions.push_back(parse_precision(p));
    s.device = parse_device(device_text);
    const DevicePeak* peak = nullptr;
    if (s.device.is_cuda()) {
      if (cuda::device_count() == 0) {
        std::printf("skipped: %s\n", cuda::status().c_str());  // "no CUDA device (why)"
        return 0;
      }
      cuda::check_available(s.device);
      const cuda::DeviceProperties p = cuda::properties(s.device.index);
      std::printf("device: %s (%s, compute %d.%d, %d SMs, %.1f GiB)\n", p.name.c_str(), s.device.str().c_str(),
                  p.compute_major, p.compute_minor, p.multiprocessors, double(p.total_memory) / (1 << 30));
      peak = find_peak(p.name);
      if (peak)
        std::printf("peak: fp32 %g TFLOP/s, bf16 %g TFLOP/s (NVIDIA %s, dense)\n", peak->fp32_tflops, peak->bf16_tflops,
                    peak->source);
      else
        std::printf("peak: not known for %s (MFU not stated)\n", p.name.c_str());
    } else {
      std::printf("device: cpu (%d threads)\npeak: not stated for a CPU (MFU not stated)\n", num_threads());
      graphs = false;  // CUDA graphs need CUDA
    }
    std::printf("settings: %d warm-up steps, median of %d runs of %d steps; variants: eager%s; precisions:", s.warmup,
                s.runs, s.steps, graphs ? ", CUDA graphs" : "");
    for (Precision p : precisions)
      std::printf(" %s%s", precision_name(p),
                  precision_on(s.device, p) == p ? "" : " (computes in fp32: no AVX512_BF16 here)");
    std::printf("\n");
    std::fflush(stdout);

    for (const std::string& name : models) {
      const Workload& w = kWorkloads.at(name);
      const int64_t batch = s.batch > 0 ? s.batch : w.batch;
      const graph::Graph graph = graph::load_project(w.project);
      const layers::CompiledGraph compiled = layers::compile(graph, w.data, graph.training.seed);
      int64_t parameters = 0;
      for (const Tensor& p : compiled.model->parameters()) parameters += p.numel();
      const double flops = graph::estimate_compute(graph::GraphIndex(graph), compiled.validation.shapes).training_flops;
      std::printf("model %s %s parameters %lld flops_per_example %.6g batch %lld\n", name.c_str(), w.project.c_str(),
                  (long long)parameters, flops, (long long)batch);
      const ResidentData data = synthetic(w, batch, s.device);
      for (const Precision precision : precisions)
        for (const bool captured : graphs ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
          const Timing t = bench(graph, w.data, data, batch, s, captured, precision);
          const double examples = double(batch) / t.step_seconds, tflops = flops * examples / 1e12;
          const double peak_tflops = !peak ? 0 : precision == Precision::BF16 ? peak->bf16_tflops : peak->fp32_tflops;
          const std::string mfu = peak_tflops > 0 ? std::to_string(100 * tflops / peak_tflops) : "-";
          const char* variant = captured ? "plexus-graphs" : "plexus";
          std::printf("result %s %s %s %.4f %.1f %.3f %s %.4f\n", variant, name.c_str(), precision_name(precision),
                      1e3 * t.step_seconds, examples, tflops, mfu.c_str(), t.loss);
          if (!t.graph_note.empty()) std::printf("# %s %s: %s\n", variant, name.c_str(), t.graph_note.c_str());
          std::fflush(stdout);
        }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
