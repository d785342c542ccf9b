// nccl_communicator.h for plexus_dist: NCCL lives in the CUDA plug-in (cuda/plugin.h), next to
// the CUDA runtime whose streams it shares, so that programs load it only with a CUDA device.
#include "cuda/plugin.h"
#include "dist/nccl/nccl_communicator.h"

namespace plexus::dist {
namespace {
const NcclApi* nccl_api() {
  using Entry = const NcclApi* (*)();
  const auto entry = reinterpret_cast<Entry>(cuda::plugin_symbol(kNcclEntry));
  return entry ? entry() : nullptr;
}
}  // namespace

CommunicatorPtr make_nccl_communicator(CommunicatorPtr host, int device_index) {
  cuda::plugin_for(Device::cuda(device_index));  // DeviceError: no plug-in, and why
  const NcclApi* api = nccl_api();
  if (!api) throw DeviceError("NCCL: the CUDA plug-in was built without NCCL");
  return api->make_communicator(std::move(host), device_index);
}

std::string nccl_version() {
  if (!cuda::plugin()) return "nccl (" + cuda::status() + ")";
  const NcclApi* api = nccl_api();
  return api ? api->version() : "nccl (not in the CUDA plug-in)";
}

}  // namespace plexus::dist
