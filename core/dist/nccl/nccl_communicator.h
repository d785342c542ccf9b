#pragma once
// The gradients of a run on CUDA devices, summed with NCCL (one rank per GPU); everything
// else (the host collectives, the launch) goes through `host`, the MPI communicator, which
// also hands the NCCL unique id from rank 0 to the others. Built only with CUDA and NCCL
// (PLEXUS_HAVE_NCCL).
#include "dist/communicator.h"

namespace plexus::dist {

// NCCL over the same ranks as `host`, on cuda:`device_index`.
CommunicatorPtr make_nccl_communicator(CommunicatorPtr host, int device_index);

// "nccl 2.28.3": the library's version, for dist::backends().
std::string nccl_version();

// Both live in the CUDA plug-in (cuda/plugin.h), beside the CUDA runtime whose streams NCCL
// shares; plexus_dist's definitions (nccl_forward.cpp) reach them through this table, which the
// plug-in's plexus_nccl_plugin() returns.
struct NcclApi {
  CommunicatorPtr (*make_communicator)(CommunicatorPtr host, int device_index);
  std::string (*version)();
};
inline constexpr const char* kNcclEntry = "plexus_nccl_plugin";

}  // namespace plexus::dist
