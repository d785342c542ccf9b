#pragma once
// The arithmetic of matrix products and convolutions on a CUDA device, chosen per thread for
// a scope (a training run sets it on its thread). FP32 by default. BF16 is mixed precision:
// the products' operands are rounded to bfloat16 and multiplied on the tensor cores with FP32
// accumulation, while weights, activations, gradients and the optimizer's state stay FP32 (the
// "master weights"), as PyTorch's autocast does for matmul and conv. A CPU with AVX512_BF16
// does the same with our own kernels (ops/cpu/sbgemm.h, vdpbf16ps); any other CPU computes in
// FP32.
#include <string>

#include "tensor/device.h"

namespace plexus {

enum class Precision { FP32, BF16 };

Precision matmul_precision();  // the calling thread's
const char* precision_name(Precision p);  // "fp32", "bf16"
Precision parse_precision(const std::string& text);  // ValueError naming the choices

// The precision a run asking for `requested` computes in on `device`: FP32 on a CPU without
// AVX512_BF16 (or with PLEXUS_CPU_BF16=off), else `requested`.
Precision precision_on(Device device, Precision requested);

// Sets the calling thread's precision until the guard goes out of scope.
class PrecisionGuard {
 public:
  explicit PrecisionGuard(Precision p);
  ~PrecisionGuard();
  PrecisionGuard(const PrecisionGuard&) = delete;
  PrecisionGuard& operator=(const PrecisionGuard&) = delete;

 private:
  Precision previous_;
};

}  // namespace plexus
