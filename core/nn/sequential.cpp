#include "nn/sequential.h"

#include <typeinfo>

#include "nn/activation.h"
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

namespace {

template <class M>
M* exactly(const std::vector<std::pair<std::string, ModulePtr>>& mods, size_t i) {  // not a subclass
  if (i >= mods.size()) return nullptr;
  Module* m = mods[i].second.get();
  return typeid(*m) == typeid(M) ? static_cast<M*>(m) : nullptr;
}

bool is_2x2_max_pool(const MaxPool2d* p) {
  if (!p) return false;
  const Pool2dOptions& o = p->options();
  return o.kernel_h == 2 && o.kernel_w == 2 && (o.stride_h == 0 || o.stride_h == 2) &&
         (o.stride_w == 0 || o.stride_w == 2) && o.pad_h == 0 && o.pad_w == 0;
}

}  // namespace

// A Conv2d followed by a ReLU and / or a 2x2 max pooling runs as one fused op: inside a
// Sequential nothing else sees the convolution's output.
Tensor Sequential::forward(const Tensor& x) {
  const auto& mods = children();
  Tensor h = x;
  for (size_t i = 0; i < mods.size(); ++i) {
    if (Conv2d* conv = exactly<Conv2d>(mods, i)) {
      const bool relu = exactly<ReLU>(mods, i + 1) != nullptr;
      const bool pool = is_2x2_max_pool(exactly<MaxPool2d>(mods, i + 1 + relu));
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
