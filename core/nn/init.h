#pragma once
// Parameter initialisation, in place and seeded (nullptr = the default generator).
// Defaults follow PyTorch so that models train the same way.
#include "tensor/tensor.h"

namespace plexus::nn::init {

// fan_in / fan_out of a weight: [out, in] or [out, in/groups, kh, kw].
int64_t fan_in(const Tensor& w);
int64_t fan_out(const Tensor& w);

void uniform_(Tensor& t, float lo, float hi, Generator* gen = nullptr);
void normal_(Tensor& t, float mean, float std, Generator* gen = nullptr);
void constant_(Tensor& t, float value);
// U(-b, b) with b = gain * sqrt(3 / fan_in), gain = sqrt(2 / (1 + a^2)); PyTorch's Linear
// and Conv2d use a = sqrt(5), i.e. b = 1 / sqrt(fan_in).
void kaiming_uniform_(Tensor& t, float a = 0.f, Generator* gen = nullptr);
void kaiming_normal_(Tensor& t, float a = 0.f, Generator* gen = nullptr);
void xavier_uniform_(Tensor& t, float gain = 1.f, Generator* gen = nullptr);

}  // namespace plexus::nn::init
