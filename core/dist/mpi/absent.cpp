// plexus_dist in a build without MPI: one process only, and a clear refusal to join a job.
#include "dist/launch.h"

namespace plexus::dist {

std::string backends() { return "none (this build has no MPI: install libopenmpi-dev, see scripts/deps, and rebuild)"; }

World join(bool) {
  throw DistError("this plexus-cli was built without MPI, so it cannot join an mpirun job; install libopenmpi-dev "
                  "(bash scripts/deps) and rebuild");
}

}  // namespace plexus::dist
