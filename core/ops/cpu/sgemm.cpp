// Which matrix product the CPU backend runs: ours (sgemm_avx512.cpp) where the CPU has
// AVX-512, the AVX2 one (sgemm_avx2.cpp) where it has AVX2 and FMA, else OpenBLAS. Compiled
// without either, so the checks themselves run anywhere.
#include "ops/cpu/sgemm.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/error.h"
#include "util/out_of_memory.h"

namespace plexus::cpu {

bool own_sgemm_enabled() {
#if defined(PLEXUS_HAVE_X86_SGEMM)
  static const bool enabled = [] {
    const char* choice = std::getenv("PLEXUS_GEMM");
    if (choice && std::strcmp(choice, "openblas") == 0) return false;
    // Valgrind's virtual CPU reports no AVX-512, so it gets OpenBLAS too.
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  }();
  return enabled;
#else
  return false;
#endif
}

bool avx2_sgemm_enabled() {
#if defined(PLEXUS_HAVE_X86_SGEMM)
  static const bool enabled = [] {
    const char* choice = std::getenv("PLEXUS_GEMM");
    if (choice && std::strcmp(choice, "openblas") == 0) return false;
    return !own_sgemm_enabled() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return enabled;
#else
  return false;
#endif
}

const char* product_kernel() {
  return own_sgemm_enabled() ? "AVX-512 kernel" : avx2_sgemm_enabled() ? "AVX2 kernel" : "OpenBLAS";
}

#if !defined(PLEXUS_HAVE_X86_SGEMM)
// Built without the x86 kernel files (not x86-64, or another compiler): never enabled, so never
// called; defined so that callers link on every platform.
void own_sgemm(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float,
               float*, int64_t, float*) {
  throw Error("own_sgemm: this build has no AVX-512 matrix product");
}
void own_sgemm_pack_a(float*, bool, const float*, int64_t, int64_t, int64_t) {
  throw Error("own_sgemm_pack_a: this build has no AVX-512 matrix product");
}
void own_sgemm_packed(bool, int64_t, int64_t, int64_t, float, const float*, const float*, int64_t, float, float*,
                      int64_t, float*) {
  throw Error("own_sgemm_packed: this build has no AVX-512 matrix product");
}
void avx2_sgemm(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float,
                float*, int64_t, float*) {
  throw Error("avx2_sgemm: this build has no AVX2 matrix product");
}
#endif

namespace {

// `buffer`, grown to hold `floats` from a 64-byte boundary on, at that boundary.
float* aligned_at_least(std::vector<float>& buffer, int64_t floats, const char* what) {
  grow_scratch(buffer, size_t(floats + 16), what);  // + room to align
  const auto address = reinterpret_cast<std::uintptr_t>(buffer.data());
  return buffer.data() + ((64 - address % 64) % 64) / sizeof(float);
}

}  // namespace

float* own_sgemm_thread_packed_a(int64_t floats) {
  thread_local std::vector<float> buffer;
  return aligned_at_least(buffer, floats, "a matrix product's packed operand");
}

int64_t own_sgemm_packed_a_floats(int64_t m, int64_t k) {
  return (m + kOwnSgemmTileRows - 1) / kOwnSgemmTileRows * kOwnSgemmTileRows * k + 16;  // + pack_a's spill
}

const float* own_sgemm_thread_packed_whole_a(uint64_t product, bool ta, const float* a, int64_t lda, int64_t m,
                                             int64_t k) {
  thread_local std::vector<float> buffer;
  thread_local uint64_t packed_for = 0;
  float* packed = aligned_at_least(buffer, own_sgemm_packed_a_floats(m, k), "a matrix product's packed operand");
  if (packed_for != product) {
    own_sgemm_pack_a(packed, ta, a, lda, m, k);
    packed_for = product;
  }
  return packed;
}

float* avx2_sgemm_thread_workspace() {
  thread_local std::vector<float> buffer;
  return aligned_at_least(buffer, kAvx2SgemmWorkspace, "a matrix product's workspace");
}

float* own_sgemm_thread_workspace() {
  thread_local std::vector<float> buffer;
  return aligned_at_least(buffer, kOwnSgemmWorkspace, "a matrix product's workspace");
}

}  // namespace plexus::cpu
