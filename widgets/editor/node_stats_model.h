#pragma once
// What a training run has measured inside each node (train::NodeStats events), kept for the
// editor: the node overlays on the canvas and the node statistics panel read it. It lives
// beside the GraphDocument, not in it: statistics belong to a run, not to the graph.
//
// Each node keeps at most kCapacity samples. When that is reached, the older half is thinned to
// every second sample, so a long run is covered from its first step to its last in bounded
// memory: recent samples at full resolution, older ones ever sparser.
#include <QHash>
#include <QObject>
#include <QString>

#include <array>
#include <cstdint>
#include <vector>

#include "train/node_stats.h"

namespace plexus::widgets {

// One node at one sampled step: train::NodeStat without the id, its histogram inline.
struct NodeSample {
  int64_t step = 0;
  int epoch = 0;
  double mean = 0, std = 0, zeroFraction = 0, deadFraction = 0, min = 0, max = 0;
  std::array<float, train::kHistogramBins> histogram{};  // shares over [min, max]
  bool finite = true;
  bool hasParams = false;
  double weightNorm = 0, gradNorm = 0, updateRatio = 0;
};

// NaN/Inf and exploding gradients stop a run from learning at all; the other issues slow it.
bool isSevere(train::HealthKind kind);

class NodeStatsModel : public QObject {
  Q_OBJECT

 public:
  static constexpr size_t kCapacity = 500;  // samples kept per node

  explicit NodeStatsModel(QObject* parent = nullptr);

  // Appends one sample per node of `stats` and replaces the standing health issues; emits updated().
  void add(const train::NodeStats& stats);
  // Forgets everything (a new run starts, another project opens); emits cleared().
  void clear();

  bool isEmpty() const { return samples_.isEmpty(); }
  int64_t lastStep() const { return last_step_; }
  // Oldest first; empty for a node never measured.
  const std::vector<NodeSample>& samples(const QString& node) const;
  // The issues standing after the last sample, for one node or all of them (in graph order).
  std::vector<train::HealthIssue> issues(const QString& node) const;
  const std::vector<train::HealthIssue>& issues() const { return issues_; }

 signals:
  void updated();
  void cleared();

 private:
  QHash<QString, std::vector<NodeSample>> samples_;
  std::vector<train::HealthIssue> issues_;
  int64_t last_step_ = 0;
};

}  // namespace plexus::widgets
