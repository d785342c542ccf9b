#include "optim/optimizer_set.h"

#include <charconv>
#include <string>
#include <unordered_map>

#include "util/error.h"

namespace plexus::optim {

OptimizerSet::OptimizerSet(std::vector<std::shared_ptr<Optimizer>> optimizers) {
  for (auto& o : optimizers) add(std::move(o));
}

void OptimizerSet::check_disjoint(const std::vector<std::shared_ptr<Optimizer>>& members) const {
  struct Where {
    size_t member, group, index;
  };
  std::unordered_map<const TensorImpl*, Where> owner;
  for (size_t k = 0; k < members.size(); ++k) {
    const auto& groups = members[k]->param_groups();
    for (size_t g = 0; g < groups.size(); ++g) {
      for (size_t i = 0; i < groups[g].params.size(); ++i) {
        const Tensor& p = groups[g].params[i];
        const auto [it, fresh] = owner.emplace(p.unsafe_impl(), Where{k, g, i});
        if (!fresh && it->second.member != k) {
          const Where& w = it->second;
          throw ValueError("OptimizerSet: a parameter (shape " + to_string(p.shape()) + ") is optimized by both " +
                           "optimizer " + std::to_string(w.member) + " (" + members[w.member]->kind() + ", group " +
                           std::to_string(w.group) + " parameter " + std::to_string(w.index) + ") and optimizer " +
                           std::to_string(k) + " (" + members[k]->kind() + ", group " + std::to_string(g) +
                           " parameter " + std::to_string(i) + "); their parameter sets must be disjoint");
        }
      }
    }
  }
}

void OptimizerSet::add(std::shared_ptr<Optimizer> optimizer) {
  if (!optimizer) throw ValueError("OptimizerSet: null optimizer");
  for (const auto& m : members_)
    if (m == optimizer) throw ValueError("OptimizerSet: this " + optimizer->kind() + " optimizer is already a member");
  auto next = members_;
  next.push_back(std::move(optimizer));
  check_disjoint(next);
  members_ = std::move(next);
}

void OptimizerSet::zero_grad() {
  for (const auto& m : members_) m->zero_grad();
}

void OptimizerSet::step() {
  check_disjoint(members_);
  for (const auto& m : members_) m->check_step_ready();
  for (const auto& m : members_) m->step();
}

OptimizerState OptimizerSet::state_dict() const {
  OptimizerState out;
  out.metadata["optimizers"] = std::to_string(members_.size());
  for (size_t k = 0; k < members_.size(); ++k) {
    const std::string prefix = "opt" + std::to_string(k) + ".";
    OptimizerState s = members_[k]->state_dict();
    for (auto& [name, t] : s.tensors) out.tensors.emplace_back(prefix + name, std::move(t));
    for (auto& [key, v] : s.metadata) out.metadata[prefix + key] = std::move(v);
  }
  return out;
}

void OptimizerSet::load_state_dict(const OptimizerState& state) {
  const auto count = state.metadata.find("optimizers");
  if (count == state.metadata.end() || count->second != std::to_string(members_.size()))
    throw ValueError("OptimizerSet.load_state_dict: the checkpoint holds " +
                     (count == state.metadata.end() ? std::string("no 'optimizers' entry")
                                                    : count->second + " optimizers") +
                     ", this set has " + std::to_string(members_.size()));
  // Split the entries by their "opt<k>." prefix.
  std::vector<OptimizerState> parts(members_.size());
  auto member_of = [&](const std::string& name, std::string& rest) -> size_t {
    size_t k = 0;
    const char* end = name.data() + name.size();
    const bool prefixed = name.compare(0, 3, "opt") == 0;
    const char* b = prefixed ? name.data() + 3 : end;
    const auto r = std::from_chars(b, end, k);
    if (!prefixed || r.ec != std::errc() || r.ptr == end || *r.ptr != '.' || k >= members_.size())
      throw ValueError("OptimizerSet.load_state_dict: unexpected entry '" + name + "' (expected opt<k>.<name>)");
    rest = std::string(r.ptr + 1);
    return k;
  };
  for (const auto& [name, t] : state.tensors) {
    std::string rest;
    const size_t k = member_of(name, rest);
    parts[k].tensors.emplace_back(rest, t);
  }
  for (const auto& [key, v] : state.metadata) {
    if (key == "optimizers") continue;
    std::string rest;
    const size_t k = member_of(key, rest);
    parts[k].metadata[rest] = v;
  }
  std::vector<Optimizer::PendingLoad> pending;
  for (size_t k = 0; k < members_.size(); ++k) {
    try {
      pending.push_back(members_[k]->prepare_load(parts[k]));
    } catch (const ShapeError& e) {
      throw ShapeError("OptimizerSet.load_state_dict: optimizer " + std::to_string(k) + ": " + e.what());
    } catch (const ValueError& e) {
      throw ValueError("OptimizerSet.load_state_dict: optimizer " + std::to_string(k) + ": " + e.what());
    }
  }
  for (size_t k = 0; k < members_.size(); ++k) members_[k]->commit_load(std::move(pending[k]));
}

}  // namespace plexus::optim
