#include "train/stats_sampler.h"

#include <algorithm>
#include <cmath>

#include "autograd/grad_mode.h"
#include "util/error.h"

namespace plexus::train {
namespace {

// The values on the host, in order (a copy only from a GPU or of a strided view).
Tensor host(const Tensor& t) { return t.detach().to(Device::cpu()).contiguous(); }

double squares(const Tensor& t) {
  const Tensor h = host(t);
  return sum_of_squares(h.data(), h.numel());
}

}  // namespace

StatsSampler::StatsSampler(nn::Module& model, ObserveOutputs observe, int64_t every, NodeInfos nodes)
    : model_(model), observe_(std::move(observe)), every_(every), monitor_(std::move(nodes)) {
  if (!observe_) throw ValueError("StatsSampler: no way to observe the model's node outputs");
  if (every_ < 0) throw ValueError("StatsSampler: every must be 0 or more, got " + std::to_string(every_));
  for (const auto& [name, param] : model_.named_parameters()) {
    if (!param.requires_grad()) continue;  // frozen: no gradient, no update, nothing to judge
    const std::string node = name.substr(0, name.find('.'));
    auto group = std::find_if(params_.begin(), params_.end(), [&](const NodeParams& g) { return g.node == node; });
    if (group == params_.end()) {
      group = params_.insert(params_.end(), NodeParams());
      group->node = node;
    }
    group->params.push_back(param);
  }
}

StatsSampler::~StatsSampler() { stop_observing(); }

void StatsSampler::stop_observing() {
  if (!observing_) return;
  observe_(nullptr);
  observing_ = false;
}

void StatsSampler::begin() {
  outputs_.clear();
  for (NodeParams& g : params_) g.measured = false;
  observe_([this](const std::string& node, const Tensor& output) { outputs_.push_back(output_stat(node, output)); });
  observing_ = true;
}

void StatsSampler::after_backward() {
  stop_observing();  // the forward pass is over
  NoGradGuard no_grad;
  for (NodeParams& g : params_) {
    g.grad_sq = g.weight_sq = g.update_sq = 0;
    if (g.before.size() != g.params.size())
      for (const Tensor& p : g.params) g.before.push_back(empty(p.shape(), Device::cpu()));
    for (size_t i = 0; i < g.params.size(); ++i) {
      if (const Tensor grad = g.params[i].grad(); grad.defined()) g.grad_sq += squares(grad);
      g.before[i].copy_(g.params[i]);
      g.weight_sq += squares(g.before[i]);
    }
  }
}

void StatsSampler::after_update() {
  NoGradGuard no_grad;
  for (NodeParams& g : params_) {
    for (size_t i = 0; i < g.params.size(); ++i)
      g.update_sq += distance_squared(host(g.params[i]).data(), g.before[i].data(), g.before[i].numel());
    g.measured = true;
  }
}

NodeStats StatsSampler::finish(int epoch, int64_t batch, int64_t step) {
  stop_observing();
  NodeStats sample;
  sample.epoch = epoch;
  sample.batch = batch;
  sample.step = step;
  sample.nodes = std::move(outputs_);
  outputs_.clear();
  for (NodeStat& n : sample.nodes) {
    const auto g = std::find_if(params_.begin(), params_.end(), [&](const NodeParams& p) { return p.node == n.node; });
    if (g == params_.end() || !g->measured) continue;
    n.has_params = true;
    n.weight_norm = std::sqrt(g->weight_sq);
    n.grad_norm = std::sqrt(g->grad_sq);
    // All-zero weights have no scale to compare an update with.
    n.update_ratio = n.weight_norm > 0 ? std::sqrt(g->update_sq) / n.weight_norm : 0.0;
  }
  sample.health = monitor_.add(sample);
  return sample;
}

NodeStats StatsSampler::diagnose(const Tensor& inputs, int epoch, int64_t batch, int64_t step) {
  const std::vector<Tensor> params = model_.parameters();
  const Device device = params.empty() ? Device::cpu() : params.front().device();
  NoGradGuard no_grad;
  begin();
  model_(inputs.to(device));
  return finish(epoch, batch, step);
}

}  // namespace plexus::train
