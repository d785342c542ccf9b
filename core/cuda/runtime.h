#pragma once
// Internal to the CUDA backend: the device runtime that core/cuda/*.cu and the kernels of
// core/ops/cuda share. Host code only; no device code is declared here.
//
// Every CUDA and cuBLAS status is checked where it is returned and becomes a DeviceError
// naming the call and the error ("cudaMalloc(&p, 1073741824) failed: out of memory
// (cudaErrorMemoryAllocation)"). Each device has one stream, on which every kernel, cuBLAS
// call and copy of ours is queued, so work is ordered without events and memory freed by the
// host can be reused by later work at once (as PyTorch's caching allocator does per stream).
//
// Kernels never trap on bad data (a trap would poison the CUDA context): they record the
// first bad index in a per-device FaultRecord (ops/cuda/fault.cuh) and carry on with a
// harmless value; the host reads the record whenever it synchronises and throws an
// IndexError naming the op.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/step_graph.h"

namespace plexus {
class Generator;
}

namespace plexus::cuda {

void check(cudaError_t status, const char* call);
void check(cublasStatus_t status, const char* call);
#define PLEXUS_CUDA_CHECK(expr) ::plexus::cuda::check((expr), #expr)
// After a kernel launch: a bad configuration fails here, naming the kernel.
void check_launch(const char* kernel);

// Makes `index` the current device of the calling thread (cheap when it already is).
void use_device(int index);
cudaStream_t stream(int index);
cublasHandle_t cublas(int index);

// Ops that can report a fault, for the message.
enum class FaultOp : int {
  None = 0, IndexSelect, IndexAdd, Gather, ScatterAdd, CrossEntropy, CrossEntropyBackward, ArgReduce
};
struct FaultRecord {
  int op;              // FaultOp; 0 = no fault
  float value;         // the offending index value
  long long position;  // element of the index / target tensor
  long long limit;     // valid indices are whole numbers in [0, limit)
};
FaultRecord* fault_record(int index);  // device memory, zeroed

// Synchronises the device's stream, then throws for a recorded fault (and clears it).
void synchronize_stream(int index);

// Private pools of the device's caching allocator (tensor/caching_pool.h), for graphs.
uint32_t open_private_pool(int index);
void close_private_pool(int index);
void release_private_pool(int index, uint32_t id);

// ---- A training step recorded as a CUDA graph (cuda/step_graph.h, cuda/step_graph.cu) ----------------
// Kernels whose arguments change from step to step — random keys, the optimizer's scalars —
// read them from a table in device memory while a step is captured, and the table is filled
// again before every replay. On the thread that captures, for that device:
//   Eager       no capture: launch with the values themselves;
//   Capturing   stage the values (below) and launch with the device address;
//   Refreshing  the host side of the update runs again before a replay: stage the new values
//               and launch nothing (the graph does).
enum class StepMode { Eager, Capturing, Refreshing };
StepMode step_mode(int index);
// Capturing: copies `bytes` of `value` into the next slot and returns its device address.
// Refreshing: overwrites the slot at the same position in the sequence and returns nullptr.
const void* stage_step_value(int index, const void* value, size_t bytes);
// Capturing: a slot holding `key` now and a fresh draw from `gen` before every later replay.
const uint64_t* stage_random_key(int index, uint64_t key, Generator& gen);
// Capturing: a device word that is non-zero when the captured step's loss was not finite;
// updates skip themselves then, so the weights stay those of the last good step. Else null.
const int* step_skip_flag(int index);
// CapturedStep's members on its Impl, which the core reaches through the plug-in's table (cuda/plugin.h).
CapturedStep::Impl* step_create(int device);
void step_destroy(CapturedStep::Impl* step);
std::optional<std::string> step_capture(CapturedStep::Impl& step, const std::function<void()>& body);
bool step_captured(const CapturedStep::Impl& step);
void step_skip_update_unless_finite(CapturedStep::Impl& step, const Tensor& loss);
void step_replay(CapturedStep::Impl& step, const std::function<void()>& refresh);

}  // namespace plexus::cuda
