// The build without the CUDA backend (PLEXUS_CUDA=OFF, or no toolkit found): there is never
// a device, and every request for one says why.
#include "cuda/cuda.h"
#include "cuda/step_graph.h"
#include "util/error.h"

namespace plexus::cuda {
namespace {
const char* const kWhy = "no CUDA device: this build has no CUDA support (configure with PLEXUS_CUDA=ON and a CUDA toolkit)";
[[noreturn]] void unavailable(Device d) { throw DeviceError(d.str() + " is not available: " + kWhy); }
}  // namespace

bool built() { return false; }
int device_count() { return 0; }
std::string status() { return kWhy; }
DeviceProperties properties(int index) { unavailable(Device::cuda(index)); }
std::string convolution_engine(int index) { unavailable(Device::cuda(index)); }
void check_available(Device device) {
  if (!device.is_cpu()) unavailable(device);
}
void synchronize(Device device) { check_available(device); }
Allocator& device_allocator(int index) { unavailable(Device::cuda(index)); }
Allocator& host_pinned_allocator() { unavailable(Device::cuda(0)); }
Backend& device_backend(int index) { unavailable(Device::cuda(index)); }
void copy_to_device(float*, int index, const float*, int64_t) { unavailable(Device::cuda(index)); }
void copy_to_host(float*, const float*, int index, int64_t) { unavailable(Device::cuda(index)); }

struct CapturedStep::Impl {};
CapturedStep::CapturedStep(int device) { unavailable(Device::cuda(device)); }
CapturedStep::~CapturedStep() = default;
std::optional<std::string> CapturedStep::capture(const std::function<void()>&) { return kWhy; }
bool CapturedStep::captured() const { return false; }
void CapturedStep::skip_update_unless_finite(const Tensor&) {}
void CapturedStep::replay(const std::function<void()>&) { unavailable(Device::cuda(0)); }

}  // namespace plexus::cuda
