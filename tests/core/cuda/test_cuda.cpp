// The CUDA backend against the CPU one. Every op of core/ops/ops.h runs forward and backward
// on copies of the same seeded inputs on both devices: `opParity` runs the rows of the op-case
// table (tests/core/ops/op_cases.cpp, which test_gradcheck and test_ops_forward run too), each
// row passing or failing on its own under its name. Gradient checks run directly on the device
// (`gradcheckOnDevice`, the table's rows marked for it, and compositions below); device copies,
// pinned memory, the caching allocator, out-of-memory and bad-index reporting, dropout's device
// generator, the fused optimizers, modules moved with to(), and training through
// train::Trainer are compared with the CPU too.
//
// Without a CUDA device (or in a build with PLEXUS_CUDA=OFF) every test skips ("skipped: no
// CUDA device") and the suite exits 77, which ctest reports as Skipped, on machines that have
// no GPU.
//
// Tolerances: |gpu - cpu| <= atol * max(1, max |cpu|) + rtol * |cpu| per element, with
// (rtol, atol) = (1e-4, 1e-5) for elementwise ops, (1e-3, 1e-4) for reductions, softmax,
// normalisation and losses, (1e-3, 1e-3) for matmul and convolutions; exact for copies of
// values (comparisons, argmax, indices): op_cases.h's kElem, kSum, kGemm, kConv and kExact.
// Inputs stay clear of kinks (relu, abs, clamp) and of ties (max, min, pools), so both devices
// take the same branch everywhere.
//
// One broken op must not hide the others: an exception escaping a test fails that test only
// (GUARD_BEGIN / GUARD_END), a pending asynchronous error is pinned on the test that caused it
// (GUARD_BEGIN synchronises the device when the test ends), and the tests whose failure could
// poison the CUDA context (out of memory, bad indices, operands on two devices) run last.
#include "support/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "core/ops/op_cases.h"
#include "cuda/cuda.h"
#include "data/dataloader.h"
#include "data/dataset.h"
#include "data/mnist.h"
#include "nn/layers.h"
#include "ops/ops.h"
#include "ops/precision.h"
#include "optim/adagrad.h"
#include "optim/adam.h"
#include "optim/factory.h"
#include "optim/optimizer.h"
#include "optim/rmsprop.h"
#include "optim/sgd.h"
#include "optim/step_warmup.h"
#include "support/test_support.h"
#include "tensor/allocator.h"
#include "tensor/tensor.h"
#include "train/builtin.h"
#include "train/checkpoint.h"
#include "train/events.h"
#include "train/step.h"
#include "train/trainer.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::testing;
namespace fs = std::filesystem;

namespace {

const Device kCpu = Device::cpu();
const Device kGpu = Device::cuda(0);

// ---- inputs (on the CPU from seeded generators: op_cases.h), and on the device ---------------

// A device leaf with the values of a CPU tensor (contiguous), and a device copy.
Tensor gpu_leaf(const Tensor& cpu) {
  Tensor t = cpu.to(kGpu).detach();
  t.requires_grad_();
  return t;
}
Tensor gpu(const Tensor& cpu) { return cpu.to(kGpu); }

// ---- comparing ------------------------------------------------------------------------------

// Convolutions through cuDNN may run FFT or Winograd algorithms (as PyTorch's benchmark mode
// does), whose error is relative to a plane's largest value (measured up to 3e-3 of it on an
// H100); our own lowering (PLEXUS_CUDNN=0) is held to kGemm.
Tol conv_tolerance() {
  const bool cudnn = cuda::device_count() > 0 && cuda::convolution_engine(0).rfind("cuDNN", 0) == 0;
  return cudnn ? Tol{1e-3, 1e-2} : kGemm;
}

// A table row's tolerance on this machine.
Tol tolerance(const OpCase& c) { return c.tol.conv ? conv_tolerance() : c.tol; }

// Empty when every element of `got` (the device's) is within tolerance of `want` (the CPU's);
// else says where not.
std::string mismatch(const std::vector<float>& got, const std::vector<float>& want, Tol tol) {
  return testing::mismatch(got, want, tol, "gpu", "cpu");
}
std::string mismatch(const Tensor& got, const Tensor& want, Tol tol) {
  return testing::mismatch(got, want, tol, "gpu", "cpu");
}

#define EXPECT_MATCH(got, want, tol)                                         \
  do {                                                                       \
    const std::string err_ = mismatch((got), (want), (tol));                 \
    VERIFY2(err_.empty(), std::string(#got) + " vs " + #want + ": " + err_); \
  } while (0)

std::string what_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

// A number in a message: %g with `precision` digits.
std::string num(double v, int precision = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return buf;
}

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Whether cuda:0 is there; the first call says what the machine has.
bool device_present() {
  static const bool present = [] {
    std::printf("%s\n", cuda::status().c_str());
    if (cuda::device_count() == 0) return false;
    const cuda::DeviceProperties p = cuda::properties(0);
    std::printf("cuda:0 is %s: %.1f GiB, compute capability %d.%d, %d multiprocessors; convolutions: %s\n",
                p.name.c_str(), double(p.total_memory) / double(1 << 30), p.compute_major, p.compute_minor,
                p.multiprocessors, cuda::convolution_engine(0).c_str());
    return true;
  }();
  return present;
}

// Every test ends with the device idle and no fault pending: an asynchronous error is pinned
// on the test that caused it, not the next one.
struct SynchronizedAtEnd {
  SynchronizedAtEnd() = default;
  SynchronizedAtEnd(const SynchronizedAtEnd&) = delete;
  SynchronizedAtEnd& operator=(const SynchronizedAtEnd&) = delete;
  ~SynchronizedAtEnd() {
    const std::string err = what_of([] { cuda::synchronize(kGpu); });
    if (!err.empty())
      check::record_failure("after the test, synchronising cuda:0 threw: " + err, __FILE__, __LINE__);
  }
};

// Every test's body: skipped without a device; with one, an exception escaping it fails this
// test with its message (the runner would too, but only after the device's check below), and
// the device is synchronised at the end.
#define GUARD_BEGIN                                       \
  if (!device_present()) SKIP("skipped: no CUDA device"); \
  const SynchronizedAtEnd synchronized_at_end_;           \
  try {
#define GUARD_END                                                      \
  }                                                                    \
  catch (const std::exception& guard_error_) {                         \
    FAIL("unexpected exception: " + std::string(guard_error_.what())); \
  }

// ---- the parity check of one op-case row ---------------------------------------------------------

struct Outcome {
  Device device;
  Shape shape;
  std::vector<float> out;
  bool differentiable = false;
  std::vector<std::vector<float>> grads;  // per input (zeros where no gradient arrived)
  std::vector<std::string> grad_errors;   // per input: wrong shape or device
  std::vector<std::vector<float>> after;  // every input's values afterwards (in-place updates)
};

// Runs the case on copies of `inputs` on `device`: forward, then backward with a fixed random
// projection of the output.
Outcome run_case(const OpCase& c, const TV& inputs, Device device) {
  TV in;
  for (const Tensor& t : inputs) in.push_back(mirror(t, device));
  Outcome o;
  const Tensor out = c.f(in);
  o.device = out.device();
  o.shape = out.shape();
  o.out = out.to_vector();
  o.differentiable = out.requires_grad();
  if (o.differentiable) {
    Generator gen(4242);
    out.backward(randn(out.shape(), &gen).to(device));
  }
  for (const Tensor& t : in) {
    std::vector<float> g;
    std::string err;
    if (t.defined() && t.requires_grad()) {
      const Tensor grad = t.grad();
      if (!grad.defined()) g.assign(size_t(t.numel()), 0.f);
      else {
        if (grad.shape() != t.shape())
          err = "gradient shape " + to_string(grad.shape()) + " for input " + to_string(t.shape());
        else if (!(grad.device() == device))
          err = "gradient on " + grad.device().str() + ", expected " + device.str();
        g = grad.to_vector();
      }
    }
    o.grads.push_back(std::move(g));
    o.grad_errors.push_back(err);
    o.after.push_back(t.defined() ? t.to_vector() : std::vector<float>());
  }
  return o;
}

// ---- gradient checks on the device -----------------------------------------------------------

// The gradient check on the device: inputs and gradients must stay on it.
GradcheckResult device_check(const std::string& label, const TensorFunction& f, const TV& inputs,
                             const GradcheckOptions& opt = {}) {
  return checked_gradcheck(label, f, inputs, opt, &kGpu);
}

#define DEVICE_GRADCHECK(...)                                     \
  do {                                                            \
    const GradcheckResult gc_result_ = device_check(__VA_ARGS__); \
    VERIFY2(gc_result_.ok, gc_result_.message);                   \
  } while (0)

// ---- optimizers -------------------------------------------------------------------------------

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& kind, std::vector<Tensor> params) {
  using namespace optim;
  if (kind == "SGD momentum 0.9 nesterov weight_decay")
    return std::make_unique<SGD>(std::move(params), SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-2, .nesterov = true});
  if (kind == "SGD momentum dampening maximize")
    return std::make_unique<SGD>(std::move(params),
                                 SGDOptions{.lr = 0.05, .momentum = 0.8, .dampening = 0.1, .maximize = true});
  if (kind == "SGD plain") return std::make_unique<SGD>(std::move(params), SGDOptions{.lr = 0.1});
  if (kind == "Adam weight_decay")
    return std::make_unique<Adam>(std::move(params), AdamOptions{.lr = 1e-2, .weight_decay = 1e-2});
  if (kind == "Adam amsgrad betas")
    return std::make_unique<Adam>(std::move(params), AdamOptions{.lr = 5e-3, .beta1 = 0.8, .beta2 = 0.99, .amsgrad = true});
  if (kind == "AdamW amsgrad")
    return std::make_unique<AdamW>(std::move(params), AdamOptions{.lr = 1e-2, .weight_decay = 0.05, .amsgrad = true});
  if (kind == "AdamW defaults") return std::make_unique<AdamW>(std::move(params), AdamOptions{.lr = 1e-2});
  if (kind == "RMSprop weight_decay")
    return std::make_unique<RMSprop>(std::move(params), RMSpropOptions{.lr = 1e-2, .weight_decay = 1e-2});
  if (kind == "RMSprop centered momentum")
    return std::make_unique<RMSprop>(std::move(params),
                                     RMSpropOptions{.lr = 1e-2, .alpha = 0.9, .momentum = 0.9, .centered = true});
  if (kind == "Adagrad lr_decay weight_decay initial_accumulator")
    return std::make_unique<Adagrad>(std::move(params), AdagradOptions{.lr = 0.1, .lr_decay = 0.01, .weight_decay = 1e-2,
                                                                       .initial_accumulator_value = 0.1});
  return nullptr;
}

// ---- training -----------------------------------------------------------------------------------

// Ten fixed random 28x28 binary stroke patterns plus per-image noise: an easy stand-in for
// digits (the same generator as test_trainer's).
std::shared_ptr<data::TensorDataset> synthetic_digits(int64_t n, uint64_t seed) {
  Generator shapes(1234), gen(seed);
  const Tensor prototypes = gt(rand({10, 1, 28, 28}, &shapes), full({}, 0.8f));
  std::vector<float> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[size_t(i)] = float((i * 7 + int64_t(seed)) % 10);
  const Tensor y = from_vector(labels, {n});
  const Tensor x = clamp(index_select(prototypes, 0, y) + randn({n, 1, 28, 28}, &gen) * 0.4f, 0.f, 1.f);
  return std::make_shared<data::TensorDataset>(x, y);
}

std::shared_ptr<nn::Module> make_model(const std::string& name, uint64_t seed) {
  Generator gen(seed);
  if (name == "custom mlp (batchnorm, gelu)") {
    auto m = std::make_shared<nn::Sequential>();
    m->add(std::make_shared<nn::Flatten>())
        .add(std::make_shared<nn::Linear>(784, 96, true, &gen))
        .add(std::make_shared<nn::BatchNorm1d>(96))
        .add(std::make_shared<nn::GELU>())
        .add(std::make_shared<nn::Linear>(96, 10, true, &gen));
    return m;
  }
  return train::make_builtin_model(name, &gen);
}

struct TrainOutcome {
  train::RunResult result;
  double first_loss = std::nan("");
  bool params_on_device = true;
  std::vector<std::string> notices;
};

// ---- the training step as a CUDA graph ----

// A module that reads the device back in its forward pass: a step holding it cannot be
// captured.
class ReadsHost final : public nn::Module {
 public:
  Tensor forward(const Tensor& x) override {
    (void)x.sum().item();
    return x;
  }
  std::string type_name() const override { return "ReadsHost"; }
};

struct StepModel {
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::Optimizer> opt;
};

// The models and optimizers a captured step must replay exactly: plain SGD, momentum,
// dropout (random keys per replay) with Adam (bias correction per step), batch norm (running
// statistics) with AdamW, and parameter groups (the first layer frozen) under a per-step
// warm-up (each replay's lrs staged afresh).
StepModel make_step_model(const std::string& name) {
  Generator gen(1);
  StepModel m;
  auto seq = std::make_shared<nn::Sequential>();
  if (name == "mlp sgd" || name == "reads host" || name == "mlp groups warm-up") {
    m.model = train::make_builtin_model("mlp", &gen);
    if (name == "reads host") {
      seq->add(std::make_shared<ReadsHost>()).add(m.model);
      m.model = seq;
    }
  } else if (name == "lenet momentum") {
    m.model = train::make_builtin_model("lenet", &gen);
  } else if (name == "dropout adam") {
    seq->add(std::make_shared<nn::Flatten>())
        .add(std::make_shared<nn::Linear>(784, 64, true, &gen))
        .add(std::make_shared<nn::ReLU>())
        .add(std::make_shared<nn::Dropout>(0.3f))
        .add(std::make_shared<nn::Linear>(64, 10, true, &gen));
    m.model = seq;
  } else {  // "batchnorm adamw"
    seq->add(std::make_shared<nn::Flatten>())
        .add(std::make_shared<nn::Linear>(784, 64, true, &gen))
        .add(std::make_shared<nn::BatchNorm1d>(64))
        .add(std::make_shared<nn::GELU>())
        .add(std::make_shared<nn::Linear>(64, 10, true, &gen));
    m.model = seq;
  }
  m.model->to(kGpu);
  const auto params = m.model->parameters();
  if (name == "lenet momentum")
    m.opt = std::make_unique<optim::SGD>(params, optim::SGDOptions{.lr = 0.05, .momentum = 0.9, .nesterov = true});
  else if (name == "dropout adam")
    m.opt = std::make_unique<optim::Adam>(params, optim::AdamOptions{.lr = 1e-3});
  else if (name == "batchnorm adamw")
    m.opt = std::make_unique<optim::AdamW>(params, optim::AdamOptions{.lr = 1e-3});
  else if (name == "mlp groups warm-up")
    m.opt = optim::make_optimizer({.optimizer = "sgd", .lr = 0.05, .momentum = 0.9},
                                  {{{params[0], params[1]}, 0, 1}, {{params.begin() + 2, params.end()}, 1, 1}});
  else
    m.opt = std::make_unique<optim::SGD>(params, optim::SGDOptions{.lr = 0.05});
  return m;
}

// The warm-up a step model trains under: over the first 8 steps for "mlp groups warm-up".
optim::StepWarmup step_warmup(const std::string& name) {
  return {.steps = name == "mlp groups warm-up" ? 8 : 0, .start_factor = 0.1};
}

train::StepOptions step_options(bool graphs) {
  return {.loss = [](const Tensor& out, const Tensor& y) { return cross_entropy(out, y); }, .cuda_graphs = graphs};
}

// Batch i of a fixed sequence: 32 examples, but 13 for batch 6 (a short batch, run eagerly
// beside a captured graph); inputs on the host, as a loader gives them.
std::pair<Tensor, Tensor> step_batch(int i) {
  Generator gen(100 + uint64_t(i));
  const int64_t n = i == 6 ? 13 : 32;
  std::vector<float> labels(static_cast<size_t>(n));
  for (float& l : labels) l = float(gen.next_u64() % 10);
  return {randn({n, 1, 28, 28}, &gen), from_vector(labels, {n})};
}

struct StepRun {
  std::vector<float> losses;
  std::vector<std::vector<float>> weights;
  std::string note;
  bool replaying = false;
  int probed = 0;  // steps that ran with the probe
};

// A probe that reads the gradients and weights back to the host (as the statistics do): a
// step that carries one runs eagerly beside the captured graph.
class HostReadingProbe final : public train::StepProbe {
 public:
  explicit HostReadingProbe(nn::Module& model) : model_(model) {}
  void after_backward() override {
    ++backwards;
    for (const Tensor& p : model_.parameters()) grad_sq += (p.grad() * p.grad()).sum().item();
  }
  void after_update() override {
    ++updates;
    const NoGradGuard no_grad;
    for (const Tensor& p : model_.parameters()) weight_sq += (p * p).sum().item();
  }
  int backwards = 0, updates = 0;
  double grad_sq = 0, weight_sq = 0;

 private:
  nn::Module& model_;
};

// `probe_every` > 0: steps 1, 1 + probe_every, ... carry a HostReadingProbe.
StepRun run_steps(const std::string& name, bool graphs, int steps, int probe_every = 0) {
  StepModel m = make_step_model(name);
  manual_seed(7);  // dropout's keys
  train::TrainingStep step(*m.model, *m.opt, step_options(graphs));
  HostReadingProbe probe(*m.model);
  StepRun r;
  for (int i = 0; i < steps; ++i) {
    const auto [x, y] = step_batch(i);
    const optim::ScaledLr warmed(*m.opt, step_warmup(name).factor(i));
    const bool probed = probe_every > 0 && i % probe_every == 0;
    const train::StepResult s = step.run(x, y, probed ? &probe : nullptr);
    if (!s.updated) throw Error("step " + std::to_string(i) + ": loss " + std::to_string(s.loss));
    r.losses.push_back(s.loss);
  }
  for (const Tensor& p : m.model->parameters()) r.weights.push_back(p.to_vector());
  for (const Tensor& b : m.model->buffers()) r.weights.push_back(b.to_vector());
  r.note = step.graph_note();
  r.replaying = step.replaying();
  r.probed = probe.updates;
  if (probe_every > 0 && (probe.updates == 0 || probe.backwards != probe.updates || !std::isfinite(probe.grad_sq) ||
                          !(probe.weight_sq > 0)))
    throw Error("the probe saw " + std::to_string(probe.backwards) + " backward passes, " +
                std::to_string(probe.updates) + " updates, gradient sum of squares " + std::to_string(probe.grad_sq));
  return r;
}

// Largest |a - b| / max(1, |a|) over two runs' weights.
double weight_difference(const StepRun& a, const StepRun& b) {
  double worst = 0;
  for (size_t t = 0; t < a.weights.size(); ++t)
    for (size_t i = 0; i < a.weights[t].size(); ++i)
      worst = std::max(worst, double(std::fabs(a.weights[t][i] - b.weights[t][i])) /
                                  std::max(1.0, double(std::fabs(a.weights[t][i]))));
  return worst;
}

TrainOutcome train_on(Device device, const std::string& model_name, std::shared_ptr<const data::Dataset> train_set,
                      std::shared_ptr<const data::Dataset> test_set, data::TransformPtr norm, int epochs, double lr,
                      int64_t batch, Precision precision = Precision::FP32) {
  TrainOutcome o;
  auto model = make_model(model_name, 7);
  model->to(device);
  optim::SGD opt(model->parameters(), {.lr = lr, .momentum = 0.9});
  // On the GPU the loaders assemble batches in pinned memory (asynchronous copies); the
  // batches are the same either way.
  const bool pin = device.is_cuda();
  data::DataLoader train_loader(std::move(train_set),
                                {.batch_size = batch, .shuffle = true, .seed = 11, .transform = norm, .pin_memory = pin});
  data::DataLoader test_loader(std::move(test_set), {.batch_size = 500, .transform = norm, .pin_memory = pin});
  train::TrainerOptions options;
  options.epochs = epochs;
  options.precision = precision;
  train::Trainer trainer(*model, opt, train_loader, &test_loader, options);
  trainer.set_callback([&o](const train::Event& e) {
    if (const auto* b = std::get_if<train::BatchEnd>(&e); b && b->epoch == 1 && b->batch == 1) o.first_loss = b->loss;
    if (const auto* n = std::get_if<train::Notice>(&e)) o.notices.push_back(n->text);
  });
  o.result = trainer.run();
  for (const Tensor& p : model->parameters()) o.params_on_device = o.params_on_device && p.device() == device;
  for (const Tensor& b : model->buffers()) o.params_on_device = o.params_on_device && b.device() == device;
  return o;
}

// data/mnist of the source tree, or PLEXUS_MNIST_DIR (a GPU machine with a copy elsewhere).
const fs::path kMnist = std::getenv("PLEXUS_MNIST_DIR") ? fs::path(std::getenv("PLEXUS_MNIST_DIR"))
                                                        : fs::path(PLEXUS_SOURCE_DIR) / "data" / "mnist";

bool has_mnist() {
  for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    if (!fs::exists(kMnist / f) && !fs::exists(kMnist / (std::string(f) + ".gz"))) return false;
  return true;
}

}  // namespace

// ---- the device itself ----
TEST(deviceQueries) {
  GUARD_BEGIN
    VERIFY(cuda::built());
    VERIFY(cuda::device_count() >= 1);
    VERIFY2(!cuda::status().empty(), "status() is empty");
    const cuda::DeviceProperties p = cuda::properties(0);
    COMPARE(p.index, 0);
    VERIFY(!p.name.empty());
    VERIFY(p.total_memory > (int64_t(1) << 30));
    VERIFY(p.multiprocessors > 0 && p.compute_major >= 3);
    VERIFY(parse_device("cuda:0") == Device::cuda(0));
    VERIFY(parse_device("cuda") == Device::cuda(0));
    VERIFY(parse_device("cpu") == Device::cpu());
    COMPARE(Device::cuda(3).str(), std::string("cuda:3"));
    cuda::check_available(kGpu);
    cuda::check_available(kCpu);
    cuda::synchronize(kGpu);
    const std::string missing = message_of<DeviceError>([] { cuda::check_available(Device::cuda(99)); });
    VERIFY2(contains(missing, "cuda:99"), missing);
    VERIFY_THROWS(DeviceError, (void)cuda::properties(99));
  GUARD_END
}

TEST(factoriesOnDevice) {
  GUARD_BEGIN
    const Tensor z = zeros({3, 4}, kGpu), o = ones({2, 5}, kGpu), f = full({7}, -2.5f, kGpu), e = empty({4, 4}, kGpu);
    for (const Tensor* t : {&z, &o, &f, &e}) VERIFY(t->device() == kGpu);
    COMPARE(z.to_vector(), std::vector<float>(12, 0.f));
    COMPARE(o.to_vector(), std::vector<float>(10, 1.f));
    COMPARE(f.to_vector(), std::vector<float>(7, -2.5f));
    COMPARE(e.shape(), (Shape{4, 4}));
    COMPARE(scalar(3.5f, kGpu).item(), 3.5f);
    const Tensor none = zeros({0, 3}, kGpu);
    COMPARE(none.numel(), int64_t(0));
    VERIFY(none.to_vector().empty());
    VERIFY(zeros_like(o).device() == kGpu && ones_like(z).device() == kGpu);
    COMPARE(ones_like(z).to_vector(), std::vector<float>(12, 1.f));
    const Tensor big = full({1 << 22}, 0.5f, kGpu);  // 4M elements: every block of a fill kernel
    COMPARE(sum(big).item(), float(1 << 21));
  GUARD_END
}

// ---- Tensor::to, element access, printing ----
TEST(copiesBetweenDevices) {
  GUARD_BEGIN
    const Tensor x = normal({3, 4, 5}, 1);
    const Tensor g = x.to(kGpu);
    VERIFY(g.device() == kGpu);
    COMPARE(g.shape(), x.shape());
    VERIFY(g.is_contiguous());
    VERIFY(g.to(kGpu).is_same(g));  // already there: the tensor itself
    const Tensor back = g.to(kCpu);
    VERIFY(back.device() == kCpu);
    COMPARE(back.to_vector(), x.to_vector());  // bit for bit
    COMPARE(g.to_vector(), x.to_vector());
    // Non-contiguous sources, both ways: the copy holds the view's values in row-major order.
    const Tensor views[] = {x.transpose(0, 2), x.permute({1, 2, 0}), slice(x, 2, 1, 5, 2), x.narrow(1, 1, 2),
                            normal({4, 1}, 2).expand({4, 6})};
    for (const Tensor& v : views) {
      VERIFY(!v.is_contiguous());
      const Tensor d = v.to(kGpu);
      COMPARE(d.shape(), v.shape());
      COMPARE(d.to_vector(), v.to_vector());
    }
    const Tensor gv = g.transpose(0, 2);
    COMPARE(gv.to(kCpu).to_vector(), x.transpose(0, 2).to_vector());
    COMPARE(slice(g, 1, 0, 4, 3).to(kCpu).to_vector(), slice(x, 1, 0, 4, 3).to_vector());
    COMPARE(g.permute({2, 0, 1}).contiguous().to_vector(), x.permute({2, 0, 1}).contiguous().to_vector());
    // Element access on the device.
    COMPARE(g.at({2, 3, 4}), x.at({2, 3, 4}));
    COMPARE(gv.at({4, 1, 0}), x.at({0, 1, 4}));
    COMPARE(sum(g * g).item(), sum(x * x).item());  // 60 terms: exact enough for COMPARE's fuzz
    // 0-d and empty tensors.
    COMPARE(scalar(-1.25f).to(kGpu).item(), -1.25f);
    COMPARE(zeros({0, 4}).to(kGpu).shape(), (Shape{0, 4}));
    // A large copy (64 MiB) both ways.
    const Tensor large = normal({1 << 24}, 3);
    VERIFY(large.to(kGpu).to(kCpu).to_vector() == large.to_vector());
    // clone and contiguous stay on the device.
    VERIFY(g.clone().device() == kGpu && gv.contiguous().device() == kGpu);
    COMPARE(gv.clone().to_vector(), x.transpose(0, 2).to_vector());
  GUARD_END
}

// A checkpoint written from the GPU (model + Adam state) loads into a CPU model and into
// another GPU model, and both continue identically.
TEST(checkpointsFromTheDevice) {
  GUARD_BEGIN
    auto make = [](uint64_t seed, Device d) {
      Generator g(seed);
      auto m = train::make_builtin_model("mlp", &g);
      m->to(d);
      auto o = optim::make_optimizer({.optimizer = "adam", .lr = 0.01}, m->parameters());
      return std::pair{m, std::move(o)};
    };
    Generator data_gen(21);
    const Tensor x = randn({8, 1, 28, 28}, &data_gen);
    const Tensor y = from_vector({0, 1, 2, 3, 4, 5, 6, 7}, {8});
    auto step = [&](nn::Module& m, optim::Optimizer& o, Device d) {
      o.zero_grad();
      const Tensor loss = cross_entropy(m(x.to(d)), y.to(d));
      loss.backward();
      o.step();
      return loss.item();
    };
    auto [gpu, gpu_opt] = make(3, kGpu);
    step(*gpu, *gpu_opt, kGpu);
    const fs::path path = fs::temp_directory_path() / "plexus_test_cuda_checkpoint.safetensors";
    train::save_checkpoint(path, *gpu, gpu_opt.get());

    auto [cpu, cpu_opt] = make(4, kCpu);
    auto [gpu2, gpu2_opt] = make(5, kGpu);
    train::load_checkpoint(path, *cpu, cpu_opt.get());
    train::load_checkpoint(path, *gpu2, gpu2_opt.get());
    fs::remove(path);
    const auto pg = gpu->parameters(), pc = cpu->parameters(), pg2 = gpu2->parameters();
    for (size_t i = 0; i < pg.size(); ++i) {
      VERIFY(pc[i].device() == kCpu && pg2[i].device() == kGpu);
      COMPARE(pc[i].to_vector(), pg[i].to_vector());
      COMPARE(pg2[i].to_vector(), pg[i].to_vector());
    }
    const float l_gpu = step(*gpu, *gpu_opt, kGpu), l_cpu = step(*cpu, *cpu_opt, kCpu),
                l_gpu2 = step(*gpu2, *gpu2_opt, kGpu);
    COMPARE(l_gpu2, l_gpu);
    VERIFY2(std::fabs(l_cpu - l_gpu) <= 1e-5f * std::fabs(l_gpu), num(l_cpu) + " vs " + num(l_gpu));
    for (size_t i = 0; i < pg.size(); ++i) COMPARE(pg2[i].to_vector(), pg[i].to_vector());
  GUARD_END
}

TEST(pinnedHostMemory) {
  GUARD_BEGIN
    const int64_t n = 1 << 20;
    std::vector<float> values(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) values[size_t(i)] = float(i % 1000) * 0.5f;
    Tensor p = empty_pinned({n});
    VERIFY(p.device() == kCpu);
    VERIFY2(p.storage()->pinned, "empty_pinned gives page-locked memory when a CUDA device is present");
    std::copy(values.begin(), values.end(), p.data());
    const Tensor g = p.to(kGpu);
    // The source may go away (and its block be reused) while the copy is still queued: the
    // pinned allocator must not hand the block out again before the copy is done.
    p = Tensor();
    Tensor q = empty_pinned({n});
    std::fill(q.data(), q.data() + n, -7.f);
    const Tensor h = q.to(kGpu);
    VERIFY(g.to_vector() == values);
    COMPARE(h.to_vector(), std::vector<float>(size_t(n), -7.f));
    // Pinned sources behave like any CPU tensor otherwise.
    COMPARE(sum(q).item(), -7.f * float(n));
  GUARD_END
}

TEST(printing) {
  GUARD_BEGIN
    const Tensor g = from_vector({1.5f, -2.f, 0.25f}, {3}).to(kGpu);
    const std::string s = g.str();
    VERIFY2(contains(s, "1.5000") && contains(s, "-2.0000") && contains(s, "shape=[3]"), s);
    std::ostringstream os;
    os << g.transpose(0, 0);
    VERIFY2(contains(os.str(), "0.2500"), os.str());
  GUARD_END
}

TEST(inPlaceMethods) {
  GUARD_BEGIN
    NoGradGuard no_grad;
    Tensor c = normal({4, 6}, 1), o = normal({4, 6}, 2);
    Tensor g = c.to(kGpu), go = o.to(kGpu);
    c.mul_(2.f);
    g.mul_(2.f);
    EXPECT_MATCH(g, c, kElem);
    c.add_(o, -0.5f);
    g.add_(go, -0.5f);
    EXPECT_MATCH(g, c, kElem);
    c.add_(o.t().contiguous().t());  // a transposed operand
    g.add_(go.t().contiguous().t());
    EXPECT_MATCH(g, c, kElem);
    slice(c, 1, 0, 6, 2).fill_(3.f);  // a strided view: only its elements change
    slice(g, 1, 0, 6, 2).fill_(3.f);
    EXPECT_MATCH(g, c, kExact);
    c.narrow(0, 1, 2).copy_(idx({1, 2, 3, 4, 5, 6}));  // broadcast row into a narrowed view
    g.narrow(0, 1, 2).copy_(idx({1, 2, 3, 4, 5, 6}).to(kGpu));
    EXPECT_MATCH(g, c, kExact);
    Tensor ct = c.t(), gt_ = g.t();
    ct.copy_(normal({6, 4}, 3));  // into a transposed view, from a contiguous source
    gt_.copy_(normal({6, 4}, 3).to(kGpu));
    EXPECT_MATCH(g, c, kExact);
    c.zero_();
    g.zero_();
    COMPARE(g.to_vector(), std::vector<float>(24, 0.f));
    // In-place updates refuse a tensor that requires grad while grad mode is on.
    GradMode::set_enabled(true);
    Tensor p = gpu_leaf(normal({3}, 4));
    VERIFY_THROWS(Error, p.mul_(2.f));
    GradMode::set_enabled(false);
  GUARD_END
}

// ---- every op: CPU against GPU, forward and backward ----
TEST_ROWS(opParity, op_rows(kCuda)) {
  GUARD_BEGIN
    const Tol tol = tolerance(row);
    const TV inputs = row.make();
    Outcome cpu, dev;
    std::string err = what_of([&] { cpu = run_case(row, inputs, kCpu); });
    VERIFY2(err.empty(), "on the CPU: " + err);
    err = what_of([&] { dev = run_case(row, inputs, kGpu); });
    VERIFY2(err.empty(), "on cuda:0: " + err);
    VERIFY2(dev.device == kGpu, "the output is on " + dev.device.str());
    VERIFY2(dev.shape == cpu.shape, "output shape " + to_string(dev.shape) + ", cpu " + to_string(cpu.shape));
    err = mismatch(dev.out, cpu.out, tol);
    VERIFY2(err.empty(), "forward: " + err);
    COMPARE(dev.differentiable, cpu.differentiable);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string which = "input " + std::to_string(i) + " " + to_string(inputs[i].shape());
      VERIFY2(dev.grad_errors[i].empty(), which + ": " + dev.grad_errors[i]);
      err = mismatch(dev.grads[i], cpu.grads[i], tol);
      VERIFY2(err.empty(), "gradient of " + which + ": " + err);
      err = mismatch(dev.after[i], cpu.after[i], tol);
      VERIFY2(err.empty(), which + " after the op (in-place update): " + err);
    }
  GUARD_END
}

// ---- gradient checks directly on the device ----
// The op-case table's rows marked for it (kCudaGradcheck), on device copies of their inputs.
TEST_ROWS(gradcheckOnDevice, op_rows(kCudaGradcheck)) {
  GUARD_BEGIN
    TV inputs;
    for (const Tensor& t : row.make()) inputs.push_back(mirror(t, kGpu));
    DEVICE_GRADCHECK(row.name, row.f, inputs, row.grad);
  GUARD_END
}

// Compositions of ops, and a leaf made on the device.
TEST(gradcheckElementwiseOnDevice) {
  GUARD_BEGIN
    const Tensor a = gpu_leaf(normal({2, 3}, 1)), b = gpu_leaf(normal({3}, 2));
    const Tensor d = gpu_leaf(away(normal({2, 1}, 3), {0.f}, 0.3f));
    const Tensor pos = gpu_leaf(uni({3, 4}, 0.3f, 3.f, 4));
    const Tensor x = gpu_leaf(normal({3, 4}, 5));
    const Tensor kinked = gpu_leaf(away(normal({3, 4}, 6), {0.f, -0.5f, 0.3f}));
    DEVICE_GRADCHECK("add / sub / mul / div broadcast", [](const TV& v) { return (v[0] + v[1]) * v[0] - v[1] / v[2]; },
                     {a, b, d});
    DEVICE_GRADCHECK("scalar operators", [](const TV& v) { return (v[0] - 0.5f) * 3.f + 2.f / (v[0] * v[0] + 1.f); }, {x});
    DEVICE_GRADCHECK("exp, tanh, gelu, softplus, sigmoid",
                     [](const TV& v) { return exp(v[0]) * 0.1f + tanh(v[0]) + gelu(v[0]) + softplus(v[0], 2.f) + sigmoid(v[0]); },
                     {x});
    DEVICE_GRADCHECK("log, sqrt, pow", [](const TV& v) { return log(v[0]) + sqrt(v[0]) + pow(v[0], 1.5f) + pow(v[0], -1.f); },
                     {pos});
    DEVICE_GRADCHECK("relu, abs, leaky_relu, clamp",
                     [](const TV& v) { return relu(v[0]) + abs(v[0]) * 0.5f + leaky_relu(v[0], 0.2f) + clamp(v[0], -0.5f, 0.3f); },
                     {kinked});
    const TV mm = distinct_pair({3, 4}, {4}, 7);
    DEVICE_GRADCHECK("maximum / minimum broadcast", [](const TV& v) { return maximum(v[0], v[1]) + minimum(v[1], v[0]) * 2.f; },
                     {gpu_leaf(mm[0].detach()), gpu_leaf(mm[1].detach())});
    const Tensor cond = gpu(ints({3, 4}, 0, 1, 8)), mask = gpu(ints({4}, 0, 1, 9));
    DEVICE_GRADCHECK("where / masked_fill",
                     [cond, mask](const TV& v) { return where(cond, v[0], v[1]) + masked_fill(v[0], mask, 1.f); },
                     {x, gpu_leaf(normal({4}, 10))});
    Tensor tl = gpu(normal({4, 3}, 11)).t().detach();  // a non-contiguous device leaf
    tl.requires_grad_();
    DEVICE_GRADCHECK("exp of a transposed device leaf", [](const TV& v) { return exp(v[0]) * v[0]; }, {tl});
  GUARD_END
}

TEST(gradcheckReductionsOnDevice) {
  GUARD_BEGIN
    const Tensor x = gpu_leaf(normal({2, 3, 4}, 1));
    DEVICE_GRADCHECK("sum (all)", [](const TV& v) { return sum(v[0] * v[0]); }, {x});
    DEVICE_GRADCHECK("sum of a permute over {0}", [](const TV& v) { return sum(v[0].permute({2, 0, 1}), {0}); }, {x});
  GUARD_END
}

TEST(gradcheckNnOpsOnDevice) {
  GUARD_BEGIN
    const Tensor x = gpu_leaf(normal({2, 3, 4}, 1)), logits = gpu_leaf(normal({4, 5}, 2));
    DEVICE_GRADCHECK("softmax dim -1 of a permute", [](const TV& v) { return softmax(v[0].permute({2, 0, 1}), -1); }, {x});
    const Tensor target = gpu(idx({1, 0, 4, 1}));
    DEVICE_GRADCHECK("cross_entropy smoothing 0.2 reduction None",
                     [target](const TV& v) { return cross_entropy(v[0], target, 0.2f, Reduction::None); }, {logits});
  GUARD_END
}

TEST(gradcheckIndexingOnDevice) {
  GUARD_BEGIN
    const Tensor a = gpu_leaf(normal({2, 1, 3}, 2)), b = gpu_leaf(normal({2, 2, 3}, 3));
    DEVICE_GRADCHECK("stack dim 1", [](const TV& v) { return stack({v[0], v[0] * 2.f}, 1); }, {a});
    DEVICE_GRADCHECK("slice, narrow, expand, reshape of a transpose",
                     [](const TV& v) {
                       // [2,2,3] -> three [2,2,2] terms
                       return slice(v[0], 2, 0, 3, 2) * narrow(v[0], 2, 1, 2).expand({2, 2, 2, 2}).sum({0}) +
                              reshape(v[0].transpose(0, 2), {3, 4}).narrow(0, 0, 2).reshape({2, 2, 2});
                     },
                     {b});
    DEVICE_GRADCHECK("mlp: tanh(x W1 + b1) W2 -> cross_entropy",
                     [in = gpu(normal({4, 3}, 5)), t = gpu(idx({0, 2, 1, 2}))](const TV& v) {
                       return cross_entropy(matmul(tanh(matmul(in, v[0]) + v[1]), v[2]), t);
                     },
                     {gpu_leaf(normal({3, 5}, 6) * 0.5f), gpu_leaf(normal({5}, 7)), gpu_leaf(normal({5, 3}, 8) * 0.5f)});
  GUARD_END
}

// ---- modules moved to the device ----
TEST(modulesMoveToDevice) {
  GUARD_BEGIN
    auto build = [] {
      Generator gen(5);
      auto lin = std::make_shared<nn::Linear>(4 * 4 * 4, 5, true, &gen);
      auto m = std::make_shared<nn::Sequential>();
      m->add(std::make_shared<nn::Conv2d>(3, 4, 3, Conv2dOptions{.pad_h = 1, .pad_w = 1}, true, &gen))
          .add(std::make_shared<nn::BatchNorm2d>(4))
          .add(std::make_shared<nn::ReLU>())
          .add(std::make_shared<nn::MaxPool2d>(2))
          .add(std::make_shared<nn::Flatten>())
          .add(lin);
      return std::make_pair(m, lin);
    };
    auto [cpu_model, cpu_lin] = build();
    auto [dev_model, dev_lin] = build();
    const Tensor lin_weight = dev_lin->weight;  // a handle taken before the move stays valid
    dev_model->to(kGpu);
    for (const Tensor& p : dev_model->parameters()) VERIFY(p.device() == kGpu && p.requires_grad() && p.is_leaf());
    for (const Tensor& b : dev_model->buffers()) VERIFY(b.device() == kGpu);
    VERIFY(lin_weight.device() == kGpu && dev_lin->weight.device() == kGpu);
    COMPARE(lin_weight.to_vector(), cpu_lin->weight.to_vector());

    const Tensor x = normal({6, 3, 8, 8}, 6), y = idx({0, 1, 2, 3, 4, 0});
    const Tensor cpu_loss = cross_entropy((*cpu_model)(x), y);
    const Tensor dev_loss = cross_entropy((*dev_model)(x.to(kGpu)), y.to(kGpu));
    VERIFY(dev_loss.device() == kGpu);
    EXPECT_MATCH(dev_loss, cpu_loss, kSum);
    cpu_loss.backward();
    dev_loss.backward();
    const auto cp = cpu_model->named_parameters(), dp = dev_model->named_parameters();
    COMPARE(dp.size(), cp.size());
    for (size_t i = 0; i < cp.size(); ++i) {
      VERIFY2(dp[i].second.grad().defined() && dp[i].second.grad().device() == kGpu, dp[i].first);
      const std::string err = mismatch(dp[i].second.grad(), cp[i].second.grad(), kGemm);
      VERIFY2(err.empty(), "grad of " + cp[i].first + ": " + err);
    }
    const auto cb = cpu_model->named_buffers(), db = dev_model->named_buffers();
    COMPARE(db.size(), cb.size());
    for (size_t i = 0; i < cb.size(); ++i) {
      const std::string err = mismatch(db[i].second, cb[i].second, kSum);
      VERIFY2(err.empty(), "buffer " + cb[i].first + ": " + err);
    }
    cpu_model->eval();
    dev_model->eval();
    {
      NoGradGuard no_grad;
      EXPECT_MATCH((*dev_model)(x.to(kGpu)), (*cpu_model)(x), kGemm);
    }
    // And back to the CPU.
    dev_model->to(kCpu);
    for (const Tensor& p : dev_model->parameters()) VERIFY(p.device() == kCpu);
    VERIFY(lin_weight.device() == kCpu);
    COMPARE(lin_weight.to_vector(), cpu_lin->weight.to_vector());

    // Embedding: rows picked on the device, gradients scattered back with repeats.
    Generator g1(9), g2(9);
    nn::Embedding ce(20, 6, &g1), de(20, 6, &g2);
    de.to(kGpu);
    const Tensor ids = random_index({3, 7}, 20, 10);
    const Tensor co = ce(ids), dout = de(ids.to(kGpu));
    EXPECT_MATCH(dout, co, kExact);
    const Tensor r = normal(co.shape(), 11);
    co.backward(r);
    dout.backward(r.to(kGpu));
    EXPECT_MATCH(de.weight.grad(), ce.weight.grad(), kElem);
  GUARD_END
}

// ---- allocator ----
TEST(cachingAllocator) {
  GUARD_BEGIN
    const Device dev = kGpu;
    auto step = [dev] {
      Tensor x = gpu_leaf(normal({256, 300}, 1));
      const Tensor w = full({300, 100}, 0.01f, dev);
      const Tensor y = relu(matmul(x, w) - 0.01f);
      const Tensor loss = sum(y * y);
      loss.backward();
      const Tensor big = empty({3 << 20}, dev);
      (void)big;
      (void)loss.item();
    };
    step();
    step();  // warm-up: every size class the step needs is now cached
    const MemoryStats s1 = memory_stats(dev);
    for (int i = 0; i < 5; ++i) step();
    const MemoryStats s2 = memory_stats(dev);
    std::printf("cuda:0 allocator: %lld in use, %lld cached, peak %lld, %lld requests, %lld system allocations\n",
                (long long)s2.bytes_in_use, (long long)s2.bytes_cached, (long long)s2.peak_bytes_in_use,
                (long long)s2.allocations, (long long)s2.system_allocations);
    COMPARE(s2.system_allocations, s1.system_allocations);  // served from the cache
    VERIFY(s2.allocations > s1.allocations);
    COMPARE(s2.bytes_in_use, s1.bytes_in_use);
    VERIFY(s2.peak_bytes_in_use >= s2.bytes_in_use);

    // In use goes up with live tensors and back down when they die.
    const MemoryStats before = memory_stats(dev);
    {
      const Tensor a = empty({1 << 20}, dev), b = ones({1000, 3}, dev);
      (void)a;
      const MemoryStats during = memory_stats(dev);
      VERIFY(during.bytes_in_use >= before.bytes_in_use + (int64_t(4) << 20) + 12000);
      VERIFY(during.peak_bytes_in_use >= during.bytes_in_use);
      VERIFY(during.allocations >= before.allocations + 2);
      COMPARE(b.sum().item(), 3000.f);
    }
    const MemoryStats after = memory_stats(dev);
    COMPARE(after.bytes_in_use, before.bytes_in_use);
    VERIFY(after.bytes_cached >= (int64_t(4) << 20));  // the freed blocks were kept
    VERIFY(after.peak_bytes_in_use >= before.bytes_in_use + (int64_t(4) << 20));

    // empty_cache gives every cached block back; in-use memory is untouched.
    const Tensor keep = ones({12345}, dev);
    const MemoryStats kept = memory_stats(dev);
    allocator_for(dev).empty_cache();
    const MemoryStats emptied = memory_stats(dev);
    COMPARE(emptied.bytes_cached, int64_t(0));
    COMPARE(emptied.bytes_in_use, kept.bytes_in_use);
    COMPARE(keep.sum().item(), 12345.f);
    step();  // the cache is empty: this has to reach the system again
    VERIFY(memory_stats(dev).system_allocations > emptied.system_allocations);
    // The CPU allocator is a separate one.
    VERIFY(&allocator_for(kCpu) != &allocator_for(dev));
  GUARD_END
}

// ---- dropout's device generator ----
TEST(dropoutOnDevice) {
  GUARD_BEGIN
    const int64_t n = 100000;
    const Tensor x = ones({n}, kGpu);
    for (float p : {0.2f, 0.5f, 0.8f}) {
      Generator g1(42), g2(42), g3(43);
      const std::vector<float> a = dropout(x, p, true, &g1).to_vector();
      const std::vector<float> b = dropout(x, p, true, &g2).to_vector();
      const std::vector<float> c = dropout(x, p, true, &g3).to_vector();
      const std::vector<float> a2 = dropout(x, p, true, &g1).to_vector();  // g1 has moved on
      VERIFY2(a == b, "the same seed must give the same mask");
      int64_t differ = 0, differ_next = 0, dropped = 0;
      const float scale = 1.f / (1.f - p);
      for (size_t i = 0; i < a.size(); ++i) {
        differ += a[i] != c[i];
        differ_next += a[i] != a2[i];
        if (a[i] == 0.f) ++dropped;
        else VERIFY2(std::fabs(a[i] - scale) <= 1e-6f * scale,
                     "survivor " + std::to_string(i) + " = " + num(a[i]) + ", expected " + num(scale));
      }
      const double frac = double(dropped) / double(n);
      std::printf("dropout p=%.1f on cuda:0: %.4f dropped, %lld of %lld differ for another seed\n", p, frac,
                  (long long)differ, (long long)n);
      VERIFY2(std::fabs(frac - p) <= 0.03 * p, "p=" + num(p) + ": dropped fraction " + num(frac));
      VERIFY2(differ > n / 10, "another seed must give another mask");
      VERIFY2(differ_next > n / 10, "the next call on the same generator must give another mask");
    }
    // The default generator: reseeding repeats the mask.
    manual_seed(5);
    const std::vector<float> d1 = dropout(x, 0.5f, true).to_vector();
    manual_seed(5);
    const std::vector<float> d2 = dropout(x, 0.5f, true).to_vector();
    VERIFY(d1 == d2);
    // Eval mode and p = 0 are the identity; p = 1 drops everything.
    const Tensor v = gpu(normal({300, 7}, 1));
    COMPARE(dropout(v, 0.5f, false).to_vector(), v.to_vector());
    COMPARE(dropout(v, 0.f, true).to_vector(), v.to_vector());
    COMPARE(dropout(v, 1.f, true).to_vector(), std::vector<float>(2100, 0.f));
    nn::Dropout layer(0.5f);
    layer.eval();
    COMPARE(layer(v).to_vector(), v.to_vector());
    // Backward: the gradient is the mask times the scale, on a non-contiguous input too.
    Tensor xl = gpu_leaf(normal({200, 300}, 2));
    const Tensor xt = xl.t();
    Generator g(9);
    const Tensor y = dropout(xt, 0.3f, true, &g);
    VERIFY(y.device() == kGpu);
    y.backward(ones({300, 200}, kGpu));
    const std::vector<float> yv = y.to_vector(), xv = xt.to_vector(), gv = xl.grad().t().to_vector();
    int64_t kept = 0;
    for (size_t i = 0; i < yv.size(); ++i) {
      const bool survived = yv[i] != 0.f;
      kept += survived;
      const float want_grad = survived ? 1.f / 0.7f : 0.f;
      if (std::fabs(gv[i] - want_grad) > 1e-5f || (survived && std::fabs(yv[i] - xv[i] / 0.7f) > 1e-5f * (1 + std::fabs(yv[i]))))
        FAIL("element " + std::to_string(i) + ": x " + num(xv[i]) + ", y " + num(yv[i]) + ", grad " + num(gv[i]));
    }
    VERIFY(std::fabs(double(kept) / 60000.0 - 0.7) < 0.02);
  GUARD_END
}

// ---- optimizers: the same gradients give the same parameters ----
struct OptimizerRow {
  std::string name;  // the optimizer and its options (make_optimizer)
};
std::vector<OptimizerRow> optimizer_rows() {
  return {{"SGD momentum 0.9 nesterov weight_decay"}, {"SGD momentum dampening maximize"}, {"SGD plain"},
          {"Adam weight_decay"}, {"Adam amsgrad betas"}, {"AdamW amsgrad"}, {"AdamW defaults"},
          {"RMSprop weight_decay"}, {"RMSprop centered momentum"},
          {"Adagrad lr_decay weight_decay initial_accumulator"}};
}

TEST_ROWS(optimizersMatchCpu, optimizer_rows()) {
  GUARD_BEGIN
    const std::string& kind = row.name;
    const std::vector<Shape> shapes = {{64, 33}, {33}, {3, 5, 7}, {1}, {1000, 300}};
    std::vector<Tensor> cpu_params, dev_params;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Tensor init = normal(shapes[i], 100 + i);
      cpu_params.push_back(leaf(init.clone()));
      dev_params.push_back(gpu_leaf(init));
    }
    auto cpu_opt = make_optimizer(kind, cpu_params);
    auto dev_opt = make_optimizer(kind, dev_params);
    VERIFY(cpu_opt && dev_opt);
    const Tol tol{1e-5, 1e-6};
    for (int step = 1; step <= 5; ++step) {
      for (size_t i = 0; i < shapes.size(); ++i) {
        // Gradients of varying scale, some elements zero.
        Tensor g = normal(shapes[i], 1000 + 10 * uint64_t(step) + i) * (i == 3 ? 0.01f : 1.f);
        if (step == 2) g = relu(g);
        cpu_params[i].set_grad(g);
        dev_params[i].set_grad(g.to(kGpu));
      }
      cpu_opt->step();
      dev_opt->step();
      for (size_t i = 0; i < shapes.size(); ++i) {
        VERIFY(dev_params[i].device() == kGpu);
        const std::string err = mismatch(dev_params[i], cpu_params[i], tol);
        VERIFY2(err.empty(), "step " + std::to_string(step) + ", parameter " + std::to_string(i) + " " +
                                 to_string(shapes[i]) + ": " + err);
      }
    }
    // The optimizer state matches too, and lives on the parameter's device.
    for (size_t i = 0; i < shapes.size(); ++i) {
      const optim::ParamState* cs = cpu_opt->state(cpu_params[i]);
      const optim::ParamState* ds = dev_opt->state(dev_params[i]);
      VERIFY(cs && ds);
      COMPARE(ds->step, cs->step);
      COMPARE(ds->tensors.size(), cs->tensors.size());
      for (const auto& [name, t] : cs->tensors) {
        const Tensor* d = ds->find(name);
        VERIFY2(d && d->device() == kGpu, name);
        const std::string err = mismatch(*d, t, tol);
        VERIFY2(err.empty(), "state " + name + " of parameter " + std::to_string(i) + ": " + err);
      }
    }
    // zero_grad, then a step without gradients changes nothing.
    dev_opt->zero_grad();
    const std::vector<float> before = dev_params[0].to_vector();
    dev_opt->step();
    COMPARE(dev_params[0].to_vector(), before);
  GUARD_END
}

// ---- training through train::Trainer ----
struct TrainingRow {
  std::string name;  // the model (make_model)
  int epochs;
  double lr;
};
std::vector<TrainingRow> training_rows() {
  return {{"mlp", 2, 0.05},
          {"lenet", 3, 0.05},  // 3 epochs: both devices near 100%
          {"custom mlp (batchnorm, gelu)", 2, 0.05}};
}

TEST_ROWS(trainingMatchesCpu, training_rows()) {
  GUARD_BEGIN
    const std::string& model = row.name;
    const int epochs = row.epochs;
    const double lr = row.lr;
    const auto train_set = synthetic_digits(2000, 1), test_set = synthetic_digits(500, 2);
    const auto norm = train::standardize_images(*train_set);
    const auto t0 = std::chrono::steady_clock::now();
    const TrainOutcome cpu = train_on(kCpu, model, train_set, test_set, norm, epochs, lr, 50);
    const auto t1 = std::chrono::steady_clock::now();
    const TrainOutcome dev = train_on(kGpu, model, train_set, test_set, norm, epochs, lr, 50);
    const double cpu_s = seconds(t1 - t0), dev_s = seconds(std::chrono::steady_clock::now() - t1);
    VERIFY2(cpu.result.status == train::RunStatus::Completed, cpu.result.message);
    VERIFY2(dev.result.status == train::RunStatus::Completed, dev.result.message);
    VERIFY2(dev.params_on_device, "the model's parameters and buffers must stay on cuda:0");
    COMPARE(int(dev.result.history.size()), epochs);
    const double cpu_acc = cpu.result.history.back().eval_accuracy, dev_acc = dev.result.history.back().eval_accuracy;
    std::printf(
        "%s, %d epochs: eval accuracy cpu %.2f%% (%.1f s), cuda:0 %.2f%% (%.1f s); first-batch loss %.6f / %.6f\n",
        model.c_str(), epochs, 100 * cpu_acc, cpu_s, 100 * dev_acc, dev_s, cpu.first_loss, dev.first_loss);
    VERIFY2(std::isfinite(cpu.first_loss) && std::isfinite(dev.first_loss), "no first batch reported");
    VERIFY2(std::fabs(dev.first_loss - cpu.first_loss) <= 1e-4 * std::fabs(cpu.first_loss),
            "first-batch loss cpu " + num(cpu.first_loss, 9) + ", cuda:0 " + num(dev.first_loss, 9));
    VERIFY2(cpu_acc >= 0.90, "cpu accuracy " + num(cpu_acc));
    VERIFY2(dev_acc >= 0.90, "cuda:0 accuracy " + num(dev_acc));
    VERIFY2(std::fabs(dev_acc - cpu_acc) <= 0.015, "accuracy cpu " + num(cpu_acc) + " vs cuda:0 " + num(dev_acc));
    VERIFY(dev.result.history.back().train_loss < dev.result.history.front().train_loss ||
            dev.result.history.back().train_loss < 0.05);
    // The confusion matrix covers the held-out set.
    int64_t total = 0;
    for (int64_t c : dev.result.history.back().confusion) total += c;
    COMPARE(total, int64_t(500));
  GUARD_END
}

TEST(mnistOneEpochMatchesCpu) {
  GUARD_BEGIN
    if (!has_mnist())
      SKIP("MNIST not found in " + kMnist.string() + " (scripts/fetch-mnist downloads it)");
    auto train_set = std::make_shared<data::MnistDataset>(kMnist.string(), data::Split::Train);
    auto test_set = std::make_shared<data::MnistDataset>(kMnist.string(), data::Split::Test);
    const auto norm = train::standardize_images(*train_set);
    const auto t0 = std::chrono::steady_clock::now();
    const TrainOutcome cpu = train_on(kCpu, "mlp", train_set, test_set, norm, 1, 0.05, 100);
    const auto t1 = std::chrono::steady_clock::now();
    const TrainOutcome dev = train_on(kGpu, "mlp", train_set, test_set, norm, 1, 0.05, 100);
    const double cpu_s = seconds(t1 - t0), dev_s = seconds(std::chrono::steady_clock::now() - t1);
    VERIFY2(cpu.result.status == train::RunStatus::Completed, cpu.result.message);
    VERIFY2(dev.result.status == train::RunStatus::Completed, dev.result.message);
    const double cpu_acc = cpu.result.history.back().eval_accuracy, dev_acc = dev.result.history.back().eval_accuracy;
    std::printf("MNIST mlp, 1 epoch: test accuracy cpu %.2f%% (%.1f s), cuda:0 %.2f%% (%.1f s)\n", 100 * cpu_acc,
                cpu_s, 100 * dev_acc, dev_s);
    VERIFY2(std::fabs(dev.first_loss - cpu.first_loss) <= 1e-4 * std::fabs(cpu.first_loss),
            "first-batch loss cpu " + num(cpu.first_loss, 9) + ", cuda:0 " + num(dev.first_loss, 9));
    VERIFY2(cpu_acc >= 0.90 && dev_acc >= 0.90, "accuracy cpu " + num(cpu_acc) + ", cuda:0 " + num(dev_acc));
    VERIFY2(std::fabs(dev_acc - cpu_acc) <= 0.005, "accuracy cpu " + num(cpu_acc) + " vs cuda:0 " + num(dev_acc));
  GUARD_END
}

// ---- failures the device must survive (at the end: see mixedDevicesAreRefused) ----
// ---- the training step as a CUDA graph (train/step.h, cuda/step_graph.h) ----
struct StepRow {
  std::string name;  // the model and optimizer (make_step_model)
};
std::vector<StepRow> step_rows() {
  return {{"mlp sgd"}, {"lenet momentum"}, {"dropout adam"}, {"batchnorm adamw"}, {"mlp groups warm-up"}};
}

// Captured after two steps, replayed for the rest, a short batch run eagerly in between:
// the same losses and weights as every step run eagerly (the same kernels in the same
// order; random keys and the update's scalars refreshed for each replay).
TEST_ROWS(graphStepMatchesEager, step_rows()) {
  GUARD_BEGIN
    const std::string& model = row.name;
    const StepRun eager = run_steps(model, false, 12);
    const StepRun graph = run_steps(model, true, 12);
    VERIFY2(!eager.replaying && eager.note.empty(), eager.note);
    VERIFY2(graph.replaying, graph.note);
    VERIFY2(contains(graph.note, "runs as a CUDA graph"), graph.note);
    for (size_t i = 0; i < eager.losses.size(); ++i)
      VERIFY2(std::fabs(eager.losses[i] - graph.losses[i]) <= 1e-5f * std::max(1.f, std::fabs(eager.losses[i])),
              "step " + std::to_string(i) + ": eager loss " + num(eager.losses[i], 9) + ", graph " +
                  num(graph.losses[i], 9));
    const double diff = weight_difference(eager, graph);
    std::printf("%s: 12 steps, largest weight difference eager vs graph %.3g\n", model.c_str(), diff);
    VERIFY2(diff <= 1e-5, "weights differ by " + num(diff));
    if (model == "mlp groups warm-up")  // the frozen first layer, replayed or not: as initialised
      COMPARE(graph.weights[0], make_step_model(model).model->parameters()[0].to_vector());
  GUARD_END
}

// Every third step carries a probe reading gradients and weights to the host (the per-node
// statistics): those steps run eagerly beside the replayed graph, which stays captured, and
// the run ends with the weights of one that never sampled.
TEST(probedStepsRunBesideTheGraph) {
  GUARD_BEGIN
    const StepRun plain = run_steps("batchnorm adamw", true, 12);
    const StepRun probed = run_steps("batchnorm adamw", true, 12, 3);
    COMPARE(probed.probed, 4);
    VERIFY2(probed.replaying, probed.note);
    VERIFY2(contains(probed.note, "runs as a CUDA graph"), probed.note);
    for (size_t i = 0; i < plain.losses.size(); ++i)
      VERIFY2(std::fabs(plain.losses[i] - probed.losses[i]) <= 1e-5f * std::max(1.f, std::fabs(plain.losses[i])),
              "step " + std::to_string(i) + ": loss " + num(plain.losses[i], 9) + " without the probe, " +
                  num(probed.losses[i], 9) + " with it");
    const double diff = weight_difference(plain, probed);
    std::printf("12 steps, 4 probed eagerly beside the graph: largest weight difference %.3g\n", diff);
    VERIFY2(diff <= 1e-5, "weights differ by " + num(diff));
  GUARD_END
}

// A NaN loss inside a replay skips the update on the device: the weights stay those of the
// last good step, and the next good batch updates again.
TEST(graphSkipsTheUpdateOnANonFiniteLoss) {
  GUARD_BEGIN
    StepModel m = make_step_model("dropout adam");
    train::TrainingStep step(*m.model, *m.opt, step_options(true));
    for (int i = 0; i < 4; ++i) VERIFY(step.run(step_batch(i).first, step_batch(i).second).updated);
    VERIFY2(step.replaying(), step.graph_note());
    std::vector<std::vector<float>> before;
    for (const Tensor& p : m.model->parameters()) before.push_back(p.to_vector());
    const auto [x, y] = step_batch(0);
    const train::StepResult bad = step.run(x * std::numeric_limits<float>::quiet_NaN(), y);
    VERIFY(!bad.updated);
    VERIFY(std::isnan(bad.loss));
    std::vector<std::vector<float>> after;
    for (const Tensor& p : m.model->parameters()) after.push_back(p.to_vector());
    VERIFY2(before == after, "a skipped update changed the weights");
    const train::StepResult good = step.run(x, y);
    VERIFY(good.updated && std::isfinite(good.loss));
    std::vector<std::vector<float>> later;
    for (const Tensor& p : m.model->parameters()) later.push_back(p.to_vector());
    VERIFY(later != after);
  GUARD_END
}

// Steps that cannot be a graph run eagerly, say why, and train exactly as eager steps.
TEST(graphFallsBackAndSaysWhy) {
  GUARD_BEGIN
    const StepRun eager = run_steps("reads host", false, 6);
    const StepRun fallback = run_steps("reads host", true, 6);
    VERIFY(!fallback.replaying);
    VERIFY2(contains(fallback.note, "CUDA graphs not used: "), fallback.note);
    std::printf("reading the host inside the step: %s\n", fallback.note.c_str());
    COMPARE(fallback.losses.size(), eager.losses.size());
    VERIFY(weight_difference(eager, fallback) <= 1e-6);

    StepModel m = make_step_model("mlp sgd");
    train::StepOptions clip = step_options(true);
    clip.clip_grad_norm = 1.f;
    train::TrainingStep clipped(*m.model, *m.opt, clip);
    VERIFY2(contains(clipped.graph_note(), "gradient clipping"), clipped.graph_note());
    train::StepOptions carry = step_options(true);
    carry.carry_state = true;
    train::TrainingStep carrying(*m.model, *m.opt, carry);
    VERIFY2(contains(carrying.graph_note(), "carry_state"), carrying.graph_note());
    optim::RMSprop rms(m.model->parameters(), {.lr = 1e-3});
    train::TrainingStep rms_step(*m.model, rms, step_options(true));
    VERIFY2(contains(rms_step.graph_note(), "RMSprop update"), rms_step.graph_note());
    for (int i = 0; i < 4; ++i) VERIFY(rms_step.run(step_batch(i).first, step_batch(i).second).updated);
    VERIFY(!rms_step.replaying());
  GUARD_END
}

// Batches whose shape keeps changing are never captured, and the step says so; once the
// shape settles the step is captured after all.
TEST(changingShapesAreNotCapturedAndSaySo) {
  GUARD_BEGIN
    StepModel m = make_step_model("mlp sgd");
    train::TrainingStep step(*m.model, *m.opt, step_options(true));
    Generator gen(9);
    const auto batch = [&gen](int64_t n) {
      std::vector<float> labels(static_cast<size_t>(n));
      for (float& l : labels) l = float(gen.next_u64() % 10);
      return std::make_pair(randn({n, 1, 28, 28}, &gen), from_vector(labels, {n}));
    };
    for (int i = 0; i < 25; ++i) {
      const auto [x, y] = batch(16 + i % 2);
      VERIFY(step.run(x, y).updated);
    }
    VERIFY(!step.replaying());
    VERIFY2(contains(step.graph_note(), "the batch shape keeps changing"), step.graph_note());
    for (int i = 0; i < 4; ++i) {
      const auto [x, y] = batch(16);
      VERIFY(step.run(x, y).updated);
    }
    VERIFY2(step.replaying(), step.graph_note());
    VERIFY2(contains(step.graph_note(), "runs as a CUDA graph"), step.graph_note());
  GUARD_END
}

// A graph's private memory goes back to the caching allocator with it: capturing and
// dropping steps over and over does not grow what is in use.
TEST(graphMemoryIsReturned) {
  GUARD_BEGIN
    StepModel m = make_step_model("lenet momentum");
    std::vector<int64_t> in_use;
    for (int round = 0; round < 3; ++round) {
      {
        train::TrainingStep step(*m.model, *m.opt, step_options(true));
        for (int i = 0; i < 5; ++i) VERIFY(step.run(step_batch(i).first, step_batch(i).second).updated);
        VERIFY(step.replaying());
      }
      m.opt->zero_grad();
      cuda::synchronize(kGpu);
      in_use.push_back(memory_stats(kGpu).bytes_in_use);
    }
    std::printf("bytes in use after each round: %lld, %lld, %lld\n", (long long)in_use[0], (long long)in_use[1],
                (long long)in_use[2]);
    COMPARE(in_use[1], in_use[0]);
    COMPARE(in_use[2], in_use[0]);
  GUARD_END
}

// ---- bf16 products (ops/precision.h) ----
// bf16 operands with FP32 accumulation: close to the FP32 product (relative error between
// bf16's rounding and 1e-2), but not equal to it (the tensor cores really ran in bf16). The
// CPU ignores the setting.
TEST(bf16ProductsAndConvolutions) {
  GUARD_BEGIN
    const auto rel = [](const Tensor& a, const Tensor& b) {
      const Tensor d = (a - b).to(kCpu), r = b.to(kCpu);
      return std::sqrt(double(sum(d * d).item()) / double(sum(r * r).item()));
    };
    const Tensor a = normal({256, 512}, 1).to(kGpu), b = normal({512, 128}, 2).to(kGpu);
    const Tensor x = normal({8, 16, 16, 16}, 3).to(kGpu), w = normal({32, 16, 3, 3}, 4).to(kGpu);
    const Tensor mm32 = matmul(a, b), conv32 = conv2d(x, w, Tensor(), {.pad_h = 1, .pad_w = 1});
    Tensor mm16, conv16, cpu16;
    {
      const PrecisionGuard bf16(Precision::BF16);
      COMPARE(int(matmul_precision()), int(Precision::BF16));
      mm16 = matmul(a, b);
      conv16 = conv2d(x, w, Tensor(), {.pad_h = 1, .pad_w = 1});
      cpu16 = matmul(a.to(kCpu), b.to(kCpu));
    }
    COMPARE(int(matmul_precision()), int(Precision::FP32));
    const double e_mm = rel(mm16, mm32), e_conv = rel(conv16, conv32);
    std::printf("bf16 vs fp32, relative error: matmul %.3g, conv2d %.3g\n", e_mm, e_conv);
    VERIFY2(e_mm > 1e-4 && e_mm < 1e-2, "matmul: " + num(e_mm));
    VERIFY2(e_conv > 1e-4 && e_conv < 1e-2, "conv2d: " + num(e_conv));
    VERIFY(cpu16.to_vector() == matmul(a.to(kCpu), b.to(kCpu)).to_vector());
  GUARD_END
}

// Training with bf16 products reaches the FP32 run's accuracy.
TEST(trainingInBf16MatchesFp32) {
  GUARD_BEGIN
    const auto train_set = synthetic_digits(2000, 1), test_set = synthetic_digits(500, 2);
    const auto norm = train::standardize_images(*train_set);
    const TrainOutcome fp32 = train_on(kGpu, "lenet", train_set, test_set, norm, 2, 0.05, 50);
    const TrainOutcome bf16 = train_on(kGpu, "lenet", train_set, test_set, norm, 2, 0.05, 50, Precision::BF16);
    VERIFY2(bf16.result.status == train::RunStatus::Completed, bf16.result.message);
    const double a32 = fp32.result.history.back().eval_accuracy, a16 = bf16.result.history.back().eval_accuracy;
    std::printf("lenet, 2 epochs: eval accuracy fp32 %.2f%%, bf16 %.2f%%\n", 100 * a32, 100 * a16);
    VERIFY2(a16 >= 0.9 && std::fabs(a16 - a32) <= 0.02, "fp32 " + num(a32) + ", bf16 " + num(a16));
    VERIFY(bf16.first_loss != fp32.first_loss);  // the products really changed
    COMPARE(bf16.notices.size(), size_t(1));
    VERIFY2(contains(bf16.notices[0], "runs as a CUDA graph"), bf16.notices[0]);
  GUARD_END
}

TEST(outOfMemoryIsADeviceError) {
  GUARD_BEGIN
    const int64_t n = int64_t(1) << 40;  // 4 TiB of floats
    const std::string msg = message_of<DeviceError>([&] { (void)empty({n}, kGpu); });
    std::printf("%s\n", msg.c_str());
    VERIFY2(contains(msg, "out of memory"), msg);
    VERIFY2(contains(msg, std::to_string(n * int64_t(sizeof(float)))), msg);  // 4398046511104 bytes
    VERIFY2(contains(msg, "in use"), msg);
    // The device keeps working.
    const Tensor t = ones({1000}, kGpu);
    COMPARE(sum(t).item(), 1000.f);
    const std::string op = message_of<DeviceError>([] { (void)ones({int64_t(1) << 39}, kGpu); });
    VERIFY2(contains(op, "out of memory"), op);
    COMPARE((ones({3}, kGpu) * 2.f).to_vector(), (std::vector<float>{2.f, 2.f, 2.f}));
  GUARD_END
}

// ---- bad indices found by kernels ----
TEST(badIndexFaultsAtTheNextSynchronisation) {
  GUARD_BEGIN
    const Tensor x = gpu(normal({5, 3}, 1));
    // index_select: reported when the result is read.
    const std::string a = message_of<IndexError>([&] {
      const Tensor y = index_select(x, 0, gpu(idx({0, 7, 1})));
      (void)y.to_vector();
    });
    VERIFY2(contains(a, "index_select") && contains(a, "7"), a);
    // The fault was cleared: the device keeps working and a valid op gives the CPU's answer.
    cuda::synchronize(kGpu);
    EXPECT_MATCH(index_select(x, 0, gpu(idx({4, 0, 4}))), index_select(x.to(kCpu), 0, idx({4, 0, 4})), kExact);
    // Reported by an explicit synchronisation too.
    const std::string b = message_of<IndexError>([&] {
      (void)index_select(x, 1, gpu(idx({2, 3})));
      cuda::synchronize(kGpu);
    });
    VERIFY2(contains(b, "index_select") && contains(b, "3"), b);
    // cross_entropy with target 10 for 10 classes, reported by item().
    const Tensor logits = gpu(normal({4, 10}, 2));
    const std::string c = message_of<IndexError>([&] { (void)cross_entropy(logits, gpu(idx({1, 10, 3, 0}))).item(); });
    VERIFY2(contains(c, "cross_entropy") && contains(c, "10"), c);
    EXPECT_MATCH(cross_entropy(logits, gpu(idx({1, 9, 3, 0}))), cross_entropy(logits.to(kCpu), idx({1, 9, 3, 0})), kSum);
    // A negative class and a fractional one.
    const std::string d = message_of<IndexError>([&] { (void)cross_entropy(logits, gpu(idx({1, -1, 3, 0}))).item(); });
    VERIFY2(contains(d, "cross_entropy"), d);
    // gather, reported by a copy to the host.
    const std::string e = message_of<IndexError>([&] {
      (void)gather(x, 1, gpu(from_vector({0, 1, 5, 2, 0, 1, 1, 1, 0, 0}, {5, 2}))).to(kCpu);
    });
    VERIFY2(contains(e, "gather") && contains(e, "5"), e);
    // The device is fine afterwards: a full training step runs.
    Tensor w = gpu_leaf(normal({3, 10}, 3));
    const Tensor loss = cross_entropy(matmul(x, w), gpu(idx({0, 1, 2, 3, 4})));
    loss.backward();
    VERIFY(std::isfinite(loss.item()));
    VERIFY(w.grad().defined());
    cuda::synchronize(kGpu);
  GUARD_END
}

// Last (with the fault tests before it): a missing device check can make a kernel read host
// memory, which poisons the CUDA context for every later test.
TEST(mixedDevicesAreRefused) {
  GUARD_BEGIN
    const Tensor g = from_vector({1.5f, -2.f, 0.25f}, {3}).to(kGpu);
    const Tensor c = ones({3});
    std::string refused_badly;
    for (const auto& [name, f] : std::vector<std::pair<const char*, std::function<void()>>>{
             {"add", [&] { (void)add(c, g); }},
             {"mul", [&] { (void)mul(g, c); }},
             {"matmul", [&] { (void)matmul(c, g); }},
             {"where", [&] { (void)where(c, g, g); }},
             {"concat", [&] { (void)concat({g, c}); }},
             {"maximum", [&] { (void)maximum(g, c); }},
             {"masked_fill", [&] { (void)masked_fill(g, c, 0.f); }},
             {"index_select", [&] { (void)index_select(g, 0, idx({0, 1})); }},
             {"gather", [&] { (void)gather(g.reshape({1, 3}), 1, idx({1, 2}).reshape({1, 2})); }},
             {"conv2d", [&] { (void)conv2d(g.reshape({1, 1, 1, 3}), ones({1, 1, 1, 1})); }},
             {"batch_norm", [&] { (void)batch_norm(g.reshape({3, 1}), zeros({1}), ones({1}), Tensor(), Tensor(), true); }},
             {"mse_loss", [&] { (void)mse_loss(g, c); }},
             {"bce_with_logits", [&] { (void)binary_cross_entropy_with_logits(g, c); }},
             {"nll_loss", [&] { (void)nll_loss(g.reshape({1, 3}), idx({1})); }},
             {"cross_entropy", [&] { (void)cross_entropy(g.reshape({1, 3}), idx({1})); }}}) {
      const std::string msg = message_of<DeviceError>(f);
      if (!contains(msg, "cuda:0") || !contains(msg, "cpu")) refused_badly += std::string(name) + ": " + msg + "; ";
    }
    VERIFY2(refused_badly.empty(), refused_badly);
    const std::string nowhere = message_of<DeviceError>([&] { (void)g.to(Device::cuda(99)); });
    VERIFY2(contains(nowhere, "cuda:99"), nowhere);
    VERIFY_THROWS(DeviceError, (void)zeros({2}, Device::cuda(99)));
    // The device still works.
    COMPARE((g * 2.f).to_vector(), (std::vector<float>{3.f, -4.f, 0.5f}));
  GUARD_END
}

// ---- sequence models: layer norm, causal softmax, attention, positions, cross-entropy per position ----
// (the ops' own cases are op-case rows, in opParity; here the modules built from them)
TEST(sequenceOpsMatchCpu) {
  GUARD_BEGIN
    // The modules on the device, against the same modules on the CPU.
    Generator gen(15);
    auto cpu_model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
        std::make_shared<nn::PositionalEmbedding>(6, 8, &gen), std::make_shared<nn::LayerNorm>(8),
        std::make_shared<nn::MultiheadAttention>(8, 2, true, 0.f, &gen)});
    const Tensor x = normal({3, 6, 8}, 16);
    const std::vector<float> want = cpu_model->forward(x).to_vector();
    cpu_model->to(kGpu);
    const std::string err = mismatch(cpu_model->forward(gpu(x)).to_vector(), want, kGemm);
    VERIFY2(err.empty(), "PositionalEmbedding -> LayerNorm -> MultiheadAttention: " + err);
  GUARD_END
}

