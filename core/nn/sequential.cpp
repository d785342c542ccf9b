#include "nn/sequential.h"

namespace plexus::nn {

Sequential::Sequential(std::initializer_list<ModulePtr> modules) {
  for (const ModulePtr& m : modules) add(m);
}

Sequential& Sequential::add(ModulePtr m) { return add(std::to_string(children().size()), std::move(m)); }

Sequential& Sequential::add(std::string name, ModulePtr m) {
  add_child(std::move(name), std::move(m));
  return *this;
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  for (const auto& [_, m] : children()) h = m->forward(h);
  return h;
}

}  // namespace plexus::nn
