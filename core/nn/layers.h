#pragma once
// Every built-in layer.
#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/conv.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/normalization.h"
#include "nn/positional_embedding.h"
#include "nn/recurrent.h"
#include "nn/resample.h"
#include "nn/sequential.h"
