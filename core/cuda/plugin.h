#pragma once
// The CUDA backend as a plug-in: libplexus_cuda.so holds the device runtime, the kernels,
// cuBLAS, cuDNN and NCCL; the core (cuda/plugin_loader.cpp) opens it with dlopen the first time
// anything asks for a CUDA device or lists them, so that a program that never does (plexus-cli
// --version, check, a CPU run) never maps the CUDA libraries. The plug-in hands the core one
// table of the functions behind cuda.h and step_graph.h; NCCL's (dist/nccl/nccl_communicator.h)
// are found by name in it (plugin_symbol).
//
// The table passes C++ types (std::string, Tensor, exceptions), so plug-in and core must come
// from the same build: kPluginAbi and the table's size are checked when it is opened.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "cuda/cuda.h"
#include "cuda/step_graph.h"

namespace plexus::cuda {

inline constexpr int kPluginAbi = 1;

// The file the core looks for, and the function in it that returns the table.
inline constexpr const char* kPluginFile = "libplexus_cuda.so";
inline constexpr const char* kPluginEntry = "plexus_cuda_plugin";

struct PluginApi {
  int abi;       // kPluginAbi
  size_t bytes;  // sizeof(PluginApi)
  int (*device_count)();
  std::string (*status)();
  DeviceProperties (*properties)(int index);
  std::string (*convolution_engine)(int index);
  void (*check_available)(Device device);
  void (*synchronize)(Device device);
  Allocator& (*device_allocator)(int index);
  Allocator& (*host_pinned_allocator)();
  Backend& (*device_backend)(int index);
  void (*copy_to_device)(float* dst, int index, const float* src, int64_t count);
  void (*copy_to_host)(float* dst, const float* src, int index, int64_t count);
  // CapturedStep's members, on its Impl (cuda/step_graph.cu).
  CapturedStep::Impl* (*step_create)(int device);
  void (*step_destroy)(CapturedStep::Impl* step);
  std::optional<std::string> (*step_capture)(CapturedStep::Impl& step, const std::function<void()>& body);
  bool (*step_captured)(const CapturedStep::Impl& step);
  void (*step_skip_update_unless_finite)(CapturedStep::Impl& step, const Tensor& loss);
  void (*step_replay)(CapturedStep::Impl& step, const std::function<void()>& refresh);
};

// In the core: the plug-in's table, opening it on first use; DeviceError naming `device` and
// why when there is none ("cuda:0 is not available: no CUDA device: the CUDA plug-in ...").
const PluginApi& plugin_for(Device device);
// The same without throwing: null when there is no plug-in (status() says why).
const PluginApi* plugin();
// A symbol of the plug-in by name (dlsym); null when there is no plug-in or no such symbol.
void* plugin_symbol(const char* name);

}  // namespace plexus::cuda

// In the plug-in; what dlsym(kPluginEntry) finds.
extern "C" const plexus::cuda::PluginApi* plexus_cuda_plugin();
