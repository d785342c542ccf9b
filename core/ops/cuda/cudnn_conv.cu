// cuda/cudnn_conv.h. Without PLEXUS_HAVE_CUDNN every entry answers "not handled".
#include "ops/cuda/cudnn_conv.h"

#include <string>

#include "cuda/cuda.h"

#ifdef PLEXUS_HAVE_CUDNN
#include <cudnn.h>

#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/runtime.h"
#include "ops/precision.h"
#include "tensor/tensor.h"
#include "util/error.h"
#endif

namespace plexus::cuda {

namespace {
constexpr const char* kOwn = "Plexus im2col + cuBLAS";
}

#ifndef PLEXUS_HAVE_CUDNN

std::string convolution_engine(int index) {
  check_available(Device::cuda(index));
  return kOwn;
}

bool cudnn_conv_forward(int, float*, const float*, const float*, const Backend::ConvProblem&) { return false; }
bool cudnn_conv_backward(int, float*, float*, const float*, const float*, const float*, const Backend::ConvProblem&) {
  return false;
}

#else

namespace {

void check(cudnnStatus_t s, const char* call) {
  if (s != CUDNN_STATUS_SUCCESS) throw DeviceError(std::string(call) + " failed: " + cudnnGetErrorString(s));
}
#define PLEXUS_CUDNN_CHECK(expr) check((expr), #expr)

// A shape's descriptors and chosen algorithms (each with its workspace size).
struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  bool fwd_chosen = false, data_chosen = false, filter_chosen = false;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t data{};
  cudnnConvolutionBwdFilterAlgo_t filter{};
  size_t fwd_ws = 0, data_ws = 0, filter_ws = 0;
};

using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t>;

struct DeviceCudnn {
  std::once_flag once;
  cudnnHandle_t handle = nullptr;  // null: cuDNN is not usable on this device
  std::mutex mu;
  std::map<Key, std::unique_ptr<Plan>> plans;
};

DeviceCudnn& device_state(int index) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<DeviceCudnn>> all;  // leaked with the process
  std::lock_guard lock(mu);
  auto& d = all[index];
  if (!d) d = std::make_unique<DeviceCudnn>();
  return *d;
}

cudnnHandle_t handle(int index) {
  DeviceCudnn& d = device_state(index);
  std::call_once(d.once, [&] {
    use_device(index);
    cudnnHandle_t h = nullptr;
    // A missing or mismatched cuDNN library leaves the device to our own lowering.
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) return;
    if (cudnnSetStream(h, stream(index)) != CUDNN_STATUS_SUCCESS) {
      cudnnDestroy(h);
      return;
    }
    d.handle = h;
  });
  return d.handle;
}

bool fits_int(const Backend::ConvProblem& p) {
  const Backend::ConvGeometry& g = p.geo;
  for (int64_t v : {p.n, p.c, p.oc, g.h, g.w, g.oh, g.ow, p.n * p.c * g.h * g.w, p.n * p.oc * g.oh * g.ow})
    if (v > INT_MAX) return false;
  return true;
}

Plan& plan_for(int index, const Backend::ConvProblem& p) {
  const Backend::ConvGeometry& g = p.geo;
  const Key key{p.n, p.c, p.oc, p.groups, g.h, g.w, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw};
  DeviceCudnn& d = device_state(index);
  std::lock_guard lock(d.mu);
  auto& slot = d.plans[key];
  if (slot) return *slot;
  auto plan = std::make_unique<Plan>();
  PLEXUS_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->x));
  PLEXUS_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->y));
  PLEXUS_CUDNN_CHECK(cudnnCreateFilterDescriptor(&plan->w));
  PLEXUS_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&plan->conv));
  PLEXUS_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, int(p.n), int(p.c),
                                                int(g.h), int(g.w)));
  PLEXUS_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, int(p.n), int(p.oc),
                                                int(g.oh), int(g.ow)));
  PLEXUS_CUDNN_CHECK(cudnnSetFilter4dDescriptor(plan->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, int(p.oc), int(g.c),
                                                int(g.kh), int(g.kw)));
  PLEXUS_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(plan->conv, int(g.ph), int(g.pw), int(g.sh), int(g.sw), int(g.dh),
                                                     int(g.dw), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  PLEXUS_CUDNN_CHECK(cudnnSetConvolutionGroupCount(plan->conv, int(p.groups)));
  PLEXUS_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv, CUDNN_FMA_MATH));
  slot = std::move(plan);
  return *slot;
}

// The fastest deterministic FMA-math algorithm that succeeded, from Find's (measured) or
// Get_v7's (heuristic) list, best first; false when none qualifies.
template <class Perf, class Algo>
bool pick(const Perf* results, int count, Algo& algo, size_t& workspace) {
  for (int i = 0; i < count; ++i)
    if (results[i].status == CUDNN_STATUS_SUCCESS && results[i].determinism == CUDNN_DETERMINISTIC &&
        results[i].mathType == CUDNN_FMA_MATH) {
      algo = results[i].algo;
      workspace = results[i].memory;
      return true;
    }
  return false;
}

// Measuring waits for the device, which a graph capture forbids: heuristics then.
bool measuring_allowed(int index) { return step_mode(index) == StepMode::Eager; }

// An algorithm for one direction of a plan, unless chosen already: `find(count, &n, perf)`
// measures, `guess(count, &n, perf)` asks the heuristics (then it is measured next time).
template <class Perf, class Algo, class Find, class Guess>
bool choose(int index, bool& chosen, Algo& algo, size_t& ws, Find&& find, Guess&& guess) {
  if (chosen) return true;
  constexpr int kMax = 8;  // more than any direction's algorithm count
  Perf r[kMax];
  int n = 0;
  const bool measure = measuring_allowed(index);
  check(measure ? find(kMax, &n, r) : guess(kMax, &n, r),
        measure ? "choosing a convolution algorithm (cudnnFind...Algorithm)"
                : "choosing a convolution algorithm (cudnnGet...Algorithm_v7)");
  if (!pick(r, n, algo, ws)) return false;
  chosen = measure;
  return true;
}

Tensor workspace(int index, size_t bytes) {
  return bytes ? plexus::empty({int64_t((bytes + 3) / 4)}, Device::cuda(index)) : Tensor();
}

// PLEXUS_CUDNN=0 in the environment turns cuDNN off (the test suite checks both lowerings).
bool switched_off() {
  static const bool off = [] {
    const char* v = std::getenv("PLEXUS_CUDNN");
    return v && std::string(v) == "0";
  }();
  return off;
}

bool usable(int index, const Backend::ConvProblem& p) {
  return !switched_off() && matmul_precision() == Precision::FP32 && fits_int(p) && p.n > 0 && p.oc > 0 &&
         handle(index);
}

}  // namespace

std::string convolution_engine(int index) {
  check_available(Device::cuda(index));
  if (switched_off() || !handle(index)) return kOwn;
  const size_t v = cudnnGetVersion();  // major * 10000 + minor * 100 + patch since cuDNN 9
  return "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

bool cudnn_conv_forward(int index, float* out, const float* x, const float* weight, const Backend::ConvProblem& p) {
  if (!usable(index, p)) return false;
  use_device(index);
  cudnnHandle_t h = handle(index);
  Plan& plan = plan_for(index, p);
  using FwdPerf = cudnnConvolutionFwdAlgoPerf_t;
  const auto find = [&](int k, int* n, FwdPerf* r) {
    return cudnnFindConvolutionForwardAlgorithm(h, plan.x, plan.w, plan.conv, plan.y, k, n, r);
  };
  const auto guess = [&](int k, int* n, FwdPerf* r) {
    return cudnnGetConvolutionForwardAlgorithm_v7(h, plan.x, plan.w, plan.conv, plan.y, k, n, r);
  };
  if (!choose<FwdPerf>(index, plan.fwd_chosen, plan.fwd, plan.fwd_ws, find, guess)) return false;
  const Tensor ws = workspace(index, plan.fwd_ws);
  const float one = 1.f, zero = 0.f;
  PLEXUS_CUDNN_CHECK(cudnnConvolutionForward(h, &one, plan.x, x, plan.w, weight, plan.conv, plan.fwd,
                                             ws.defined() ? ws.data() : nullptr, plan.fwd_ws, &zero, plan.y, out));
  return true;
}

bool cudnn_conv_backward(int index, float* grad_x, float* grad_weight, const float* grad_out, const float* x,
                         const float* weight, const Backend::ConvProblem& p) {
  if (!usable(index, p)) return false;
  use_device(index);
  cudnnHandle_t h = handle(index);
  Plan& plan = plan_for(index, p);
  using DataPerf = cudnnConvolutionBwdDataAlgoPerf_t;
  using FilterPerf = cudnnConvolutionBwdFilterAlgoPerf_t;
  const auto find_data = [&](int k, int* n, DataPerf* r) {
    return cudnnFindConvolutionBackwardDataAlgorithm(h, plan.w, plan.y, plan.conv, plan.x, k, n, r);
  };
  const auto guess_data = [&](int k, int* n, DataPerf* r) {
    return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, plan.w, plan.y, plan.conv, plan.x, k, n, r);
  };
  const auto find_filter = [&](int k, int* n, FilterPerf* r) {
    return cudnnFindConvolutionBackwardFilterAlgorithm(h, plan.x, plan.y, plan.conv, plan.w, k, n, r);
  };
  const auto guess_filter = [&](int k, int* n, FilterPerf* r) {
    return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, plan.x, plan.y, plan.conv, plan.w, k, n, r);
  };
  if (grad_x && !choose<DataPerf>(index, plan.data_chosen, plan.data, plan.data_ws, find_data, guess_data))
    return false;
  if (grad_weight &&
      !choose<FilterPerf>(index, plan.filter_chosen, plan.filter, plan.filter_ws, find_filter, guess_filter))
    return false;
  const float one = 1.f;  // both add into what is there (zeros from the caller, or a sum)
  if (grad_weight) {
    const Tensor ws = workspace(index, plan.filter_ws);
    PLEXUS_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, &one, plan.x, x, plan.y, grad_out, plan.conv, plan.filter,
                                                      ws.defined() ? ws.data() : nullptr, plan.filter_ws, &one, plan.w,
                                                      grad_weight));
  }
  if (grad_x) {
    const Tensor ws = workspace(index, plan.data_ws);
    PLEXUS_CUDNN_CHECK(cudnnConvolutionBackwardData(h, &one, plan.w, weight, plan.y, grad_out, plan.conv, plan.data,
                                                    ws.defined() ? ws.data() : nullptr, plan.data_ws, &one, plan.x,
                                                    grad_x));
  }
  return true;
}

#endif

}  // namespace plexus::cuda
