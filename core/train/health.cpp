#include "train/health.h"

#include <algorithm>
#include <cstdio>

namespace plexus::train {
namespace {

// Two significant digits: "3.2e-09", "0.048", "12".
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

std::string percent(double share) { return std::to_string(int(share * 100 + 0.5)) + "%"; }

// How many times larger a is than b, for people: "340x".
std::string times(double a, double b) { return short_number(a / b) + "x"; }

}  // namespace

HealthMonitor::HealthMonitor(NodeInfos nodes) : nodes_(std::move(nodes)) {}

std::string node_label(const NodeInfos& nodes, const std::string& node) {
  const auto it = nodes.find(node);
  return it == nodes.end() || it->second.label.empty() ? node : it->second.label;
}

std::vector<HealthIssue> HealthMonitor::add(const NodeStats& sample) {
  std::vector<HealthIssue> issues;
  const auto issue = [&](const std::string& node, HealthKind kind, std::string reason) {
    issues.push_back({node, kind, std::move(reason)});
  };
  const NodeStat* previous = nullptr;  // the last node with parameters so far, graph order
  bool non_finite_named = false;
  for (const NodeStat& n : sample.nodes) {
    std::deque<Past>& past = history_[n.node];
    past.push_back({n.dead_fraction, n.has_params, n.update_ratio});
    while (past.size() > std::max(kDeadWindow, kUpdateWindow)) past.pop_front();

    const auto info = nodes_.find(n.node);
    if (info != nodes_.end() && kZeroingActivations.count(info->second.type)) {
      const size_t window = std::min(kDeadWindow, past.size());
      const auto recent = past.end() - std::ptrdiff_t(window);
      if (window >= kDeadMinSamples &&
          std::all_of(recent, past.end(), [](const Past& p) { return p.dead_fraction > kDeadFraction; })) {
        const double least = std::min_element(recent, past.end(), [](const Past& a, const Past& b) {
                               return a.dead_fraction < b.dead_fraction;
                             })->dead_fraction;
        issue(n.node, HealthKind::DeadUnits,
              percent(least) + " of units output zero for every example in each of the last " + std::to_string(window) +
                  " samples");
      }
    }

    if (n.has_params) {
      const double g = n.grad_norm;
      // Against a layer before that vanished itself every layer after would look exploding.
      const bool after = previous && previous->grad_norm >= kVanishingGradNorm;
      if (g < kVanishingGradNorm)
        issue(n.node, HealthKind::VanishingGradient,
              "gradient norm " + short_number(g) + " is below " + short_number(kVanishingGradNorm));
      else if (after && g * kGradJump < previous->grad_norm)
        issue(n.node, HealthKind::VanishingGradient,
              "gradient norm " + short_number(g) + " is " + times(previous->grad_norm, g) + " smaller than " +
                  node_label(nodes_, previous->node) + "'s (" + short_number(previous->grad_norm) + ")");
      if (g > kExplodingGradNorm)
        issue(n.node, HealthKind::ExplodingGradient,
              "gradient norm " + short_number(g) + " is above " + short_number(kExplodingGradNorm));
      else if (after && g > kGradJump * previous->grad_norm)
        issue(n.node, HealthKind::ExplodingGradient,
              "gradient norm " + short_number(g) + " is " + times(g, previous->grad_norm) + " larger than " +
                  node_label(nodes_, previous->node) + "'s (" + short_number(previous->grad_norm) + ")");

      if (past.size() >= kUpdateWindow) {
        const auto recent = past.end() - std::ptrdiff_t(kUpdateWindow);
        const auto all = [&](auto condition) {
          return std::all_of(recent, past.end(), [&](const Past& p) { return p.has_params && condition(p.update_ratio); });
        };
        const std::string figure = "update/weight ratio " + short_number(n.update_ratio) + " over the last " +
                                   std::to_string(kUpdateWindow) + " samples (healthy is near 1e-3): ";
        const bool frozen = info != nodes_.end() && info->second.frozen;
        if (!frozen && g >= kVanishingGradNorm && all([](double r) { return r < kUpdateRatioLow; }))
          issue(n.node, HealthKind::UpdateRatio,
                figure + "below " + short_number(kUpdateRatioLow) + ", the learning rate may be too low");
        else if (all([](double r) { return r > kUpdateRatioHigh; }))
          issue(n.node, HealthKind::UpdateRatio,
                figure + "above " + short_number(kUpdateRatioHigh) + ", the learning rate may be too high");
      }
      previous = &n;
    }

    if (!n.finite && !non_finite_named) {
      non_finite_named = true;
      issue(n.node, HealthKind::NonFinite, "its output holds NaN or Inf: the first node in graph order where they appear");
    }
  }
  return issues;
}

}  // namespace plexus::train
