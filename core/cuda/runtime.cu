// Devices, streams, cuBLAS handles, status checks and the fault record (see runtime.h), and
// the public answers of cuda.h.
#include <array>
#include <memory>
#include <mutex>
#include <string>

#include "cuda/cuda.h"
#include "cuda/runtime.h"
#include "util/error.h"

namespace plexus::cuda {
namespace {

constexpr int kMaxDevices = 64;

struct DeviceState {
  std::once_flag once;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  FaultRecord* faults = nullptr;
  FaultRecord* faults_host = nullptr;  // pinned: the record comes back with the same wait
  void* cublas_workspace = nullptr;
};

// cuBLAS's workspace, ours rather than one it allocates per call, so that its products can be
// captured in a CUDA graph (cuda/step_graph.h); 32 MiB is what it asks for on Hopper.
constexpr size_t kCublasWorkspace = size_t(32) << 20;
std::array<DeviceState, kMaxDevices> g_devices;

// cudaGetDeviceCount once: its answer (and a missing driver) does not change while we run.
struct Census {
  int count = 0;
  cudaError_t error = cudaSuccess;
};
const Census& census() {
  static const Census c = [] {
    Census r;
    r.error = cudaGetDeviceCount(&r.count);
    if (r.error != cudaSuccess) {
      r.count = 0;
      cudaGetLastError();  // not sticky: clear it so later calls do not see it
    }
    if (r.count > kMaxDevices) r.count = kMaxDevices;
    return r;
  }();
  return c;
}

thread_local int t_current = -1;

DeviceState& state(int index) {
  if (index < 0 || index >= device_count()) check_available(Device::cuda(index));
  DeviceState& s = g_devices[size_t(index)];
  std::call_once(s.once, [&] {
    use_device(index);
    PLEXUS_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    PLEXUS_CUDA_CHECK(cublasCreate(&s.cublas));
    PLEXUS_CUDA_CHECK(cublasSetStream(s.cublas, s.stream));
    // Plain FP32 products (no TF32), so results match the CPU's to float rounding.
    PLEXUS_CUDA_CHECK(cublasSetMathMode(s.cublas, CUBLAS_DEFAULT_MATH));
    PLEXUS_CUDA_CHECK(cudaMalloc(&s.cublas_workspace, kCublasWorkspace));
    PLEXUS_CUDA_CHECK(cublasSetWorkspace(s.cublas, s.cublas_workspace, kCublasWorkspace));
    PLEXUS_CUDA_CHECK(cudaMalloc(&s.faults, sizeof(FaultRecord)));
    PLEXUS_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&s.faults_host), sizeof(FaultRecord), cudaHostAllocDefault));
    PLEXUS_CUDA_CHECK(cudaMemsetAsync(s.faults, 0, sizeof(FaultRecord), s.stream));
  });
  return s;
}

const char* fault_op_name(int op) {
  switch (FaultOp(op)) {
    case FaultOp::IndexSelect: return "index_select";
    case FaultOp::IndexAdd: return "index_select (backward)";
    case FaultOp::Gather: return "gather";
    case FaultOp::ScatterAdd: return "gather (backward)";
    case FaultOp::CrossEntropy: return "cross_entropy";
    case FaultOp::CrossEntropyBackward: return "cross_entropy (backward)";
    case FaultOp::ArgReduce: return "argmax";
    case FaultOp::None: break;
  }
  return "a kernel";
}

std::string number(float v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  throw DeviceError(std::string(call) + " failed: " + cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")");
}

void check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw DeviceError(std::string(call) + " failed: " + cublasGetStatusString(status) + " (" +
                    cublasGetStatusName(status) + ")");
}

void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw DeviceError(std::string("launching the CUDA kernel ") + kernel + " failed: " + cudaGetErrorString(e) + " (" +
                      cudaGetErrorName(e) + ")");
}

void use_device(int index) {
  if (t_current == index) return;
  PLEXUS_CUDA_CHECK(cudaSetDevice(index));
  t_current = index;
}

cudaStream_t stream(int index) { return state(index).stream; }
cublasHandle_t cublas(int index) { return state(index).cublas; }
FaultRecord* fault_record(int index) { return state(index).faults; }

void synchronize_stream(int index) {
  DeviceState& s = state(index);
  use_device(index);
  // The record is queued behind the work, so one wait brings both.
  PLEXUS_CUDA_CHECK(cudaMemcpyAsync(s.faults_host, s.faults, sizeof(FaultRecord), cudaMemcpyDeviceToHost, s.stream));
  PLEXUS_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  const FaultRecord r = *s.faults_host;
  if (r.op == 0) return;
  PLEXUS_CUDA_CHECK(cudaMemset(s.faults, 0, sizeof(FaultRecord)));
  throw IndexError(std::string(fault_op_name(r.op)) + " on cuda:" + std::to_string(index) + ": index " + number(r.value) +
                   " at position " + std::to_string(r.position) + " is not a whole number in [0, " +
                   std::to_string(r.limit) + ")");
}

// ---- cuda.h ------------------------------------------------------------------------------
int device_count() { return census().count; }

std::string status() {
  const Census& c = census();
  // Without libcuda the runtime says "driver version is insufficient": say what that means.
  if (c.error == cudaErrorInsufficientDriver)
    return "no CUDA device (no NVIDIA driver found, or it is older than this build's CUDA " +
           std::to_string(CUDART_VERSION / 1000) + " runtime)";
  if (c.error != cudaSuccess)
    return std::string("no CUDA device (") + cudaGetErrorName(c.error) + ": " + cudaGetErrorString(c.error) + ")";
  if (c.count == 0) return "no CUDA device";
  std::string s = std::to_string(c.count) + (c.count == 1 ? " CUDA device: " : " CUDA devices: ");
  for (int i = 0; i < c.count; ++i) s += (i ? ", " : "") + std::string("cuda:") + std::to_string(i) + " " + properties(i).name;
  return s;
}

DeviceProperties properties(int index) {
  check_available(Device::cuda(index));
  cudaDeviceProp p{};
  PLEXUS_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  DeviceProperties d;
  d.index = index;
  d.name = p.name;
  d.total_memory = int64_t(p.totalGlobalMem);
  d.compute_major = p.major;
  d.compute_minor = p.minor;
  d.multiprocessors = p.multiProcessorCount;
  return d;
}

void check_available(Device device) {
  if (device.is_cpu()) return;
  const int n = device_count();
  if (device.index >= 0 && device.index < n) return;
  if (n == 0) throw DeviceError(device.str() + " is not available: " + status());
  throw DeviceError(device.str() + " is not available: " + std::to_string(n) +
                    (n == 1 ? " CUDA device (cuda:0)" : " CUDA devices (cuda:0 to cuda:" + std::to_string(n - 1) + ")"));
}

void synchronize(Device device) {
  if (device.is_cpu()) return;
  synchronize_stream(device.index);
}

}  // namespace plexus::cuda
