#pragma once
// Subnormal floats in the core's CPU kernels.
//
// On x86 each vector instruction that reads or produces a subnormal (|x| < 2^-126) leaves
// the fast path for a microcode assist of ~100 cycles, whichever of its 16 lanes holds it.
// Training makes them as it goes: Adam's first moment of a weight whose unit has stopped
// firing (gradient 0) shrinks by beta1 a step into the subnormal range. Training MLP
// 784-1024-1024-10 with Adam on MNIST, 8.7 % of the second layer's first moments were
// subnormal after four epochs, and an epoch took 1.7x as long by the sixth when they were
// kept (bench_cpu --subnormals). So, as TensorFlow's CPU kernels do, ours flush them to
// zero: every loop run through the thread pool (util/parallel.h: matrix products,
// convolutions, optimizer updates, large elementwise loops) runs with flush-to-zero and
// denormals-are-zero set, on the calling thread and the workers alike, so a chunk's result
// does not depend on which thread ran it. Small loops run on the caller and keep its
// setting, which train::Trainer::run and train::evaluate set the same way for their thread:
// in training every CPU kernel flushes. Numbers at or above 2^-126 are unaffected.
namespace plexus {

// On by default; set_flush_subnormals(false) gives IEEE gradual underflow back (for
// comparing bit for bit with a library that keeps subnormals). Takes effect with the next loop.
void set_flush_subnormals(bool on);
bool flush_subnormals();

// While alive, this thread flushes subnormals (as above) when `flush`; the thread's previous
// setting comes back at the end. A no-op on CPUs other than x86.
class SubnormalScope {
 public:
  explicit SubnormalScope(bool flush = flush_subnormals());
  ~SubnormalScope();
  SubnormalScope(const SubnormalScope&) = delete;
  SubnormalScope& operator=(const SubnormalScope&) = delete;

 private:
  unsigned saved_;
  bool changed_ = false;
};

}  // namespace plexus
