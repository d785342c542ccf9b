#include "nn/activation.h"

#include "util/error.h"

namespace plexus::nn {

PReLU::PReLU(int64_t num_parameters, float init) {
  if (num_parameters < 1)
    throw ValueError("PReLU: num_parameters must be positive, got " + std::to_string(num_parameters));
  weight = register_parameter("weight", full({num_parameters}, init));
}

Dropout::Dropout(float p, Generator* gen) : p_(p), gen_(gen) {
  if (!(p >= 0.f && p <= 1.f)) throw ValueError("Dropout: p must be in [0, 1], got " + std::to_string(p));
}

Dropout2d::Dropout2d(float p, Generator* gen) : p_(p), gen_(gen) {
  if (!(p >= 0.f && p <= 1.f)) throw ValueError("Dropout2d: p must be in [0, 1], got " + std::to_string(p));
}

}  // namespace plexus::nn
