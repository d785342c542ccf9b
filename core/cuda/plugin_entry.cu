// The plug-in's side of cuda/plugin.h: the table of the backend's functions. The plug-in is
// linked with -Bsymbolic-functions, so the names it shares with the core's forwarding layer
// (plexus::cuda::device_count, ...) refer to its own definitions here.
#include "cuda/cuda.h"
#include "cuda/plugin.h"
#include "cuda/runtime.h"

extern "C" __attribute__((visibility("default"))) const plexus::cuda::PluginApi* plexus_cuda_plugin() {
  using namespace plexus::cuda;
  static const PluginApi api = {
      kPluginAbi,        sizeof(PluginApi),
      &device_count,     &status,
      &properties,       &convolution_engine,
      &check_available,  &synchronize,
      &device_allocator, &host_pinned_allocator,
      &device_backend,   &copy_to_device,
      &copy_to_host,     &step_create,
      &step_destroy,     &step_capture,
      &step_captured,    &step_skip_update_unless_finite,
      &step_replay,
  };
  return &api;
}
