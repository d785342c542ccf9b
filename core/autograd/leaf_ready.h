#pragma once
// A leaf's gradient is final: backward() on this thread has run every op that feeds it. The
// data-parallel gradient reducer (dist/reducer.h) listens, so that a bucket of parameters can
// start its all-reduce while backward is still working on the layers before them.
#include <functional>

namespace plexus {

struct TensorImpl;

using LeafReady = std::function<void(TensorImpl& leaf)>;

// Installs `ready` for backward() calls on this thread for the guard's lifetime (one at a
// time: the previous listener comes back afterwards). autograd::grad does not call it.
class LeafReadyGuard {
 public:
  explicit LeafReadyGuard(LeafReady ready);
  ~LeafReadyGuard();
  LeafReadyGuard(const LeafReadyGuard&) = delete;
  LeafReadyGuard& operator=(const LeafReadyGuard&) = delete;

 private:
  LeafReady previous_;
};

}  // namespace plexus
