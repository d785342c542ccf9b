// Whether the CPU backend multiplies in bfloat16 (sbgemm.h). Compiled without AVX-512, so the
// check itself runs anywhere.
#include "ops/cpu/sbgemm.h"

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

bool bf16_products() { return matmul_precision() == Precision::BF16 && cpu_has_bf16_products(); }

#if !defined(PLEXUS_HAVE_AVX512_BF16_SBGEMM)
// Built without the AVX512_BF16 file: never enabled, so never called; defined so that callers
// link on every platform.
void own_sbgemm(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float,
                float*, int64_t, float*) {
  throw Error("own_sbgemm: this build has no AVX512_BF16 matrix product");
}
#endif

}  // namespace plexus::cpu
