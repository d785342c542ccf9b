// Whether the CPU backend multiplies in bfloat16 (sbgemm.h). Compiled without AVX-512, so the
// check itself runs anywhere.
#include "ops/cpu/sbgemm.h"

#if defined(PLEXUS_HAVE_AMX_BF16)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <cstdlib>
#include <cstring>

#include "ops/cpu/sgemm.h"
#include "ops/precision.h"
#include "util/error.h"

namespace plexus::cpu {

bool cpu_has_bf16_products() {
#if defined(PLEXUS_HAVE_AVX512_BF16_SBGEMM)
  static const bool hardware = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw");
  if (!hardware || !own_sgemm_enabled()) return false;
  const char* choice = std::getenv("PLEXUS_CPU_BF16");
  return !(choice && std::strcmp(choice, "off") == 0);
#else
  return false;
#endif
}

bool cpu_has_amx_bf16() {
#if defined(PLEXUS_HAVE_AMX_BF16)
  // Linux keeps the tiles' 8 KiB of state off until a process asks for it (arch_prctl,
  // ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); a tile instruction before that is a SIGILL.
  // The permission is the whole process's, its threads' too, so one request at first use serves all.
  static const bool granted = [] {
    // CPUID leaf 7: EDX bit 22 AMX-BF16, bit 24 AMX-TILE (GCC 12's __builtin_cpu_supports
    // answers false for them here, and Clang 14's knows neither name).
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(edx & (1u << 22)) || !(edx & (1u << 24))) return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  if (!granted || !cpu_has_bf16_products()) return false;
  const char* choice = std::getenv("PLEXUS_CPU_AMX");
  return !(choice && std::strcmp(choice, "off") == 0);
#else
  return false;
#endif
}

const char* bf16_kernel() { return cpu_has_amx_bf16() ? "AMX" : cpu_has_bf16_products() ? "AVX512_BF16" : ""; }

bool bf16_products() { return matmul_precision() == Precision::BF16 && cpu_has_bf16_products(); }

#if !defined(PLEXUS_HAVE_AVX512_BF16_SBGEMM)
// Built without the AVX512_BF16 file: never enabled, so never called; defined so that callers
// link on every platform.
void own_sbgemm(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float,
                float*, int64_t, float*) {
  throw Error("own_sbgemm: this build has no AVX512_BF16 matrix product");
}
void conv_forward_image_bf16(float*, const float*, const float*, int64_t, const ConvShape&, const float*, bool,
                             float*) {
  throw Error("conv_forward_image_bf16: this build has no AVX512_BF16 matrix product");
}
void conv_weight_grad_image_bf16(float*, const float*, const float*, int64_t, const ConvShape&, float*, bool) {
  throw Error("conv_weight_grad_image_bf16: this build has no AVX512_BF16 matrix product");
}
#endif

}  // namespace plexus::cpu
