#pragma once
#include <initializer_list>

#include "nn/module.h"

namespace plexus::nn {

// Runs its children in order; children are named "0", "1", ... unless named explicitly.
class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<ModulePtr> modules);
  Sequential& add(ModulePtr m);
  Sequential& add(std::string name, ModulePtr m);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Sequential"; }
  size_t size() const { return children().size(); }
  const ModulePtr& operator[](size_t i) const { return children().at(i).second; }
};

}  // namespace plexus::nn
