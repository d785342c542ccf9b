#pragma once
// The core owns its CPU thread count explicitly: one pool (util/parallel.h) of that many
// threads runs every large loop, matrix products included, and OpenBLAS is kept at one
// thread so that it never starts a second pool spinning on the same cores.

namespace plexus {

// Default: PLEXUS_NUM_THREADS if set, else the physical cores this process may run on
// (hyper-threads share a core's vector units, which a matrix product already saturates).
int num_threads();
void set_num_threads(int n);

// Physical cores in this process's CPU affinity mask (1 if unknown).
int physical_cores();

}  // namespace plexus
