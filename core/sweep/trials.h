#pragma once
// Which trials a sweep runs (graph::SweepSettings::method):
//   grid     every combination of the parameters' listed values, the first parameter slowest
//   random   `trials` draws, seeded by the sweep's seed: a listed parameter picks one of its
//            values uniformly, a range draws uniformly, on a log scale log-uniformly, whole-number
//            targets rounded; the i-th trial's values depend only on the seed and i
//   tpe      a Tree-structured Parzen Estimator: the first trials are random ones (the same as
//            random's); each later one is chosen, among candidates drawn from a density around
//            the best quarter of the finished trials, by the ratio of that density to the one
//            around the rest (Bergstra et al. 2011), so it needs the finished trials' scores
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"
#include "sweep/assignment.h"

namespace plexus::sweep {

// How many trials the sweep runs: the grid's combinations, else settings.trials.
int64_t trial_count(const graph::SweepSettings& settings);

// The grid's combinations, in order. ValueError for a parameter with a range.
std::vector<Assignment> grid_trials(const graph::Graph& project);

// Random trial `index` (0-based), as random's draws (also tpe's first ones).
Assignment random_trial(const graph::Graph& project, int64_t index);

// The assignments known before any trial runs: grid's and random's all, tpe's first (startup)
// ones; std::nullopt for a tpe trial that needs scores first (propose_tpe).
std::optional<Assignment> planned_trial(const graph::Graph& project, int64_t index);

// A finished trial as tpe sees it: its values and its score (higher is better: an accuracy, or
// minus a loss).
struct Scored {
  Assignment assignment;
  double score = 0;
};
// How many random trials tpe runs before it models the scores.
int64_t tpe_startup_trials(const graph::SweepSettings& settings);
// tpe's trial `index` given the finished trials so far (random_trial while there are fewer than
// tpe_startup_trials of them). Deterministic in the seed, the index and `finished`.
Assignment propose_tpe(const graph::Graph& project, int64_t index, const std::vector<Scored>& finished);

}  // namespace plexus::sweep
