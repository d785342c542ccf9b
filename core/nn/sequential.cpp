#include "nn/sequential.h"

#include "nn/conv.h"

namespace plexus::nn {

Sequential::Sequential(std::initializer_list<ModulePtr> modules) {
  for (const ModulePtr& m : modules) add(m);
}

Sequential& Sequential::add(ModulePtr m) { return add(std::to_string(children().size()), std::move(m)); }

Sequential& Sequential::add(std::string name, ModulePtr m) {
  add_child(std::move(name), std::move(m));
  return *this;
}

// A Conv2d followed by a ReLU and / or a 2x2 max pooling runs as one fused op: inside a
// Sequential nothing else sees the convolution's output.
Tensor Sequential::forward(const Tensor& x) {
  const auto& mods = children();
  Tensor h = x;
  auto at = [&mods](size_t i) -> Module* { return i < mods.size() ? mods[i].second.get() : nullptr; };
  for (size_t i = 0; i < mods.size(); ++i) {
    if (Conv2d* conv = fusable_conv(at(i))) {
      const bool relu = fuses_as_relu(at(i + 1));
      const bool pool = fuses_as_max_pool(at(i + 1 + relu));
      if (relu || pool) {
        h = conv->forward_fused(h, relu, pool);
        i += size_t(relu) + size_t(pool);
        continue;
      }
    }
    h = mods[i].second->forward(h);
  }
  return h;
}

}  // namespace plexus::nn
