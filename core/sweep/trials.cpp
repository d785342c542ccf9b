#include "sweep/trials.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "graph/sweep_settings.h"
#include "util/error.h"

namespace plexus::sweep {
namespace {

// A small counter-based generator: each trial's draws follow from (seed, index, stream) alone,
// so a resumed sweep, another rank or another machine draws the same trials.
class Draws {
 public:
  Draws(uint64_t seed, int64_t index, uint64_t stream) : state_(mix(mix(seed) ^ mix(uint64_t(index) + stream))) {}
  double uniform() { return double(mix(state_ += 0x9E3779B97F4A7C15ull) >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {
    const double u = std::max(uniform(), 1e-300), v = uniform();
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
  }
  size_t below(size_t n) { return std::min(n - 1, size_t(uniform() * double(n))); }

 private:
  static uint64_t mix(uint64_t z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

graph::SweepTarget target_of(const graph::Graph& project, const std::string& target) {
  std::string why;
  std::optional<graph::SweepTarget> t = graph::sweep_target(project, target, &why);
  if (!t) throw ValueError("sweep: '" + target + "': " + why);
  return *t;
}

// A range as tpe and random see it: u in [0, 1] maps to min..max, linearly or on a log scale.
double from_unit(const graph::SweepParameter& p, double u) {
  if (p.scale == "log") return std::exp(std::log(p.min) + u * (std::log(p.max) - std::log(p.min)));
  return p.min + u * (p.max - p.min);
}
double to_unit(const graph::SweepParameter& p, double x) {
  if (p.scale == "log") return (std::log(x) - std::log(p.min)) / (std::log(p.max) - std::log(p.min));
  return (x - p.min) / (p.max - p.min);
}

// The value of a range at u: a whole number (within min..max) for an Int target.
graph::ParamValue range_value(const graph::SweepParameter& p, const graph::SweepTarget& t, double u) {
  const double x = from_unit(p, std::clamp(u, 0.0, 1.0));
  if (t.spec.type == graph::ParamType::Int)
    return int64_t(std::clamp(std::round(x), std::ceil(p.min), std::floor(p.max)));
  return std::clamp(x, p.min, p.max);
}

double as_number(const graph::ParamValue& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return double(*i);
  if (const double* d = std::get_if<double>(&v)) return *d;
  return 0;
}

const graph::ParamValue* value_of(const Assignment& a, const std::string& target) {
  for (const Setting& s : a)
    if (s.target == target) return &s.value;
  return nullptr;
}

// A Parzen density on [0, 1]: a Gaussian at each point (bandwidth shrinking with their number)
// and a flat prior weighing as one point, so that no value is ruled out.
struct Parzen {
  std::vector<double> points;
  double sigma() const { return 0.25 * std::pow(double(points.size() + 1), -0.2); }
  double density(double x) const {
    const double s = sigma();
    double sum = 1;  // the prior
    for (const double m : points) sum += std::exp(-0.5 * (x - m) * (x - m) / (s * s)) / (s * std::sqrt(2 * std::numbers::pi));
    return sum / double(points.size() + 1);
  }
  double draw(Draws& d) const {
    const size_t k = d.below(points.size() + 1);
    if (k == points.size()) return d.uniform();
    return std::clamp(points[k] + sigma() * d.normal(), 0.0, 1.0);
  }
};

constexpr int kTpeCandidates = 24;
constexpr double kTpeGoodShare = 0.25;

}  // namespace

int64_t trial_count(const graph::SweepSettings& settings) {
  if (settings.method != "grid") return settings.trials;
  int64_t n = 1;
  for (const graph::SweepParameter& p : settings.parameters) n *= int64_t(p.values.size());
  return n;
}

std::vector<Assignment> grid_trials(const graph::Graph& project) {
  const graph::SweepSettings& s = project.sweep;
  for (const graph::SweepParameter& p : s.parameters)
    if (p.values.empty()) throw ValueError("sweep: '" + p.target + "': a grid needs listed values, not a range");
  std::vector<Assignment> out;
  const int64_t n = trial_count(s);
  for (int64_t i = 0; i < n; ++i) {
    Assignment a(s.parameters.size());
    int64_t rest = i;  // the last parameter varies fastest
    for (size_t k = s.parameters.size(); k-- > 0;) {
      const auto& values = s.parameters[k].values;
      a[k] = {s.parameters[k].target, values[size_t(rest % int64_t(values.size()))]};
      rest /= int64_t(values.size());
    }
    out.push_back(std::move(a));
  }
  return out;
}

Assignment random_trial(const graph::Graph& project, int64_t index) {
  Draws d(project.sweep.seed, index, 0);
  Assignment a;
  for (const graph::SweepParameter& p : project.sweep.parameters) {
    if (!p.values.empty()) {
      a.push_back({p.target, p.values[d.below(p.values.size())]});
      continue;
    }
    a.push_back({p.target, range_value(p, target_of(project, p.target), d.uniform())});
  }
  return a;
}

std::optional<Assignment> planned_trial(const graph::Graph& project, int64_t index) {
  const graph::SweepSettings& s = project.sweep;
  if (s.method == "grid") return grid_trials(project).at(size_t(index));
  if (s.method == "tpe" && index >= tpe_startup_trials(s)) return std::nullopt;
  return random_trial(project, index);
}

int64_t tpe_startup_trials(const graph::SweepSettings& settings) {
  return std::min<int64_t>(settings.trials, std::clamp<int64_t>(settings.trials / 3, 3, 10));
}

Assignment propose_tpe(const graph::Graph& project, int64_t index, const std::vector<Scored>& finished) {
  if (int64_t(finished.size()) < tpe_startup_trials(project.sweep)) return random_trial(project, index);
  std::vector<const Scored*> order;
  for (const Scored& f : finished) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(), [](const Scored* a, const Scored* b) { return a->score > b->score; });
  const size_t good = std::max<size_t>(1, size_t(std::ceil(kTpeGoodShare * double(order.size()))));
  Draws d(project.sweep.seed, index, 1);
  Assignment a;
  // Each parameter on its own (independent TPE): the candidate drawn from the good trials'
  // density that is most likely under it relative to the rest's.
  for (const graph::SweepParameter& p : project.sweep.parameters) {
    if (!p.values.empty()) {
      std::vector<double> l(p.values.size(), 1), g(p.values.size(), 1);  // counts over a prior of one each
      for (size_t r = 0; r < order.size(); ++r)
        if (const graph::ParamValue* v = value_of(order[r]->assignment, p.target))
          for (size_t k = 0; k < p.values.size(); ++k)
            if (p.values[k] == *v) (r < good ? l : g)[k] += 1;
      double lsum = 0, gsum = 0;
      for (size_t k = 0; k < l.size(); ++k) lsum += l[k], gsum += g[k];
      size_t best = 0;
      double best_ratio = -1;
      for (int c = 0; c < kTpeCandidates; ++c) {
        double u = d.uniform() * lsum;  // drawn from l
        size_t k = 0;
        while (k + 1 < l.size() && u >= l[k]) u -= l[k++];
        const double ratio = (l[k] / lsum) / (g[k] / gsum);
        if (ratio > best_ratio) best_ratio = ratio, best = k;
      }
      a.push_back({p.target, p.values[best]});
      continue;
    }
    Parzen l, g;
    for (size_t r = 0; r < order.size(); ++r)
      if (const graph::ParamValue* v = value_of(order[r]->assignment, p.target))
        (r < good ? l : g).points.push_back(std::clamp(to_unit(p, as_number(*v)), 0.0, 1.0));
    double best = 0.5, best_ratio = -1;
    for (int c = 0; c < kTpeCandidates; ++c) {
      const double u = l.draw(d);
      const double ratio = l.density(u) / g.density(u);
      if (ratio > best_ratio) best_ratio = ratio, best = u;
    }
    a.push_back({p.target, range_value(p, target_of(project, p.target), best)});
  }
  return a;
}

}  // namespace plexus::sweep
