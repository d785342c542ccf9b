#include "editor/node_stats_model.h"

#include <algorithm>

#include "common/qt_text.h"

namespace plexus::widgets {
namespace {

NodeSample sampleOf(const train::NodeStat& s, const train::NodeStats& at) {
  NodeSample out;
  out.step = at.step;
  out.epoch = at.epoch;
  out.mean = s.mean;
  out.std = s.std;
  out.zeroFraction = s.zero_fraction;
  out.deadFraction = s.dead_fraction;
  out.min = s.min;
  out.max = s.max;
  std::copy_n(s.histogram.begin(), std::min(s.histogram.size(), out.histogram.size()), out.histogram.begin());
  out.finite = s.finite;
  out.hasParams = s.has_params;
  out.weightNorm = s.weight_norm;
  out.gradNorm = s.grad_norm;
  out.updateRatio = s.update_ratio;
  return out;
}

// Keeps the newer half whole and every second sample of the older half.
void thin(std::vector<NodeSample>& samples) {
  const size_t older = samples.size() / 2;
  size_t kept = 0;
  for (size_t i = 0; i < older; i += 2) samples[kept++] = samples[i];
  samples.erase(samples.begin() + std::ptrdiff_t(kept), samples.begin() + std::ptrdiff_t(older));
}

}  // namespace

bool isSevere(train::HealthKind kind) {
  return kind == train::HealthKind::NonFinite || kind == train::HealthKind::ExplodingGradient;
}

NodeStatsModel::NodeStatsModel(QObject* parent) : QObject(parent) {}

void NodeStatsModel::add(const train::NodeStats& stats) {
  for (const train::NodeStat& s : stats.nodes) {
    std::vector<NodeSample>& samples = samples_[qstr(s.node)];
    if (samples.size() >= kCapacity) thin(samples);
    samples.push_back(sampleOf(s, stats));
  }
  issues_ = stats.health;
  last_step_ = stats.step;
  emit updated();
}

void NodeStatsModel::clear() {
  samples_.clear();
  issues_.clear();
  last_step_ = 0;
  emit cleared();
}

const std::vector<NodeSample>& NodeStatsModel::samples(const QString& node) const {
  static const std::vector<NodeSample> none;
  const auto it = samples_.constFind(node);
  return it == samples_.cend() ? none : *it;
}

std::vector<train::HealthIssue> NodeStatsModel::issues(const QString& node) const {
  std::vector<train::HealthIssue> out;
  const std::string id = node.toStdString();
  for (const train::HealthIssue& i : issues_)
    if (i.node == id) out.push_back(i);
  return out;
}

}  // namespace plexus::widgets
