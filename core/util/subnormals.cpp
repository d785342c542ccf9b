#include "util/subnormals.h"

#include <atomic>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define PLEXUS_HAS_MXCSR 1
#endif

namespace plexus {
namespace {

std::atomic<bool> g_flush{true};

#ifdef PLEXUS_HAS_MXCSR
constexpr unsigned kFlushToZero = 0x8000;      // MXCSR.FTZ: subnormal results become 0
constexpr unsigned kDenormalsAreZero = 0x0040;  // MXCSR.DAZ: subnormal inputs read as 0
#endif

}  // namespace

void set_flush_subnormals(bool on) { g_flush.store(on, std::memory_order_relaxed); }
bool flush_subnormals() { return g_flush.load(std::memory_order_relaxed); }

SubnormalScope::SubnormalScope(bool flush) : saved_(0) {
#ifdef PLEXUS_HAS_MXCSR
  if (!flush) return;
  saved_ = _mm_getcsr();
  const unsigned want = saved_ | kFlushToZero | kDenormalsAreZero;
  if (want == saved_) return;
  _mm_setcsr(want);
  changed_ = true;
#else
  (void)flush;
#endif
}

SubnormalScope::~SubnormalScope() {
#ifdef PLEXUS_HAS_MXCSR
  if (changed_) _mm_setcsr(saved_);
#endif
}

}  // namespace plexus
