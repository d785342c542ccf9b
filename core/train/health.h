#pragma once
// HealthMonitor: turns the per-node statistics of a run (train/node_stats.h), sample after
// sample, into the health issues standing now, each with a one-line reason. An issue stands
// while its condition holds and clears by itself when it stops holding. The rules, with the
// thresholds below (docs/training.md lists them too):
//
//   dead units      a node whose type outputs exact zeros (kZeroingActivations) had more than
//                   kDeadFraction of its units zero for every example of the batch in each of
//                   the last kDeadWindow samples (all of them while fewer exist, at least
//                   kDeadMinSamples)
//   vanishing       a node's gradient norm is below kVanishingGradNorm, or more than
//   gradient        kGradJump times smaller than the previous node with parameters (graph order)
//   exploding       above kExplodingGradNorm, or more than kGradJump times larger than the
//   gradient        previous one's (a previous norm below kVanishingGradNorm is no yardstick)
//   update ratio    ||update|| / ||weights|| outside [kUpdateRatioLow, kUpdateRatioHigh] (healthy
//                   is near 1e-3) in each of the last kUpdateWindow samples: the learning rate
//                   is likely too low or too high (too low is not said of a node whose gradient
//                   vanished: no learning rate moves it, nor of a frozen one: none is meant to)
//   non-finite      the first node in graph order whose output holds NaN or Inf
//
// Gradient rules judge the latest sample alone: a norm is already a sum over the batch.
#include <cstddef>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "train/node_stats.h"

namespace plexus::train {

// What a report needs to know of a node beyond its id: its registry type ("ReLU") and its
// label for people ("ReLU 'relu1'", graph::Node::label).
struct NodeInfo {
  std::string type;
  std::string label;
  // Its weights are not meant to change (graph::Node::lr_mult 0): an update ratio of 0 is no issue.
  bool frozen = false;
};
using NodeInfos = std::map<std::string, NodeInfo>;
// "ReLU 'relu1'", or the id of a node `nodes` does not know.
std::string node_label(const NodeInfos& nodes, const std::string& node);

// The activations whose outputs are exact zeros for negative inputs (LeakyReLU when its slope
// is 0; with a slope its units are never dead by this measure).
inline const std::set<std::string> kZeroingActivations = {"ReLU", "LeakyReLU"};
inline constexpr double kDeadFraction = 0.5;
inline constexpr size_t kDeadWindow = 3;
inline constexpr size_t kDeadMinSamples = 2;
inline constexpr double kVanishingGradNorm = 1e-7;
inline constexpr double kExplodingGradNorm = 1e3;
inline constexpr double kGradJump = 100;
inline constexpr double kUpdateRatioLow = 1e-5;
inline constexpr double kUpdateRatioHigh = 1e-1;
inline constexpr size_t kUpdateWindow = 3;

class HealthMonitor {
 public:
  // `nodes`: the type and label of every node (a node missing here is named by its id and
  // never counts as an activation).
  explicit HealthMonitor(NodeInfos nodes = {});

  // Takes the next sample (its nodes in graph order) and returns the issues standing after
  // it, in graph order (a node's issues in HealthKind order). Ignores `sample.health`.
  std::vector<HealthIssue> add(const NodeStats& sample);

 private:
  struct Past {
    double dead_fraction = 0;
    bool has_params = false;
    double update_ratio = 0;
  };
  NodeInfos nodes_;
  // The figures of the last samples per node, newest last (at most the longest window).
  std::map<std::string, std::deque<Past>> history_;
};

}  // namespace plexus::train
