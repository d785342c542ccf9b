#pragma once
// Optimizer: the base of every update rule in plexus::optim (SGD, Adam/AdamW, RMSprop,
// Adagrad). It owns parameter groups, the per-parameter state the rules keep between steps,
// and checkpointing of both. PyTorch's torch.optim is the model throughout: the same
// hyper-parameter names, the same formulas, the same semantics (a parameter whose grad() is
// undefined is skipped; zero_grad() sets grads to undefined; load_state_dict restores every
// group's hyper-parameters as well as the state).
//
//   SGD opt(model_params, {.lr = 0.1, .momentum = 0.9});
//   opt.add_param_group(bias_params, {{"weight_decay", 0.0}});  // other keys: the defaults
//   for (...) { opt.zero_grad(); loss.backward(); opt.step(); }
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ops/backend.h"
#include "ops/kernels.h"
#include "tensor/tensor.h"

namespace plexus::optim {

// A set of parameters sharing hyper-parameters. `lr` is what schedulers change; `options`
// holds the optimizer's other hyper-parameters under their PyTorch names ("momentum",
// "weight_decay", "beta1", ...; booleans such as "nesterov" are 0 or 1). Edits between
// steps take effect on the next step() (which validates them first), as in PyTorch.
struct ParamGroup {
  std::vector<Tensor> params;
  double lr = 0;
  std::map<std::string, double> options;
  // The lr the group had when the first scheduler was attached; schedulers count from it.
  std::optional<double> initial_lr;

  double option(const std::string& name) const;  // ValueError naming the known keys if absent
  bool flag(const std::string& name) const { return option(name) != 0; }
};

// A checkpoint of an optimizer: state tensors named "group<g>.param<i>.<name>" (e.g.
// "group0.param3.exp_avg") and text metadata: "optimizer" (the kind), "format",
// "groups", "group<g>.params", "group<g>.lr", "group<g>.initial_lr" (if set),
// "group<g>.<option>", "group<g>.param<i>.shape" and "group<g>.param<i>.step" (the number of
// updates a parameter received, for optimizers that count them). Numbers are written so
// that they read back exactly.
struct OptimizerState {
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::map<std::string, std::string> metadata;

  const Tensor* find(const std::string& name) const;  // null if absent
};

// What an optimizer keeps for one parameter, created on the parameter's first update.
struct ParamState {
  int64_t step = 0;  // updates applied (Adam, AdamW, RMSprop, Adagrad; SGD leaves it 0)
  std::vector<std::pair<std::string, Tensor>> tensors;

  Tensor* find(const std::string& name);
  const Tensor* find(const std::string& name) const;
};

class OptimizerSet;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // "SGD", "Adam", "AdamW", "RMSprop" or "Adagrad"; checkpoints record it.
  virtual std::string kind() const = 0;

  // One update of every parameter that has a gradient, under NoGradGuard. Hyper-parameters
  // and gradient shapes are checked for all groups before any parameter changes.
  virtual void step();
  void zero_grad();  // every parameter's grad becomes undefined

  // True when step() launches exactly one fused backend update per parameter and nothing
  // else, so a CUDA graph can replay it with its scalars staged afresh (cuda/step_graph.h).
  virtual bool replayable() const { return false; }

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  // Adds a group. `overrides` may set "lr" and any option; the rest come from the defaults
  // the optimizer was built with. Unknown keys, invalid values, parameters that do not
  // require grad, are not leaves, or already belong to this optimizer are ValueErrors.
  void add_param_group(std::vector<Tensor> params, const std::map<std::string, double>& overrides = {});
  // The construction hyper-parameters, "lr" included.
  const std::map<std::string, double>& defaults() const { return defaults_; }
  std::vector<Tensor> parameters() const;  // every group's, in order

  // The state kept for `param`; null before its first update (or if it is not optimized here).
  const ParamState* state(const Tensor& param) const;
  // Gives `param` (one of this optimizer's) the state `state`, copied onto its device: what a
  // partial load carries over from another optimizer of the same kind (train/partial_load.h).
  // Checked first, changing nothing on error: a ValueError for a parameter not optimized here,
  // a state name this rule does not keep, core state only in part or a step count that does
  // not fit it; a ShapeError for a state tensor not of the parameter's shape.
  void set_state(const Tensor& param, const ParamState& state);
  void check_state(const Tensor& param, const ParamState& state) const;  // set_state's checks alone

  // Deep copy: later steps do not change a returned state.
  OptimizerState state_dict() const;
  // Replaces the state and every group's lr/options with the checkpoint's. The parameters
  // themselves are this optimizer's (matched by position). Everything is validated first
  // (kind, group and parameter counts, parameter and state shapes, hyper-parameters,
  // unknown or missing entries); on any error (ValueError, ShapeError) nothing has changed.
  void load_state_dict(const OptimizerState& state);

 protected:
  // `defaults` holds every hyper-parameter of the optimizer, "lr" included. Derived
  // constructors add their first group with add_param_group (validation is virtual).
  explicit Optimizer(std::map<std::string, double> defaults);

  // Throws ValueError ("<kind>: ...") if a group's hyper-parameters are invalid.
  virtual void validate_group(const ParamGroup& group) const = 0;
  // Updates one parameter in place. Runs under NoGradGuard; `grad` is defined and has the
  // parameter's shape; `state` is empty on the parameter's first update.
  virtual void update(const ParamGroup& group, const Tensor& param, const Tensor& grad, ParamState& state) = 0;
  // Every parameter of `group` that has a gradient, in order. This base calls update() for
  // each; rules with a multi-tensor kernel override it (one launch on a device, not one per
  // parameter).
  struct Item {
    Tensor param, grad;
    ParamState* state;
  };
  virtual void update_group(const ParamGroup& group, const std::vector<Item>& items);

  // The state tensors a rule keeps. `core` ones exist from a parameter's first update on;
  // `optional` ones depend on options (momentum, amsgrad, ...) and are created when first
  // needed. `counts_steps`: the rule keeps ParamState::step, and it is > 0 exactly when the
  // core tensors exist.
  struct StateSpec {
    std::vector<std::string> core;
    std::vector<std::string> optional;
    bool counts_steps = false;
  };
  virtual StateSpec state_spec() const = 0;

  // ---- helpers for update rules --------------------------------------------------------
  // A handle to the state tensor `name`, created by `make()` the first time (so later steps
  // allocate nothing). A handle, not a reference: creating another entry may move the list.
  template <class Make>
  static Tensor state_tensor(ParamState& state, const std::string& name, Make&& make) {
    if (Tensor* t = state.find(name)) return *t;
    state.tensors.emplace_back(name, make());
    return state.tensors.back().second;
  }
  // The gradient the rules feed on: grad (negated if maximize) + weight_decay * param.
  // `owned` tells whether the result is a fresh temporary the caller may update in place.
  static Tensor effective_grad(const Tensor& grad, const Tensor& param, double weight_decay, bool maximize,
                               bool* owned = nullptr);
  static void add_scalar_(Tensor& t, float s);  // t += s, in place
  // Runs a fused update kernel on `param` (a contiguous copy written back when the parameter
  // is a strided view) and marks the parameter and the given state tensors as modified.
  static void fused_update(const Tensor& param, std::initializer_list<Tensor> state, const std::function<void(float*)>& kernel);
  // Collects one group's updates for a multi-tensor kernel (Backend::*_step_many): a
  // contiguous parameter joins the batch; a strided one is updated at once through
  // fused_update with the single-tensor kernel `one(p, grad)`, as is one on another device
  // than the batch's.
  template <class Step>
  class Batch {
   public:
    template <class One>
    void add(const Tensor& param, const Tensor& grad, std::initializer_list<Tensor> state,
             std::array<float*, 3> state_data, const Step& step, One&& one) {
      const Tensor d = contiguous_data(grad);
      if (!param.is_contiguous() || (!ts_.empty() && !(param.device() == device_))) {
        fused_update(param, state, [&](float* p) { one(p, d.data()); });
        return;
      }
      device_ = param.device();
      grads_.push_back(d);
      ts_.push_back({param.data(), d.data(), state_data[0], state_data[1], state_data[2], param.numel()});
      steps_.push_back(step);
      ++param.storage()->version;
      for (const Tensor& t : state)
        if (t.defined()) ++t.storage()->version;
    }
    template <class Many>
    void run(Many&& many) {
      if (!ts_.empty()) many(backend(device_), ts_, steps_);
    }

   private:
    Device device_ = Device::cpu();
    std::vector<Tensor> grads_;  // alive until the kernel is queued
    std::vector<Backend::UpdateTensor> ts_;
    std::vector<Step> steps_;
  };

  // ValueError "<kind>: <what>" unless ok.
  void require(bool ok, const std::string& what) const;
  // ValueError "<kind>: invalid <name> <value> (expected <expected>)" unless ok (NaN never is).
  void require_range(const std::string& name, double value, bool ok, const std::string& expected) const;

 private:
  friend class OptimizerSet;

  struct Entry {
    Tensor param;  // keeps the key alive
    ParamState state;
  };
  using StateMap = std::unordered_map<const TensorImpl*, Entry>;
  struct PendingLoad {
    std::vector<ParamGroup> groups;  // params copied from the live groups
    StateMap state;
  };

  void check_step_ready() const;  // validates groups and grads, changes nothing
  void run_step();
  PendingLoad prepare_load(const OptimizerState& state) const;
  void commit_load(PendingLoad&& pending) noexcept;

  std::map<std::string, double> defaults_;
  std::vector<ParamGroup> groups_;
  StateMap state_;
};

}  // namespace plexus::optim
