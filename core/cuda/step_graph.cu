// CapturedStep (cuda/step_graph.h) and the per-step value table of runtime.h's StepMode.
//
// The table is one pinned host buffer and its device twin. Slot 0 is the skip word; the
// values staged during capture follow, each at a 16-byte boundary. Before every replay the
// host rewrites its buffer (random keys redrawn, the update's scalars staged again) and one
// asynchronous copy moves it to the device, queued ahead of the graph on the same stream; an
// event recorded after that copy tells when the host buffer may be written again.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cuda/cuda.h"
#include "cuda/step_graph.h"
#include "cuda/runtime.h"
#include "tensor/generator.h"
#include "util/error.h"

namespace plexus::cuda {

namespace {
constexpr size_t kTableBytes = size_t(64) << 10;
constexpr size_t kAlign = 16;

__global__ void set_skip_unless_finite(const float* loss, int* skip) { *skip = isfinite(*loss) ? 0 : 1; }
}  // namespace

struct CapturedStep::Impl {
  struct Slot {
    size_t offset, bytes;
    Generator* gen;  // a random key, redrawn before each replay; null: staged by the update
  };

  int device;
  char* host = nullptr;  // pinned
  char* dev = nullptr;
  size_t used = kAlign;  // slot 0: the skip word
  std::vector<Slot> slots;
  size_t cursor = 0;     // refreshing: the next slot staged by the update
  StepMode mode = StepMode::Eager;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t copied = nullptr;
  uint32_t pool = 0;
  bool staged_fresh = false;  // the table holds the values staged during capture

  size_t add_slot(const void* value, size_t bytes, Generator* gen) {
    const size_t offset = (used + kAlign - 1) / kAlign * kAlign;
    if (offset + bytes > kTableBytes)
      throw DeviceError("capturing the training step: more per-step values than the graph's table holds (" +
                        std::to_string(kTableBytes) + " bytes)");
    std::memcpy(host + offset, value, bytes);
    slots.push_back({offset, bytes, gen});
    used = offset + bytes;
    return offset;
  }
};

namespace {
// The step being captured or refreshed on this thread (one at a time).
thread_local CapturedStep::Impl* t_step = nullptr;

CapturedStep::Impl* active(int index) { return t_step && t_step->device == index ? t_step : nullptr; }

// Sets t_step for the duration of a capture or refresh.
struct Activate {
  Activate(CapturedStep::Impl* s, StepMode m) {
    s->mode = m;
    t_step = s;
  }
  ~Activate() {
    t_step->mode = StepMode::Eager;
    t_step = nullptr;
  }
};
}  // namespace

StepMode step_mode(int index) {
  const CapturedStep::Impl* s = active(index);
  return s ? s->mode : StepMode::Eager;
}

const void* stage_step_value(int index, const void* value, size_t bytes) {
  CapturedStep::Impl* s = active(index);
  if (!s) return nullptr;
  if (s->mode == StepMode::Capturing) return s->dev + s->add_slot(value, bytes, nullptr);
  // Refreshing: the next slot the update staged during capture.
  while (s->cursor < s->slots.size() && s->slots[s->cursor].gen) ++s->cursor;
  if (s->cursor == s->slots.size() || s->slots[s->cursor].bytes != bytes)
    throw DeviceError("replaying the training step: the update staged different values than when it was captured");
  std::memcpy(s->host + s->slots[s->cursor++].offset, value, bytes);
  return nullptr;
}

const uint64_t* stage_random_key(int index, uint64_t key, Generator& gen) {
  CapturedStep::Impl* s = active(index);
  if (!s || s->mode != StepMode::Capturing) return nullptr;
  return reinterpret_cast<const uint64_t*>(s->dev + s->add_slot(&key, sizeof key, &gen));
}

const int* step_skip_flag(int index) {
  const CapturedStep::Impl* s = active(index);
  return s && s->mode == StepMode::Capturing ? reinterpret_cast<const int*>(s->dev) : nullptr;
}

// CapturedStep's members (the core's cuda/plugin_loader.cpp forwards them here).
CapturedStep::Impl* step_create(int device) {
  check_available(Device::cuda(device));
  auto impl = std::make_unique<CapturedStep::Impl>();
  impl->device = device;
  use_device(device);
  PLEXUS_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&impl->host), kTableBytes, cudaHostAllocDefault));
  PLEXUS_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&impl->dev), kTableBytes));
  PLEXUS_CUDA_CHECK(cudaEventCreateWithFlags(&impl->copied, cudaEventDisableTiming));
  std::memset(impl->host, 0, kTableBytes);
  return impl.release();
}

void step_destroy(CapturedStep::Impl* step) {
  std::unique_ptr<CapturedStep::Impl> owned(step);
  CapturedStep::Impl& s = *step;
  use_device(s.device);
  // Teardown must not throw: the graph may be destroyed while an error unwinds the trainer.
  cudaStreamSynchronize(stream(s.device));
  if (s.exec) cudaGraphExecDestroy(s.exec);
  if (s.graph) cudaGraphDestroy(s.graph);
  if (s.copied) cudaEventDestroy(s.copied);
  cudaFree(s.dev);
  cudaFreeHost(s.host);
  if (s.pool) release_private_pool(s.device, s.pool);
  cudaGetLastError();
}

bool step_captured(const CapturedStep::Impl& s) { return s.exec != nullptr; }

std::optional<std::string> step_capture(CapturedStep::Impl& s, const std::function<void()>& step) {
  if (s.exec) throw DeviceError("CapturedStep::capture: this step is already captured");
  use_device(s.device);
  const cudaStream_t st = stream(s.device);
  s.slots.clear();
  s.used = kAlign;
  // Relaxed: the caching allocator may cudaMalloc for the private pool during the capture;
  // anything that waits for the stream (a read back to the host) still fails the capture.
  PLEXUS_CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed));
  s.pool = open_private_pool(s.device);
  std::optional<std::string> why;
  {
    Activate on(&s, StepMode::Capturing);
    try {
      step();
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  close_private_pool(s.device);
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(st, &graph);
  if (!why && end != cudaSuccess)
    why = std::string("cudaStreamEndCapture failed: ") + cudaGetErrorString(end) + " (" + cudaGetErrorName(end) + ")";
  if (!why) {
    const cudaError_t inst = cudaGraphInstantiate(&s.exec, graph, 0);
    if (inst != cudaSuccess) {
      s.exec = nullptr;
      why = std::string("cudaGraphInstantiate failed: ") + cudaGetErrorString(inst);
    }
  }
  if (why) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // a failed capture leaves its error behind; the stream is usable
    release_private_pool(s.device, s.pool);
    s.pool = 0;
    return why;
  }
  s.graph = graph;
  s.staged_fresh = true;
  return std::nullopt;
}

void step_skip_update_unless_finite(CapturedStep::Impl& s, const Tensor& loss) {
  if (s.mode != StepMode::Capturing) return;
  if (loss.numel() != 1 || loss.device() != Device::cuda(s.device))
    throw ValueError("skip_update_unless_finite: the loss must be one element on cuda:" + std::to_string(s.device));
  const Tensor l = loss.contiguous();
  set_skip_unless_finite<<<1, 1, 0, stream(s.device)>>>(l.data(), reinterpret_cast<int*>(s.dev));
  check_launch("set_skip_unless_finite");
}

void step_replay(CapturedStep::Impl& s, const std::function<void()>& refresh) {
  if (!s.exec) throw DeviceError("CapturedStep::replay: nothing was captured");
  use_device(s.device);
  const cudaStream_t st = stream(s.device);
  // The previous replay's copy must have read the host buffer before it changes.
  PLEXUS_CUDA_CHECK(cudaEventSynchronize(s.copied));
  if (!s.staged_fresh) {
    s.cursor = 0;
    {
      Activate on(&s, StepMode::Refreshing);
      refresh();
    }
    for (size_t i = s.cursor; i < s.slots.size(); ++i)
      if (!s.slots[i].gen)
        throw DeviceError("replaying the training step: the update staged fewer values than when it was captured");
    for (const CapturedStep::Impl::Slot& slot : s.slots)
      if (slot.gen) {
        std::lock_guard lock(slot.gen->mutex());
        const uint64_t key = slot.gen->next_u64();
        std::memcpy(s.host + slot.offset, &key, sizeof key);
      }
  }
  s.staged_fresh = false;
  std::memset(s.host, 0, kAlign);  // the skip word
  PLEXUS_CUDA_CHECK(cudaMemcpyAsync(s.dev, s.host, s.used, cudaMemcpyHostToDevice, st));
  PLEXUS_CUDA_CHECK(cudaEventRecord(s.copied, st));
  PLEXUS_CUDA_CHECK(cudaGraphLaunch(s.exec, st));
}

}  // namespace plexus::cuda
