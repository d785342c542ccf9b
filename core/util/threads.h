#pragma once
// The core owns its CPU thread count explicitly: OpenBLAS's pool is the only one (our own
// loops run on the calling thread), sized once at start-up and changed only through here.
// Two pools spinning on the same cores slow everything down several times.

namespace plexus {

// Default: PLEXUS_NUM_THREADS if set, else the number of hardware threads.
int num_threads();
void set_num_threads(int n);

}  // namespace plexus
