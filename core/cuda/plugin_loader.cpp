// The core's side of the CUDA plug-in (cuda/plugin.h): cuda.h and CapturedStep forwarded to
// libplexus_cuda.so, opened the first time they are asked. Without the plug-in (a build without
// CUDA, or the file missing) there is never a device, and every request for one says why.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cuda/cuda.h"
#include "cuda/plugin.h"
#include "cuda/step_graph.h"
#include "util/error.h"

namespace plexus::cuda {
namespace {
namespace fs = std::filesystem;

struct Loaded {
  const PluginApi* api = nullptr;
  std::string why;  // when api is null: "no CUDA device: ..."
  void* handle = nullptr;
};

#ifdef PLEXUS_HAVE_CUDA
// Where the plug-in may be: next to the core library (the build tree's core/, or LIBDIR/plexus/
// where the package installs both), and next to the executable.
std::vector<fs::path> candidates() {
  std::vector<fs::path> out;
  auto add = [&out](const fs::path& dir) {
    const fs::path file = (dir / kPluginFile).lexically_normal();
    for (const fs::path& seen : out)
      if (seen == file) return;
    out.push_back(file);
  };
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&candidates), &self) && self.dli_fname) {
    std::error_code ec;
    const fs::path core = fs::canonical(self.dli_fname, ec);
    if (!ec) add(core.parent_path());
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) add(exe.parent_path());
  return out;
}
#endif

Loaded open_plugin() {
#ifndef PLEXUS_HAVE_CUDA
  return {nullptr, "no CUDA device: this build has no CUDA support (configure with PLEXUS_CUDA=ON and a CUDA toolkit)"};
#else
  // PLEXUS_CUDA_PLUGIN names the file to open instead of searching (a plug-in elsewhere; the
  // tests' way to run without one).
  std::vector<fs::path> files;
  if (const char* env = std::getenv("PLEXUS_CUDA_PLUGIN"); env && *env)
    files.push_back(env);
  else
    files = candidates();
  std::string looked;
  for (const fs::path& file : files) {
    std::error_code ec;
    if (!fs::exists(file, ec)) {
      looked += (looked.empty() ? "" : ", ") + file.string();
      continue;
    }
    // RTLD_LOCAL: the plug-in's symbols (it defines cuda.h's names too) stay out of the
    // program's namespace; RTLD_NOW: a missing library is reported here, not at a later call.
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return {nullptr, "no CUDA device: the CUDA plug-in " + file.string() + " did not load: " + dlerror()};
    using Entry = const PluginApi* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, kPluginEntry));
    if (!entry)
      return {nullptr, "no CUDA device: " + file.string() + " has no " + kPluginEntry + " (not a Plexus CUDA plug-in)"};
    const PluginApi* api = entry();
    if (api->abi != kPluginAbi || api->bytes != sizeof(PluginApi))
      return {nullptr, "no CUDA device: the CUDA plug-in " + file.string() +
                           " is from another Plexus build (install the plug-in that came with this program)"};
    return {api, "", handle};
  }
  return {nullptr, "no CUDA device: the CUDA plug-in " + std::string(kPluginFile) + " was not found (looked for " +
                       looked + ")"};
#endif
}

const Loaded& loaded() {
  static const Loaded l = open_plugin();
  return l;
}

}  // namespace

const PluginApi& plugin_for(Device device) {
  const Loaded& l = loaded();
  if (!l.api) throw DeviceError(device.str() + " is not available: " + l.why);
  return *l.api;
}

bool built() {
#ifdef PLEXUS_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

const PluginApi* plugin() { return loaded().api; }

void* plugin_symbol(const char* name) {
  const Loaded& l = loaded();
  return l.handle ? dlsym(l.handle, name) : nullptr;
}

int device_count() {
  const PluginApi* api = loaded().api;
  return api ? api->device_count() : 0;
}

std::string status() {
  const Loaded& l = loaded();
  return l.api ? l.api->status() : l.why;
}

DeviceProperties properties(int index) { return plugin_for(Device::cuda(index)).properties(index); }
std::string convolution_engine(int index) { return plugin_for(Device::cuda(index)).convolution_engine(index); }

void check_available(Device device) {
  if (!device.is_cpu()) plugin_for(device).check_available(device);
}

void synchronize(Device device) {
  if (!device.is_cpu()) plugin_for(device).synchronize(device);
}

Allocator& device_allocator(int index) { return plugin_for(Device::cuda(index)).device_allocator(index); }
Allocator& host_pinned_allocator() { return plugin_for(Device::cuda(0)).host_pinned_allocator(); }
Backend& device_backend(int index) { return plugin_for(Device::cuda(index)).device_backend(index); }
void copy_to_device(float* dst, int index, const float* src, int64_t count) {
  plugin_for(Device::cuda(index)).copy_to_device(dst, index, src, count);
}
void copy_to_host(float* dst, const float* src, int index, int64_t count) {
  plugin_for(Device::cuda(index)).copy_to_host(dst, src, index, count);
}

// An Impl exists only when the plug-in is loaded: the constructor throws otherwise.
CapturedStep::CapturedStep(int device) : impl_(plugin_for(Device::cuda(device)).step_create(device)) {}
CapturedStep::~CapturedStep() { loaded().api->step_destroy(impl_); }
std::optional<std::string> CapturedStep::capture(const std::function<void()>& step) {
  return loaded().api->step_capture(*impl_, step);
}
bool CapturedStep::captured() const { return loaded().api->step_captured(*impl_); }
void CapturedStep::skip_update_unless_finite(const Tensor& loss) {
  loaded().api->step_skip_update_unless_finite(*impl_, loss);
}
void CapturedStep::replay(const std::function<void()>& refresh) { loaded().api->step_replay(*impl_, refresh); }

}  // namespace plexus::cuda
