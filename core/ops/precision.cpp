#include "ops/precision.h"

#include "ops/cpu/sbgemm.h"
#include "util/error.h"

namespace plexus {
namespace {
thread_local Precision t_precision = Precision::FP32;
}

Precision matmul_precision() { return t_precision; }

const char* precision_name(Precision p) { return p == Precision::BF16 ? "bf16" : "fp32"; }

Precision parse_precision(const std::string& text) {
  if (text == "fp32") return Precision::FP32;
  if (text == "bf16") return Precision::BF16;
  throw ValueError("unknown precision '" + text + "' (expected fp32 or bf16)");
}

Precision precision_on(Device device, Precision requested) {
  return device.is_cpu() && !cpu::cpu_has_bf16_products() ? Precision::FP32 : requested;
}

PrecisionGuard::PrecisionGuard(Precision p) : previous_(t_precision) { t_precision = p; }
PrecisionGuard::~PrecisionGuard() { t_precision = previous_; }

}  // namespace plexus
