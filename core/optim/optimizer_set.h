#pragma once
// Several optimizers stepping together in one round, over disjoint parameter sets, each
// with its own method (e.g. SGD for one layer, Adam for another):
//
//   OptimizerSet opts;
//   auto& sgd = opts.emplace<SGD>(encoder_params, SGDOptions{.lr = 0.1});
//   auto& adam = opts.emplace<Adam>(head_params, AdamOptions{.lr = 1e-3});
//   opts.zero_grad(); loss.backward(); opts.step();
//
// Adding an optimizer that shares a parameter with a member is a ValueError, and step()
// checks again (groups may have been added since) before any member changes anything.
#include <memory>
#include <utility>
#include <vector>

#include "optim/optimizer.h"

namespace plexus::optim {

class OptimizerSet {
 public:
  OptimizerSet() = default;
  explicit OptimizerSet(std::vector<std::shared_ptr<Optimizer>> optimizers);

  void add(std::shared_ptr<Optimizer> optimizer);
  template <class O, class... Args>
  O& emplace(Args&&... args) {
    auto o = std::make_shared<O>(std::forward<Args>(args)...);
    add(o);
    return *o;
  }

  size_t size() const { return members_.size(); }
  Optimizer& operator[](size_t i) const { return *members_.at(i); }

  void zero_grad();
  // Validates every member (disjointness, hyper-parameters, gradient shapes), then steps
  // each in order.
  void step();

  // Member k's entries are prefixed "opt<k>." ("opt1.group0.param2.exp_avg", "opt1.optimizer");
  // "optimizers" holds the count. Loading validates every member before changing any.
  OptimizerState state_dict() const;
  void load_state_dict(const OptimizerState& state);

 private:
  void check_disjoint(const std::vector<std::shared_ptr<Optimizer>>& members) const;
  std::vector<std::shared_ptr<Optimizer>> members_;
};

}  // namespace plexus::optim
