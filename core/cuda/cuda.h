#pragma once
// The CUDA device as the rest of the product sees it: is there one, which, how much memory,
// wait for it. No CUDA header is included here, so every front end can ask without the
// toolkit; a build without CUDA (PLEXUS_CUDA=OFF, or no toolkit found) answers "no".
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/allocator.h"
#include "tensor/device.h"

namespace plexus {
class Backend;
}

namespace plexus::cuda {

// True when this build contains the CUDA backend.
bool built();

// CUDA devices usable now; 0 without a build, a driver or a device (never throws).
int device_count();

// One line for users: "2 CUDA devices", "no CUDA device (cudaErrorNoDevice: ...)",
// "no CUDA device: this build has no CUDA support (PLEXUS_CUDA=OFF)".
std::string status();

struct DeviceProperties {
  int index = 0;
  std::string name;            // "NVIDIA H100 80GB HBM3"
  int64_t total_memory = 0;    // bytes
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
};
DeviceProperties properties(int index);  // DeviceError when there is no such device

// What runs the convolutions on cuda:index: "cuDNN 9.19.0" (ops/cuda/cudnn_conv.h) or
// "Plexus im2col + cuBLAS" (no cuDNN in the build or at run time, or PLEXUS_CUDNN=0).
std::string convolution_engine(int index);

// Throws DeviceError naming the device and what is there ("cuda:1 is not available: 1 CUDA
// device (cuda:0)") unless `device` is the CPU or a CUDA device that exists.
void check_available(Device device);

// Waits for all work queued on the device, then reports a bad index a kernel met (IndexError
// naming the op) or an asynchronous CUDA error (DeviceError naming the call).
void synchronize(Device device);

// ---- for the tensor layer (tensor/*.cpp, ops/cpu/cpu_backend.cpp) ----
Allocator& device_allocator(int index);  // the caching allocator of cuda:index
Allocator& host_pinned_allocator();      // page-locked host memory
Backend& device_backend(int index);      // kernels of cuda:index (ops/cuda/backend.cu)
// Host → device: queued on the device's stream (returns at once for pinned sources).
void copy_to_device(float* dst, int index, const float* src, int64_t count);
// Device → host: waits for the device, then reports faults like synchronize().
void copy_to_host(float* dst, const float* src, int index, int64_t count);

}  // namespace plexus::cuda
