#include "cli/command.h"

#include <cstdio>

#include "cuda/cuda.h"
#include "util/threads.h"

namespace plexus::cli {
namespace {

constexpr const char* kDevicesHelp = R"(  The CPU with the threads training uses, and every CUDA GPU with its memory, compute
  capability and multiprocessors (or why none can be used).
)";

int cmd_devices(const Args&) {
  std::printf("cpu     %d threads\n", num_threads());
  for (int i = 0; i < cuda::device_count(); ++i) {
    const cuda::DeviceProperties p = cuda::properties(i);
    std::printf("cuda:%d  %s, %.1f GiB, compute capability %d.%d, %d multiprocessors; convolutions: %s\n", i,
                p.name.c_str(), double(p.total_memory) / double(int64_t(1) << 30), p.compute_major, p.compute_minor,
                p.multiprocessors, cuda::convolution_engine(i).c_str());
  }
  if (cuda::device_count() == 0) std::printf("%s\n", cuda::status().c_str());
  return 0;
}

}  // namespace

Command devices_command() {
  return {"devices", "devices",
          "list the devices training can use (the CPU, CUDA GPUs)",
          [] { return std::string(kDevicesHelp); }, {}, cmd_devices};
}

}  // namespace plexus::cli
