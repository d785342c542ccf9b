#pragma once
// Convolutions through cuDNN, for the CUDA backend (backend.cu), in builds that found it
// (PLEXUS_CUDNN, core/CMakeLists.txt). FP32 arithmetic with FMA math only (no TF32, like our
// cuBLAS products), deterministic algorithms only (the same seed, the same run). The best
// algorithm of a shape is measured once (cudnnFind, as PyTorch's cudnn.benchmark) and cached;
// it may compute in a transformed domain (FFT, Winograd), whose rounding error is relative to
// a plane's largest value rather than to each element (test_cuda allows for it);
// inside a CUDA graph capture, where nothing may wait for the device, a shape not measured
// yet takes cuDNN's heuristic choice. Each returns false when it does not handle the problem
// (no cuDNN in the build or at run time, PLEXUS_CUDNN=0 in the environment, bf16
// precision, sizes beyond int): the caller runs its own lowering then. Host code only.
#include "ops/backend.h"

namespace plexus::cuda {

bool cudnn_conv_forward(int device, float* out, const float* x, const float* weight, const Backend::ConvProblem& p);
// Adds into grad_x and grad_weight (each may be null), as Backend::conv2d_backward.
bool cudnn_conv_backward(int device, float* grad_x, float* grad_weight, const float* grad_out, const float* x,
                         const float* weight, const Backend::ConvProblem& p);

}  // namespace plexus::cuda
