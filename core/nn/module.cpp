#include "nn/module.h"

#include <algorithm>
#include <sstream>

#include "autograd/grad_mode.h"
#include "util/error.h"

namespace plexus::nn {

void Module::check_name(const std::string& name) const {
  if (name.empty() || name.find('.') != std::string::npos)
    throw ValueError(type_name() + ": invalid member name '" + name + "' (non-empty, no dots)");
  auto taken = [&](const auto& list) {
    for (const auto& [n, _] : list)
      if (n == name) return true;
    return false;
  };
  if (taken(params_) || taken(buffers_) || taken(children_))
    throw ValueError(type_name() + ": the name '" + name + "' is already registered");
}

Tensor Module::register_parameter(std::string name, Tensor t) {
  check_name(name);
  if (!t.is_leaf()) t = t.detach();
  t.requires_grad_(true);
  params_.emplace_back(std::move(name), t);
  return t;
}

Tensor Module::register_buffer(std::string name, Tensor t) {
  check_name(name);
  buffers_.emplace_back(std::move(name), t);
  return t;
}

void Module::add_child(std::string name, std::shared_ptr<Module> m) {
  check_name(name);
  if (!m) throw ValueError(type_name() + ": submodule '" + name + "' is null");
  children_.emplace_back(std::move(name), std::move(m));
}

void Module::collect(const std::string& prefix, bool params, NamedTensors& out) const {
  for (const auto& [n, t] : params ? params_ : buffers_) out.emplace_back(prefix + n, t);
  for (const auto& [n, c] : children_) c->collect(prefix + n + ".", params, out);
}

NamedTensors Module::named_parameters() const {
  NamedTensors out;
  collect("", true, out);
  return out;
}

NamedTensors Module::named_buffers() const {
  NamedTensors out;
  collect("", false, out);
  return out;
}

NamedTensors Module::state() const {
  NamedTensors out = named_parameters();
  for (auto& b : named_buffers()) out.push_back(std::move(b));
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_parameters()) out.push_back(t);
  return out;
}

std::vector<Tensor> Module::buffers() const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_buffers()) out.push_back(t);
  return out;
}

void Module::set_carry_state(bool on) {
  on_carry_state(on);
  for (auto& [_, c] : children_) c->set_carry_state(on);
}

void Module::reset_state() {
  on_reset_state();
  for (auto& [_, c] : children_) c->reset_state();
}

NamedTensors Module::carried_state() const {
  NamedTensors out;
  collect_carried("", out);
  return out;
}

void Module::collect_carried(const std::string& prefix, NamedTensors& out) const {
  NamedTensors own;
  own_carried_state(own);
  for (auto& [name, t] : own) out.emplace_back(prefix + name, t);
  for (const auto& [name, child] : children_) child->collect_carried(prefix + name + ".", out);
}

void Module::load_carried_state(const NamedTensors& state) {
  NamedTensors own;
  for (const auto& [name, t] : state) {
    const size_t dot = name.find('.');
    const std::string head = name.substr(0, dot);
    const auto child = std::find_if(children_.begin(), children_.end(), [&](const auto& c) { return c.first == head; });
    if (dot != std::string::npos && child != children_.end()) continue;  // the child's, below
    own.emplace_back(name, t);
  }
  load_own_carried_state(own);
  for (auto& [child_name, child] : children_) {
    NamedTensors mine;
    const std::string prefix = child_name + ".";
    for (const auto& [name, t] : state)
      if (name.rfind(prefix, 0) == 0) mine.emplace_back(name.substr(prefix.size()), t);
    if (!mine.empty()) child->load_carried_state(mine);
  }
}

void Module::load_own_carried_state(const NamedTensors& state) {
  if (!state.empty())
    throw ValueError(type_name() + " carries no state, yet the checkpoint has '" + state.front().first + "' for it");
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

int64_t Module::num_trainable_parameters() const {
  int64_t n = 0;
  for (const Tensor& p : parameters())
    if (p.requires_grad()) n += p.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on && !frozen_;
  for (auto& [_, c] : children_) c->train(on);
}

void Module::freeze() {
  frozen_ = true;
  training_ = false;
  for (auto& [_, p] : params_) {
    p.set_grad(Tensor());
    p.requires_grad_(false);
  }
  for (auto& [_, c] : children_) c->freeze();
}

void Module::zero_grad() {
  for (const Tensor& p : parameters()) p.set_grad(Tensor());
}

Device Module::device() const {
  const auto params = parameters();
  return params.empty() ? Device::cpu() : params.front().device();
}

void Module::to(Device device) {
  for (const auto& [name, t] : state()) {
    if (t.device() == device) continue;
    const Tensor moved = t.to(device);
    TensorImpl* impl = t.unsafe_impl();
    impl->storage = moved.storage();
    impl->strides = moved.strides();
    impl->offset = moved.offset();
    impl->grad.reset();
  }
}

std::string Module::str() const {
  std::ostringstream os;
  os << type_name() << '(' << extra_repr();
  if (!children_.empty()) {
    os << '\n';
    for (const auto& [n, c] : children_) {
      std::string child = c->str(), indented;
      for (char ch : child) indented += ch == '\n' ? std::string("\n  ") : std::string(1, ch);
      os << "  (" << n << "): " << indented << '\n';
    }
  }
  os << ')';
  return os.str();
}

}  // namespace plexus::nn
