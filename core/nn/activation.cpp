#include "nn/activation.h"

#include "util/error.h"

namespace plexus::nn {

Dropout::Dropout(float p, Generator* gen) : p_(p), gen_(gen) {
  if (!(p >= 0.f && p <= 1.f)) throw ValueError("Dropout: p must be in [0, 1], got " + std::to_string(p));
}

}  // namespace plexus::nn
