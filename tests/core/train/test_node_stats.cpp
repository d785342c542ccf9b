// Per-node statistics (train/node_stats.h, train/stats_sampler.h) and health issues
// (train/health.h): the figures of hand-made outputs and of one SGD step against numbers worked
// out by hand, the Trainer's sampling schedule, dead ReLUs found in a real run and not in a
// healthy one, the health rules on made-up samples, a NaN traced to its first node, and the
// stats_every setting.
#include "support/check.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "data/dataloader.h"
#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "graph/training_params.h"
#include "layers/compiler.h"
#include "optim/factory.h"
#include "plexus.h"
#include "session/run.h"
#include "support/suite_dir.h"
#include "support/test_support.h"
#include "train/health.h"
#include "train/stats_sampler.h"
#include "train/trainer.h"

using namespace plexus;
using plexus::testing::contains;
using plexus::testing::message_of;
using train::HealthKind;
using train::NodeStat;
using train::NodeStats;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(PLEXUS_SOURCE_DIR) / "examples";
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

graph::Node node(std::string id, std::string type, std::map<std::string, graph::ParamValue> params = {}) {
  return graph::Node{id, std::move(type), id, std::move(params), {}};
}
graph::Edge edge(std::string from, std::string to, std::string from_port = "output", std::string to_port = "input") {
  return graph::Edge{{std::move(from), std::move(from_port)}, {std::move(to), std::move(to_port)}};
}

// Input [4] -> Linear fc1 (8) -> ReLU act -> Linear fc2 (3) -> CrossEntropy.
graph::Graph small_mlp() {
  graph::Graph g;
  g.nodes = {node("in", "Input"), node("fc1", "Linear", {{"out_features", int64_t(8)}}), node("act", "ReLU"),
             node("fc2", "Linear", {{"out_features", int64_t(3)}}), node("loss", "CrossEntropy")};
  g.edges = {edge("in", "fc1", "x"), edge("fc1", "act"), edge("act", "fc2"), edge("fc2", "loss"),
             edge("in", "loss", "y", "target")};
  return g;
}

const graph::DatasetInfo kSmallInfo{{4}, {}, 3, 0};

// What session::make_training_run gives a compiled graph's Trainer: the loss, the observer
// hook and the nodes' types and labels.
train::TrainerOptions options_for(const graph::Graph& g, const layers::CompiledGraph& c, int64_t stats_every) {
  train::TrainerOptions o;
  o.loss = c.loss;
  o.classification = c.classification;
  o.stats_every = stats_every;
  o.observe_outputs = [model = c.model.get()](train::OutputObserver observer) { model->set_observer(std::move(observer)); };
  for (const graph::Node& n : g.nodes) o.nodes[n.id] = {n.type, n.label()};
  return o;
}

std::shared_ptr<data::TensorDataset> small_data(int64_t n, float scale = 1.f) {
  Generator gen(7);
  std::vector<float> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[size_t(i)] = float(i % 3);
  return std::make_shared<data::TensorDataset>(randn({n, 4}, &gen) * scale, from_vector(labels, {n}));
}

struct Recorded {
  std::vector<train::Event> events;
  train::RunResult result;
  std::vector<NodeStats> stats() const {
    std::vector<NodeStats> out;
    for (const train::Event& e : events)
      if (const auto* s = std::get_if<NodeStats>(&e)) out.push_back(*s);
    return out;
  }
};

Recorded run_trainer(train::Trainer& trainer) {
  Recorded r;
  trainer.set_callback([&](const train::Event& e) { r.events.push_back(e); });
  r.result = trainer.run();
  return r;
}

NodeStat params_stat(std::string node, double grad_norm, double update_ratio = 1e-3) {
  NodeStat s;
  s.node = std::move(node);
  s.has_params = true;
  s.weight_norm = 1;
  s.grad_norm = grad_norm;
  s.update_ratio = update_ratio;
  return s;
}

NodeStat dead_stat(std::string node, double dead_fraction) {
  NodeStat s;
  s.node = std::move(node);
  s.dead_fraction = dead_fraction;
  return s;
}

NodeStats sample(std::vector<NodeStat> nodes) {
  NodeStats s;
  s.nodes = std::move(nodes);
  return s;
}

std::vector<std::pair<std::string, HealthKind>> kinds(const std::vector<train::HealthIssue>& issues) {
  std::vector<std::pair<std::string, HealthKind>> out;
  for (const train::HealthIssue& h : issues) out.emplace_back(h.node, h.kind);
  return out;
}

const train::NodeInfos kMonitorNodes = {{"fc1", {"Linear", "Linear 'fc1'"}},
                                        {"act", {"ReLU", "ReLU 'act'"}},
                                        {"fc2", {"Linear", "Linear 'fc2'"}},
                                        {"sig", {"Sigmoid", "Sigmoid 'sig'"}}};

}  // namespace

// ---- the figures of one output ---------------------------------------------------------

TEST(anOutputsFiguresAreTheHandComputedOnes) {
  // [N = 2, F = 3]: feature 0 is zero for both examples, the others are not.
  const NodeStat s = train::output_stat("fc", from_vector({0, 2, -1, 0, 4, 3}, {2, 3}));
  COMPARE(s.node, std::string("fc"));
  VERIFY(s.finite && !s.has_params);
  COMPARE(s.mean, 8.0 / 6.0);
  VERIFY(std::abs(s.std - std::sqrt(30.0 / 6.0 - (8.0 / 6.0) * (8.0 / 6.0))) < 1e-12);
  COMPARE(s.zero_fraction, 2.0 / 6.0);
  COMPARE(s.dead_fraction, 1.0 / 3.0);
  COMPARE(s.min, -1.0);
  COMPARE(s.max, 4.0);
  // 24 bins over [-1, 4], 5/24 wide: -1 -> 0, 0 -> 4 (twice), 2 -> 14, 3 -> 19, 4 (the maximum) -> 23.
  COMPARE(s.histogram.size(), size_t(train::kHistogramBins));
  std::vector<float> expected(train::kHistogramBins, 0.f);
  expected[0] = expected[14] = expected[19] = expected[23] = float(1.0 / 6.0);
  expected[4] = float(2.0 / 6.0);
  COMPARE(s.histogram, expected);
}

TEST(unitsAreChannelsOfImagesAndFeaturesOfSequences) {
  // [N = 2, C = 2, 1, 2]: channel 0 is zero everywhere; channel 1 has a non-zero in each example.
  const NodeStat img = train::output_stat("conv", from_vector({0, 0, 1, 0, 0, 0, 0, -2}, {2, 2, 1, 2}));
  COMPARE(img.dead_fraction, 0.5);
  COMPARE(img.zero_fraction, 6.0 / 8.0);
  // [N = 2, T = 2, F = 2]: feature 1 is zero at every step of every example, feature 0 once not.
  const NodeStat seq = train::output_stat("rnn", from_vector({0, 0, 0, 0, 0, 0, 5, 0}, {2, 2, 2}));
  COMPARE(seq.dead_fraction, 0.5);
  // [N, F] as a strided view (a transpose) reads the same as its contiguous copy.
  const Tensor t = from_vector({0, 0, 1, 0, 2, 0}, {3, 2}).t();  // [2, 3]: feature 0 is zero
  COMPARE(train::output_stat("v", t).dead_fraction, train::output_stat("v", t.contiguous()).dead_fraction);
  COMPARE(train::output_stat("v", t).dead_fraction, 1.0 / 3.0);
}

TEST(nonFiniteValuesAreFlaggedAndLeftOutOfTheMoments) {
  const NodeStat s = train::output_stat("x", from_vector({1, kNaN, kInf, 3}, {2, 2}));
  VERIFY(!s.finite);
  COMPARE(s.mean, 2.0);
  COMPARE(s.std, 1.0);
  COMPARE(s.min, 1.0);
  COMPARE(s.max, 3.0);
  COMPARE(s.zero_fraction, 0.0);
  COMPARE(s.dead_fraction, 0.0);  // NaN is not zero
  COMPARE(s.histogram.front(), 0.5f);
  COMPARE(s.histogram.back(), 0.5f);
  // One value everywhere: it all goes to bin 0.
  const NodeStat same = train::output_stat("c", full({4, 2}, 5.f));
  COMPARE(same.histogram[0], 1.f);
  COMPARE(same.std, 0.0);
  VERIFY(train::output_stat("n", from_vector({kNaN, kNaN}, {2})).histogram ==
         std::vector<float>(train::kHistogramBins, 0.f));
}

// ---- parameters, over one real step ------------------------------------------------------

TEST(gradientNormAndUpdateRatioOfOneSgdStep) {
  const graph::Graph g = small_mlp();
  const layers::CompiledGraph c = layers::compile(g, kSmallInfo, 3);
  const double lr = 0.05;
  auto opt = optim::make_optimizer({.optimizer = "sgd", .lr = lr}, c.model->parameters());
  train::TrainingStep step(*c.model, *opt, {.loss = c.loss});
  const train::TrainerOptions o = options_for(g, c, 1);
  train::StatsSampler sampler(*c.model, o.observe_outputs, 1, o.nodes);
  const auto data = small_data(16);
  std::vector<std::vector<float>> before;
  for (const Tensor& p : c.model->parameters()) before.push_back(p.to_vector());

  sampler.begin();
  VERIFY(step.run(data->inputs(), data->targets(), &sampler).updated);
  const NodeStats s = sampler.finish(1, 1, 1);

  COMPARE(s.nodes.size(), size_t(3));  // fc1, act, fc2: graph order
  COMPARE(s.nodes[0].node, std::string("fc1"));
  COMPARE(s.nodes[1].node, std::string("act"));
  COMPARE(s.nodes[2].node, std::string("fc2"));
  VERIFY(!s.nodes[1].has_params);
  // The gradients the step left (SGD does not clear them) against the sampler's figures.
  const auto named = c.model->named_parameters();
  for (const NodeStat& n : {s.nodes[0], s.nodes[2]}) {
    VERIFY(n.has_params);
    double g2 = 0, w2 = 0;
    size_t i = 0;
    for (const auto& [name, p] : named) {
      if (name.starts_with(n.node + ".")) {
        for (float v : p.grad().to_vector()) g2 += double(v) * v;
        for (float v : before[i]) w2 += double(v) * v;
      }
      ++i;
    }
    VERIFY2(std::abs(n.grad_norm - std::sqrt(g2)) < 1e-6 * std::sqrt(g2), n.node.c_str());
    VERIFY2(std::abs(n.weight_norm - std::sqrt(w2)) < 1e-6 * std::sqrt(w2), n.node.c_str());
    // Plain SGD moves the weights by lr·g.
    const double expected = lr * std::sqrt(g2) / std::sqrt(w2);
    VERIFY2(std::abs(n.update_ratio - expected) < 1e-4 * expected,
            n.node + ": " + std::to_string(n.update_ratio) + " vs " + std::to_string(expected));
  }
}

// ---- the Trainer's schedule --------------------------------------------------------------

TEST(theTrainerSamplesEveryKthStepAfterItsBatch) {
  const graph::Graph g = small_mlp();
  for (const int64_t every : {int64_t(3), int64_t(0)}) {
    const layers::CompiledGraph c = layers::compile(g, kSmallInfo, 3);
    auto opt = optim::make_optimizer({.optimizer = "sgd", .lr = 0.05}, c.model->parameters());
    data::DataLoader loader(small_data(50), {.batch_size = 10});  // 5 steps an epoch
    train::TrainerOptions o = options_for(g, c, every);
    o.epochs = 2;
    bool installed = false;
    int installs = 0;
    o.observe_outputs = [&, observe = o.observe_outputs](train::OutputObserver observer) {
      installed = bool(observer);
      installs += installed;
      observe(std::move(observer));
    };
    train::Trainer trainer(*c.model, *opt, loader, nullptr, o);
    const Recorded r = run_trainer(trainer);
    VERIFY2(r.result.status == train::RunStatus::Completed, r.result.message.c_str());
    const std::vector<NodeStats> stats = r.stats();
    if (every == 0) {
      VERIFY(stats.empty());
      continue;
    }
    // Steps 1, 4, 7, 10 of the run: epoch 1 batches 1 and 4, epoch 2 batches 2 and 5.
    COMPARE(stats.size(), size_t(4));
    const std::vector<std::tuple<int, int64_t, int64_t>> expected = {{1, 1, 1}, {1, 4, 4}, {2, 2, 7}, {2, 5, 10}};
    for (size_t i = 0; i < stats.size(); ++i) {
      COMPARE(std::make_tuple(stats[i].epoch, stats[i].batch, stats[i].step), expected[i]);
      std::vector<std::string> order;
      for (const NodeStat& n : stats[i].nodes) order.push_back(n.node);
      COMPARE(order, (std::vector<std::string>{"fc1", "act", "fc2"}));
    }
    // Each right after its own BatchEnd.
    for (size_t i = 1; i < r.events.size(); ++i)
      if (const auto* s = std::get_if<NodeStats>(&r.events[i])) {
        const auto* b = std::get_if<train::BatchEnd>(&r.events[i - 1]);
        VERIFY(b && b->epoch == s->epoch && b->batch == s->batch);
      }
    // Installed for each sample, and taken off again: the model runs on without measuring.
    COMPARE(installs, 4);
    VERIFY(!installed);
  }
}

// ---- dead ReLUs, in a real run -----------------------------------------------------------

TEST(deadReluExampleGetsItsBadgeInTheFirstEpochAndAHealthyMlpDoesNot) {
  const fs::path digits = testing::suite_subdir("digits");
  data::write_synthetic_digits(digits, 2000, 200);
  for (const char* name : {"mnist_dead_relu", "mnist_mlp"}) {
    graph::Graph g = graph::load_project(kExamples / (std::string(name) + ".plexus"));
    g.dataset.path = digits.string();
    g.training.epochs = 1;
    g.training.stats_every = 3;  // 18 steps: samples at 1, 4, ..., 16
    session::TrainingRun run = session::make_training_run(g, {.project_dir = kExamples});
    train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, nullptr, run.trainer_options);
    const Recorded r = run_trainer(trainer);
    VERIFY2(r.result.status == train::RunStatus::Completed, r.result.message.c_str());
    const std::vector<NodeStats> stats = r.stats();
    COMPARE(stats.size(), size_t(6));
    std::vector<train::HealthIssue> dead;
    for (const NodeStats& s : stats)
      for (const train::HealthIssue& h : s.health)
        if (h.kind == HealthKind::DeadUnits) dead.push_back(h);
    if (std::string(name) == "mnist_mlp") {
      VERIFY2(dead.empty(), dead.empty() ? "" : dead.front().reason.c_str());
      continue;
    }
    VERIFY2(!dead.empty(), "no dead units found");
    VERIFY2(dead.front().node.starts_with("relu"), dead.front().node.c_str());  // relu1 or relu2
    VERIFY2(contains(dead.front().reason, "% of units output zero for every example in each of the last 3 samples"),
            dead.front().reason.c_str());
    // Once dead they stay dead: the issue stands in the last sample too.
    VERIFY(std::any_of(stats.back().health.begin(), stats.back().health.end(),
                       [](const train::HealthIssue& h) { return h.kind == HealthKind::DeadUnits; }));
  }
}

// ---- the health rules --------------------------------------------------------------------

TEST(deadUnitsNeedTheLastSamplesToAgreeAndClear) {
  train::HealthMonitor m(kMonitorNodes);
  // One sample is not enough; two are.
  VERIFY(m.add(sample({dead_stat("act", 0.9)})).empty());
  auto issues = m.add(sample({dead_stat("act", 0.62)}));
  COMPARE(kinds(issues), (std::vector<std::pair<std::string, HealthKind>>{{"act", HealthKind::DeadUnits}}));
  COMPARE(issues[0].reason, std::string("62% of units output zero for every example in each of the last 2 samples"));
  COMPARE(m.add(sample({dead_stat("act", 0.7)}))[0].reason,
          std::string("62% of units output zero for every example in each of the last 3 samples"));
  // One sample at or below half clears it, and it takes three above half again to return.
  VERIFY(m.add(sample({dead_stat("act", 0.5)})).empty());
  VERIFY(m.add(sample({dead_stat("act", 0.9)})).empty());
  VERIFY(m.add(sample({dead_stat("act", 0.9)})).empty());
  COMPARE(m.add(sample({dead_stat("act", 0.9)})).size(), size_t(1));
  // Only activations that output exact zeros: a Sigmoid is never dead.
  train::HealthMonitor s(kMonitorNodes);
  for (int i = 0; i < 3; ++i) VERIFY(s.add(sample({dead_stat("sig", 1.0)})).empty());
}

TEST(gradientsVanishOrExplodeByThresholdAndByTheJumpFromTheLayerBefore) {
  using K = std::vector<std::pair<std::string, HealthKind>>;
  train::HealthMonitor m(kMonitorNodes);
  VERIFY(m.add(sample({params_stat("fc1", 0.5), params_stat("fc2", 0.05)})).empty());  // 10x is fine
  auto issues = m.add(sample({params_stat("fc1", 5e-8), params_stat("fc2", 2e3)}));
  COMPARE(kinds(issues), (K{{"fc1", HealthKind::VanishingGradient}, {"fc2", HealthKind::ExplodingGradient}}));
  COMPARE(issues[0].reason, std::string("gradient norm 5e-08 is below 1e-07"));
  COMPARE(issues[1].reason, std::string("gradient norm 2e+03 is above 1e+03"));
  issues = m.add(sample({params_stat("fc1", 1.0), params_stat("fc2", 0.004)}));
  COMPARE(kinds(issues), (K{{"fc2", HealthKind::VanishingGradient}}));
  COMPARE(issues[0].reason, std::string("gradient norm 0.004 is 2.5e+02x smaller than Linear 'fc1''s (1)"));
  // A layer before whose gradient vanished is no yardstick.
  issues = m.add(sample({params_stat("fc1", 1e-9), params_stat("fc2", 0.5)}));
  COMPARE(kinds(issues), (K{{"fc1", HealthKind::VanishingGradient}}));
  // A node without parameters in between does not count as the layer before.
  issues = m.add(sample({params_stat("fc1", 0.01), dead_stat("act", 0), params_stat("fc2", 3.0)}));
  COMPARE(kinds(issues), (K{{"fc2", HealthKind::ExplodingGradient}}));
  COMPARE(issues[0].reason, std::string("gradient norm 3 is 3e+02x larger than Linear 'fc1''s (0.01)"));
  // Healthy again: cleared.
  VERIFY(m.add(sample({params_stat("fc1", 0.5), params_stat("fc2", 0.2)})).empty());
}

TEST(theUpdateRatioMustStayOutOfItsBandForThreeSamples) {
  train::HealthMonitor m(kMonitorNodes);
  VERIFY(m.add(sample({params_stat("fc1", 1, 1e-6)})).empty());
  VERIFY(m.add(sample({params_stat("fc1", 1, 2e-6)})).empty());
  auto issues = m.add(sample({params_stat("fc1", 1, 3e-6)}));
  COMPARE(issues.size(), size_t(1));
  COMPARE(issues[0].kind, HealthKind::UpdateRatio);
  COMPARE(issues[0].reason, std::string("update/weight ratio 3e-06 over the last 3 samples (healthy is near 1e-3): "
                                        "below 1e-05, the learning rate may be too low"));
  // A gradient that vanished explains a standing update better than a learning rate.
  COMPARE(kinds(m.add(sample({params_stat("fc1", 0, 0)}))),
          (std::vector<std::pair<std::string, HealthKind>>{{"fc1", HealthKind::VanishingGradient}}));
  VERIFY(m.add(sample({params_stat("fc1", 1, 1e-3)})).empty());  // back in the band: cleared
  VERIFY(m.add(sample({params_stat("fc1", 1, 0.5)})).empty());
  VERIFY(m.add(sample({params_stat("fc1", 1, 0.2)})).empty());
  issues = m.add(sample({params_stat("fc1", 1, 0.3)}));
  COMPARE(issues.size(), size_t(1));
  VERIFY2(contains(issues[0].reason, "0.3 over the last 3 samples") &&
              contains(issues[0].reason, "above 0.1, the learning rate may be too high"),
          issues[0].reason.c_str());
}

// A frozen node (lr_mult 0) is meant not to move: its update ratio of 0 is no issue.
TEST(aFrozenNodeIsNotToldItsLearningRateIsTooLow) {
  train::NodeInfos nodes = kMonitorNodes;
  nodes["fc1"].frozen = true;
  train::HealthMonitor m(nodes);
  for (int i = 0; i < 4; ++i) VERIFY(m.add(sample({params_stat("fc1", 1, 0), params_stat("fc2", 1, 1e-3)})).empty());
}

TEST(onlyTheFirstNonFiniteNodeIsNamed) {
  train::HealthMonitor m(kMonitorNodes);
  NodeStat a = dead_stat("fc1", 0), b = dead_stat("act", 0), c = dead_stat("fc2", 0);
  b.finite = c.finite = false;
  const auto issues = m.add(sample({a, b, c}));
  COMPARE(issues.size(), size_t(1));
  COMPARE(issues[0].node, std::string("act"));
  COMPARE(issues[0].kind, HealthKind::NonFinite);
  VERIFY(m.add(sample({a, dead_stat("act", 0), dead_stat("fc2", 0)})).empty());
}

// ---- a NaN, traced -----------------------------------------------------------------------

TEST(aNonFiniteLossNamesTheFirstNodeWhoseOutputIsNotFinite) {
  // Input [4] -> fc0 (ordinary) -> fc1 (weights 1e30) -> fc2 -> loss: on inputs of 1e10,
  // fc0's outputs stay finite, fc1's overflow to ±Inf and fc2 mixes them into NaN.
  graph::Graph g;
  g.nodes = {node("in", "Input"), node("fc0", "Linear", {{"out_features", int64_t(4)}}),
             node("fc1", "Linear", {{"out_features", int64_t(8)}}),
             node("fc2", "Linear", {{"out_features", int64_t(3)}}), node("loss", "CrossEntropy")};
  g.nodes[2].name = "big";
  g.edges = {edge("in", "fc0", "x"), edge("fc0", "fc1"), edge("fc1", "fc2"), edge("fc2", "loss"),
             edge("in", "loss", "y", "target")};
  const layers::CompiledGraph c = layers::compile(g, kSmallInfo, 3);
  for (const auto& [name, p] : c.model->named_parameters())
    if (name == "fc1.weight") p.detach().fill_(1e30f);
  auto opt = optim::make_optimizer({.optimizer = "sgd", .lr = 0.1}, c.model->parameters());
  data::DataLoader loader(small_data(20, 1e10f), {.batch_size = 10});
  train::Trainer trainer(*c.model, *opt, loader, nullptr, options_for(g, c, 0));  // no sampling: still traced
  const Recorded r = run_trainer(trainer);
  COMPARE(r.result.status, train::RunStatus::Failed);
  VERIFY2(contains(r.result.message, "at epoch 1, batch 1; the first non-finite output is Linear 'big'; try a lower"),
          r.result.message.c_str());
  const std::vector<NodeStats> stats = r.stats();
  COMPARE(stats.size(), size_t(1));
  COMPARE(stats[0].step, int64_t(1));
  COMPARE(stats[0].nodes.size(), size_t(3));
  VERIFY(stats[0].nodes[0].finite && !stats[0].nodes[1].finite);
  COMPARE(kinds(stats[0].health), (std::vector<std::pair<std::string, HealthKind>>{{"fc1", HealthKind::NonFinite}}));
  // The NodeStats comes before the Failed event that ends the run.
  VERIFY(std::holds_alternative<NodeStats>(r.events[r.events.size() - 2]));
  VERIFY(std::holds_alternative<train::Failed>(r.events.back()));
}

TEST(aLossThatOverflowsFromFiniteOutputsSaysSo) {
  // MSE of outputs near 1e20: every node finite, the squares are not.
  graph::Graph g;
  g.nodes = {node("in", "Input"), node("fc", "Linear", {{"out_features", int64_t(1)}}), node("loss", "MSE")};
  g.edges = {edge("in", "fc", "x"), edge("fc", "loss"), edge("in", "loss", "y", "target")};
  const layers::CompiledGraph c = layers::compile(g, {{4}, {1}, 0, 0}, 3);
  for (const auto& [name, p] : c.model->named_parameters()) p.detach().fill_(1.f);
  auto opt = optim::make_optimizer({.optimizer = "sgd", .lr = 0.1}, c.model->parameters());
  data::DataLoader loader(std::make_shared<data::TensorDataset>(full({10, 4}, 1e20f), zeros({10, 1})), {.batch_size = 10});
  train::Trainer trainer(*c.model, *opt, loader, nullptr, options_for(g, c, 0));
  const Recorded r = run_trainer(trainer);
  VERIFY2(contains(r.result.message, "infinite at epoch 1, batch 1; every node's output is finite, the loss computed "
                                     "from them is not"),
          r.result.message.c_str());
  VERIFY(r.stats().at(0).health.empty());
}

// ---- the setting -------------------------------------------------------------------------

TEST(statsEveryRoundTripsThroughTheProjectAndIsRangeChecked) {
  graph::Graph g = small_mlp();
  COMPARE(g.training.stats_every, int64_t(20));
  graph::set_training_value(g.training, "stats_every", int64_t(7));
  const std::string text = graph::serialize_project(g);
  VERIFY2(contains(text, "\"stats_every\": 7"), text.c_str());
  COMPARE(graph::parse_project(text, "p.plexus").training.stats_every, int64_t(7));
  VERIFY(contains(message_of<ValueError>([&] { graph::set_training_value(g.training, "stats_every", int64_t(-1)); }),
                  "must be between 0 and 1000000"));
  g.training.stats_every = 1000001;
  COMPARE(message_of<ValueError>([&] { graph::check_training_values(g.training); }),
          std::string("training: stats_every must be between 0 and 1000000, got 1000001"));
}

