#pragma once
// The public C++ API of the Plexus core in one include.
#include "autograd/gradcheck.h"
#include "autograd/grad_mode.h"
#include "io/atomic_file.h"
#include "io/safetensors.h"
#include "nn/layers.h"
#include "ops/ops.h"
#include "tensor/allocator.h"
#include "tensor/tensor.h"
#include "train/metrics.h"
#include "util/error.h"
#include "util/threads.h"
