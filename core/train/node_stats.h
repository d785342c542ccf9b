#pragma once
// A look inside a training network: every K training steps (TrainingSettings::stats_every) the
// Trainer measures each node's output and, for nodes with parameters, their gradients and this
// step's update, and a HealthMonitor turns the history into health issues with a one-line
// reason. Plain values, published as a train::NodeStats event, so a front end draws them on the
// graph (the editor's node overlay, the node statistics panel) or prints them (plexus-cli).
#include <cstdint>
#include <string>
#include <vector>

namespace plexus {
class Tensor;
}

namespace plexus::train {

inline constexpr int kHistogramBins = 24;

// One node's figures at one sampled training step.
struct NodeStat {
  std::string node;  // graph node id (the module's name in the compiled model)
  // The node's (first) output over the whole batch, finite values only for the moments.
  double mean = 0, std = 0;
  double zero_fraction = 0;  // share of output values that are exactly zero
  // Share of units (an output's features, or channels of [N, C, ...]) that are zero for every
  // example of the batch.
  double dead_fraction = 0;
  double min = 0, max = 0;
  std::vector<float> histogram;  // kHistogramBins shares of the values (summing to 1) over [min, max]
  bool finite = true;            // no NaN or Inf in the output
  // Parameters, all of the node's tensors together (has_params false for a node without any).
  bool has_params = false;
  double weight_norm = 0, grad_norm = 0;
  double update_ratio = 0;  // ||w_after − w_before|| / ||w_before|| over this step
};

enum class HealthKind { DeadUnits, VanishingGradient, ExplodingGradient, UpdateRatio, NonFinite };

struct HealthIssue {
  std::string node;
  HealthKind kind = HealthKind::DeadUnits;
  std::string reason;  // one line for people: "62% of units output zero over the last 3 samples"
};

// Published by the Trainer every stats_every steps (and once, naming the first node in graph
// order whose output is not finite, before a run fails for a non-finite loss).
struct NodeStats {
  int epoch = 0;             // 1-based
  int64_t batch = 0;         // 1-based within the epoch
  int64_t step = 0;          // 1-based over the run
  std::vector<NodeStat> nodes;       // in graph (execution) order
  std::vector<HealthIssue> health;   // the issues standing after this sample
};

// The output figures of NodeStat (has_params false) for `output`, a node's output over a batch,
// copied to the host first only when it lives on a GPU: one vectorised pass for the moments,
// zeros and range (a second, value by value, only when a value is NaN or Inf), a look at each
// unit until one of its values is not zero, and the histogram of at most 65536 values evenly
// spread over the output. Units are the last dimension of [N, F] and [N, T, F] (a sequence's
// features), dimension 1 of [N, C, ...] (channels); an [N] output is one unit. std is the
// population's (divided by the count). Without finite values the moments, range and histogram
// are 0; when every finite value is the same, bin 0 holds them all.
NodeStat output_stat(std::string node, const Tensor& output);

// ||values||² and ||a − b||² of n floats on the host, vectorised (the parameter figures).
double sum_of_squares(const float* values, int64_t n);
double distance_squared(const float* a, const float* b, int64_t n);

}  // namespace plexus::train
