#pragma once
// What a fusion of modules into one op may stand in for (nn/conv.h, nn/linear_activation.h).
#include <typeinfo>

#include "nn/module.h"

namespace plexus::nn {

// True when m is an M itself, not a subclass, whose forward may differ.
template <class M>
bool is_exactly(const Module* m) {
  return m && typeid(*m) == typeid(M);
}

}  // namespace plexus::nn
