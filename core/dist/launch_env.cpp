// launched_by_mpi() needs no MPI library: the launcher's environment says it (plexus_core).
#include <cstdlib>

#include "dist/launch.h"

namespace plexus::dist {

bool launched_by_mpi() {
  // Open MPI's mpirun; PMI/PMIx, which MPICH's hydra and Slurm's srun set.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

}  // namespace plexus::dist
