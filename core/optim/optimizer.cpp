#include "optim/optimizer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <unordered_set>

#include "autograd/grad_mode.h"
#include "ops/ops.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::optim {
namespace {

constexpr const char* kFormat = "1";

std::string fmt_shape(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(s[i]);
  }
  return out;
}

std::string group_key(size_t g) { return "group" + std::to_string(g); }
std::string param_key(size_t g, size_t i) { return group_key(g) + ".param" + std::to_string(i); }

// Reads metadata entries and remembers which were used, so that leftovers can be reported.
class MetaReader {
 public:
  MetaReader(const std::map<std::string, std::string>& m, std::string kind) : m_(m), kind_(std::move(kind)) {}

  const std::string* find(const std::string& key) {
    const auto it = m_.find(key);
    if (it == m_.end()) return nullptr;
    used_.insert(key);
    return &it->second;
  }
  const std::string& get(const std::string& key) {
    const std::string* v = find(key);
    if (!v) fail("missing metadata entry '" + key + "'");
    return *v;
  }
  double get_double(const std::string& key) {
    const std::string& s = get(key);
    double v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size())
      fail("metadata entry '" + key + "' is not a number: '" + s + "'");
    return v;
  }
  int64_t get_int(const std::string& key) {
    const std::string& s = get(key);
    int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size())
      fail("metadata entry '" + key + "' is not an integer: '" + s + "'");
    return v;
  }
  Shape get_shape(const std::string& key) {
    const std::string& s = get(key);
    Shape shape;
    const char* p = s.data();
    const char* end = s.data() + s.size();
    while (p < end) {
      int64_t d = -1;
      const auto r = std::from_chars(p, end, d);
      if (r.ec != std::errc() || d < 0) fail("metadata entry '" + key + "' is not a shape: '" + s + "'");
      shape.push_back(d);
      p = r.ptr;
      if (p < end && *p++ != ',') fail("metadata entry '" + key + "' is not a shape: '" + s + "'");
    }
    return shape;
  }
  void check_all_used() const {
    for (const auto& [k, v] : m_)
      if (!used_.count(k)) fail("unexpected metadata entry '" + k + "'");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(kind_ + ".load_state_dict: " + what);
  }

 private:
  const std::map<std::string, std::string>& m_;
  std::string kind_;
  std::set<std::string> used_;
};

// "group<g>.param<i>.<name>" -> (g, i, name); false if the name has another form.
bool parse_tensor_name(const std::string& s, size_t& g, size_t& i, std::string& name) {
  auto number = [&](size_t& pos, size_t& out) {
    const auto r = std::from_chars(s.data() + pos, s.data() + s.size(), out);
    if (r.ec != std::errc() || r.ptr == s.data() + pos) return false;
    pos = size_t(r.ptr - s.data());
    return true;
  };
  size_t pos = 0;
  if (s.compare(0, 5, "group") != 0) return false;
  pos = 5;
  if (!number(pos, g)) return false;
  if (s.compare(pos, 6, ".param") != 0) return false;
  pos += 6;
  if (!number(pos, i)) return false;
  if (pos >= s.size() || s[pos] != '.') return false;
  name = s.substr(pos + 1);
  return !name.empty();
}

}  // namespace

// ---- small structs ---------------------------------------------------------------------
double ParamGroup::option(const std::string& name) const {
  const auto it = options.find(name);
  if (it != options.end()) return it->second;
  std::string known;
  for (const auto& [k, v] : options) {
    if (!known.empty()) known += ", ";
    known += k;
  }
  throw ValueError("ParamGroup: no option '" + name + "' (this group has: " + known + ")");
}

const Tensor* OptimizerState::find(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

Tensor* ParamState::find(const std::string& name) {
  for (auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

const Tensor* ParamState::find(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

// ---- construction and groups -----------------------------------------------------------
Optimizer::Optimizer(std::map<std::string, double> defaults) : defaults_(std::move(defaults)) {}

void Optimizer::require(bool ok, const std::string& what) const {
  if (!ok) throw ValueError(kind() + ": " + what);
}

void Optimizer::require_range(const std::string& name, double value, bool ok, const std::string& expected) const {
  if (!ok || std::isnan(value))
    throw ValueError(kind() + ": invalid " + name + " " + shortest_text(value) + " (expected " + expected + ")");
}


void Optimizer::add_param_group(std::vector<Tensor> params, const std::map<std::string, double>& overrides) {
  ParamGroup g;
  g.lr = defaults_.at("lr");
  for (const auto& [k, v] : defaults_)
    if (k != "lr") g.options[k] = v;
  for (const auto& [k, v] : overrides) {
    if (!defaults_.count(k)) {
      std::string known;
      for (const auto& [dk, dv] : defaults_) {
        if (!known.empty()) known += ", ";
        known += dk;
      }
      require(false, "unknown hyper-parameter '" + k + "' (known: " + known + ")");
    }
    if (k == "lr") g.lr = v;
    else g.options[k] = v;
  }
  validate_group(g);

  const std::string where = "parameter group " + std::to_string(groups_.size());
  require(!params.empty(), where + " has no parameters (an optimizer needs at least one)");
  std::unordered_set<const TensorImpl*> seen;
  for (const ParamGroup& other : groups_)
    for (const Tensor& p : other.params) seen.insert(p.unsafe_impl());
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    const std::string what = where + ", parameter " + std::to_string(i);
    require(p.defined(), what + " is an undefined tensor");
    require(p.requires_grad(), what + " (shape " + to_string(p.shape()) +
                                   ") does not require grad; call requires_grad_() or leave it out");
    require(p.is_leaf(), what + " is not a leaf tensor (it has a grad_fn); optimize the leaf it came from");
    require(seen.insert(p.unsafe_impl()).second,
            what + " (shape " + to_string(p.shape()) + ") appears more than once in this optimizer");
  }
  g.params = std::move(params);
  groups_.push_back(std::move(g));
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (const ParamGroup& g : groups_) out.insert(out.end(), g.params.begin(), g.params.end());
  return out;
}

const ParamState* Optimizer::state(const Tensor& param) const {
  if (!param.defined()) return nullptr;
  const auto it = state_.find(param.unsafe_impl());
  return it == state_.end() ? nullptr : &it->second.state;
}

void Optimizer::check_state(const Tensor& param, const ParamState& in) const {
  const std::vector<Tensor> mine = parameters();
  const bool here = param.defined() && std::any_of(mine.begin(), mine.end(), [&](const Tensor& p) {
    return p.unsafe_impl() == param.unsafe_impl();
  });
  require(here, "set_state: the parameter (shape " + (param.defined() ? to_string(param.shape()) : "undefined") +
                    ") is not optimized here");
  const StateSpec spec = state_spec();
  size_t core = 0;
  for (const auto& [name, t] : in.tensors) {
    const bool is_core = std::count(spec.core.begin(), spec.core.end(), name) != 0;
    require(is_core || std::count(spec.optional.begin(), spec.optional.end(), name),
            "set_state: " + kind() + " keeps no state named '" + name + "'");
    if (!t.defined() || t.shape() != param.shape())
      throw ShapeError(kind() + ".set_state: state tensor '" + name + "' has shape " +
                       (t.defined() ? to_string(t.shape()) : "undefined") + ", the parameter " +
                       to_string(param.shape()));
    core += is_core;
  }
  require(core == 0 || core == spec.core.size(), "set_state: only some of the core state (" + kind() + " keeps all of it)");
  require(spec.counts_steps ? (core != 0) == (in.step > 0) : in.step == 0,
          "set_state: step count " + std::to_string(in.step) + " does not fit the state tensors given");
}

void Optimizer::set_state(const Tensor& param, const ParamState& in) {
  check_state(param, in);
  ParamState copy;
  copy.step = in.step;
  for (const auto& [name, t] : in.tensors)
    copy.tensors.emplace_back(name, t.device() == param.device() ? t.clone() : t.to(param.device()));
  if (copy.tensors.empty() && copy.step == 0) state_.erase(param.unsafe_impl());  // as before a first update
  else state_.insert_or_assign(param.unsafe_impl(), Entry{param, std::move(copy)});
}

// ---- stepping ------------------------------------------------------------------------------
void Optimizer::zero_grad() {
  for (const ParamGroup& g : groups_)
    for (const Tensor& p : g.params) p.set_grad(Tensor());
}

void Optimizer::check_step_ready() const {
  std::unordered_set<const TensorImpl*> seen;  // param_groups() may have been edited directly
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const ParamGroup& g = groups_[gi];
    validate_group(g);
    for (size_t i = 0; i < g.params.size(); ++i) {
      const Tensor& p = g.params[i];
      // The message is built only for a failure: this runs every step.
      auto where = [&] { return "group " + std::to_string(gi) + " parameter " + std::to_string(i); };
      if (!p.defined()) require(false, where() + " is undefined");
      if (!seen.insert(p.unsafe_impl()).second) require(false, where() + " appears more than once in this optimizer");
      const Tensor grad = p.grad();
      if (!grad.defined()) continue;
      if (grad.shape() != p.shape())
        throw ShapeError(kind() + ".step: group " + std::to_string(gi) + " parameter " + std::to_string(i) +
                         " has shape " + to_string(p.shape()) + " but its grad has shape " +
                         to_string(grad.shape()));
      if (!(grad.device() == p.device()))
        throw DeviceError(kind() + ".step: group " + std::to_string(gi) + " parameter " + std::to_string(i) +
                          " is on " + p.device().str() + " but its grad is on " + grad.device().str());
    }
  }
}

void Optimizer::run_step() {
  NoGradGuard no_grad;
  for (const ParamGroup& g : groups_) {
    std::vector<Item> items;
    for (const Tensor& p : g.params) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      auto it = state_.find(p.unsafe_impl());
      if (it == state_.end()) it = state_.emplace(p.unsafe_impl(), Entry{p, {}}).first;
      items.push_back({p, std::move(grad), &it->second.state});
    }
    if (!items.empty()) update_group(g, items);
  }
}

void Optimizer::update_group(const ParamGroup& group, const std::vector<Item>& items) {
  for (const Item& i : items) update(group, i.param, i.grad, *i.state);
}

void Optimizer::step() {
  check_step_ready();
  run_step();
}

// ---- helpers for the rules ---------------------------------------------------------------
Tensor Optimizer::effective_grad(const Tensor& grad, const Tensor& param, double weight_decay, bool maximize,
                                 bool* owned) {
  if (owned) *owned = weight_decay != 0 || maximize;
  if (weight_decay != 0) {
    Tensor d = mul(param, float(weight_decay));  // wd * param + (+-grad): two passes, one temporary
    d.add_(grad, maximize ? -1.f : 1.f);
    return d;
  }
  return maximize ? neg(grad) : grad;
}

void Optimizer::add_scalar_(Tensor& t, float s) { t.add_(scalar(s, t.device())); }

void Optimizer::fused_update(const Tensor& param, std::initializer_list<Tensor> state,
                             const std::function<void(float*)>& kernel) {
  if (param.is_contiguous()) {
    kernel(param.data());
    ++param.storage()->version;
  } else {
    Tensor p = param.contiguous();
    kernel(p.data());
    Tensor(param).copy_(p);
  }
  for (const Tensor& t : state)
    if (t.defined()) ++t.storage()->version;
}

// ---- checkpoints -------------------------------------------------------------------------
OptimizerState Optimizer::state_dict() const {
  OptimizerState out;
  const StateSpec spec = state_spec();
  out.metadata["optimizer"] = kind();
  out.metadata["format"] = kFormat;
  out.metadata["groups"] = std::to_string(groups_.size());
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const ParamGroup& g = groups_[gi];
    const std::string gk = group_key(gi);
    out.metadata[gk + ".params"] = std::to_string(g.params.size());
    out.metadata[gk + ".lr"] = shortest_text(g.lr);
    if (g.initial_lr) out.metadata[gk + ".initial_lr"] = shortest_text(*g.initial_lr);
    for (const auto& [k, v] : g.options) out.metadata[gk + "." + k] = shortest_text(v);
    for (size_t i = 0; i < g.params.size(); ++i) {
      const std::string pk = param_key(gi, i);
      out.metadata[pk + ".shape"] = fmt_shape(g.params[i].shape());
      const auto it = state_.find(g.params[i].unsafe_impl());
      if (it == state_.end()) continue;
      const ParamState& st = it->second.state;
      if (spec.counts_steps && st.step > 0) out.metadata[pk + ".step"] = std::to_string(st.step);
      for (const auto& [name, t] : st.tensors) out.tensors.emplace_back(pk + "." + name, t.clone());
    }
  }
  return out;
}

Optimizer::PendingLoad Optimizer::prepare_load(const OptimizerState& in) const {
  MetaReader meta(in.metadata, kind());
  const StateSpec spec = state_spec();

  const std::string& got_kind = meta.get("optimizer");
  if (got_kind != kind()) meta.fail("the checkpoint is of a " + got_kind + " optimizer, this is " + kind());
  const std::string& format = meta.get("format");
  if (format != kFormat) meta.fail("unsupported checkpoint format '" + format + "' (expected " + kFormat + ")");
  const int64_t ngroups = meta.get_int("groups");
  if (ngroups != int64_t(groups_.size()))
    meta.fail("the checkpoint has " + std::to_string(ngroups) + " parameter groups, this optimizer has " +
              std::to_string(groups_.size()));

  PendingLoad pending;
  std::vector<std::vector<ParamState>> states(groups_.size());
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const ParamGroup& live = groups_[gi];
    const std::string gk = group_key(gi);
    const int64_t nparams = meta.get_int(gk + ".params");
    if (nparams != int64_t(live.params.size()))
      meta.fail("group " + std::to_string(gi) + " has " + std::to_string(nparams) +
                " parameters in the checkpoint, " + std::to_string(live.params.size()) + " in this optimizer");
    ParamGroup g;
    g.params = live.params;
    g.lr = meta.get_double(gk + ".lr");
    if (meta.find(gk + ".initial_lr")) g.initial_lr = meta.get_double(gk + ".initial_lr");
    for (const auto& [k, v] : defaults_)
      if (k != "lr") g.options[k] = meta.get_double(gk + "." + k);
    try {
      validate_group(g);
    } catch (const ValueError& e) {
      meta.fail("group " + std::to_string(gi) + ": " + e.what());
    }
    states[gi].resize(g.params.size());
    for (size_t i = 0; i < g.params.size(); ++i) {
      const std::string pk = param_key(gi, i);
      const Shape saved = meta.get_shape(pk + ".shape");
      if (saved != g.params[i].shape())
        throw ShapeError(kind() + ".load_state_dict: group " + std::to_string(gi) + " parameter " +
                         std::to_string(i) + ": expected shape " + to_string(g.params[i].shape()) +
                         " (this optimizer's parameter), got " + to_string(saved) + " in the checkpoint");
      if (meta.find(pk + ".step")) {
        if (!spec.counts_steps)
          meta.fail("unexpected metadata entry '" + pk + ".step' (" + kind() + " counts no steps)");
        const int64_t step = meta.get_int(pk + ".step");
        if (step < 1) meta.fail("metadata entry '" + pk + ".step' must be >= 1, got " + std::to_string(step));
        states[gi][i].step = step;
      }
    }
    pending.groups.push_back(std::move(g));
  }
  meta.check_all_used();

  // State tensors: known names, right shapes, no duplicates.
  for (const auto& [full, t] : in.tensors) {
    size_t gi = 0, i = 0;
    std::string name;
    if (!parse_tensor_name(full, gi, i, name))
      meta.fail("state tensor '" + full + "' is not named group<g>.param<i>.<name>");
    if (gi >= groups_.size() || i >= groups_[gi].params.size())
      meta.fail("state tensor '" + full + "' refers to a parameter this optimizer does not have");
    const bool known = std::count(spec.core.begin(), spec.core.end(), name) ||
                       std::count(spec.optional.begin(), spec.optional.end(), name);
    if (!known) meta.fail("state tensor '" + full + "': " + kind() + " keeps no state named '" + name + "'");
    if (!t.defined()) meta.fail("state tensor '" + full + "' is undefined");
    const Tensor& p = groups_[gi].params[i];
    if (t.shape() != p.shape())
      throw ShapeError(kind() + ".load_state_dict: state tensor '" + full + "': expected shape " +
                       to_string(p.shape()) + " (the shape of group " + std::to_string(gi) + " parameter " +
                       std::to_string(i) + "), got " + to_string(t.shape()));
    ParamState& st = states[gi][i];
    if (st.find(name)) meta.fail("state tensor '" + full + "' appears twice");
    st.tensors.emplace_back(name, t);  // cloned below, once everything is known to be valid
  }

  // Completeness: core tensors exist exactly when the parameter has been updated.
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    for (size_t i = 0; i < groups_[gi].params.size(); ++i) {
      ParamState& st = states[gi][i];
      size_t core = 0;
      for (const std::string& c : spec.core) core += st.find(c) != nullptr;
      const std::string pk = param_key(gi, i);
      if (core != 0 && core != spec.core.size())
        meta.fail("parameter " + pk + " has only some of its state (" + kind() + " keeps all of its core state)");
      if (spec.counts_steps && (core != 0) != (st.step > 0))
        meta.fail("parameter " + pk + (st.step > 0 ? " has a step count but no state tensors"
                                                   : " has state tensors but no step count"));
      if (st.tensors.empty() && st.step == 0) continue;
      const Tensor& p = groups_[gi].params[i];
      for (auto& [n, t] : st.tensors) t = t.device() == p.device() ? t.clone() : t.to(p.device());
      pending.state.emplace(p.unsafe_impl(), Entry{p, std::move(st)});
    }
  }
  return pending;
}

void Optimizer::commit_load(PendingLoad&& pending) noexcept {
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    groups_[gi].lr = pending.groups[gi].lr;
    groups_[gi].initial_lr = pending.groups[gi].initial_lr;
    groups_[gi].options.swap(pending.groups[gi].options);
  }
  state_.swap(pending.state);
}

void Optimizer::load_state_dict(const OptimizerState& state) { commit_load(prepare_load(state)); }

}  // namespace plexus::optim
