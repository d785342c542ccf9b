#pragma once
// Joining a data-parallel job: `mpirun -np N plexus-cli train FILE` starts N processes; each
// calls join() once, before anything else touches the device, and gets the world's
// communicator. The library behind this header is plexus_dist (dist/mpi/, dist/nccl/): built
// with Open MPI when CMake finds it (PLEXUS_MPI), with NCCL when also built with CUDA and NCCL
// (PLEXUS_NCCL). Without MPI, join() answers for one process and refuses a job of several.
#include <string>

#include "dist/communicator.h"

namespace plexus::dist {

// What this build has: "mpi (Open MPI 4.1.4), nccl 2.28.3" / "none (built without MPI)".
std::string backends();

// True when an MPI launcher started this process (its environment says so), even with -np 1.
bool launched_by_mpi();

struct World {
  CommunicatorPtr comm;  // the ranks of the job (size 1 for -np 1)
  int local_rank = 0;    // among the ranks on this machine: picks the GPU (cuda:local_rank)
  int local_size = 1;    // ranks on this machine: share its cores
  std::string note;      // why CUDA gradients go over MPI though this build has NCCL; else empty
};

// Joins the job this process was launched into (launched_by_mpi() must be true). With
// `cuda_gradients` the gradients live on cuda:local_rank and are summed with NCCL when this
// build has it and each rank has a GPU of its own, else over MPI through host copies (said by
// backend(), and why in note). PLEXUS_NCCL=0 in the environment turns NCCL off. Throws
// DistError when this build has no MPI. MPI is finalised when the last copy of the
// communicator goes away.
World join(bool cuda_gradients);

}  // namespace plexus::dist
