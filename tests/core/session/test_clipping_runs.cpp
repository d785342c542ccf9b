// A project's gradient clipping (training settings clip_norm and clip_value) in the runs the front
// ends train: with plain SGD at lr 1, one step moves the weights by exactly the gradient the step
// clipped, so the clipping is read off the weights. The clipping itself is checked against torch in
// tests/core/optim/test_optim.cpp.
#include <algorithm>
#include <cmath>
#include <vector>

#include "session/run.h"
#include "support/check.h"
#include "support/partial_load_fixture.h"

using namespace plexus;
using plexus::testing::mlp_a;
using plexus::testing::train_epochs;

namespace {

// Every parameter's values, in the model's order.
std::vector<float> parameters(const nn::Module& model) {
  std::vector<float> out;
  for (const auto& [name, p] : model.named_parameters()) {
    const std::vector<float> v = p.to_vector();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// How one optimizer step of mlp_a (plain SGD at lr 1, with the clipping given) moves the weights;
// empty when the run did not complete.
std::vector<float> one_step(double clip_norm, double clip_value) {
  graph::Graph g = mlp_a();
  g.training.optimizer = "sgd";
  g.training.lr = 1;
  g.training.momentum = 0;
  g.training.weight_decay = 0;
  g.training.epochs = 1;
  g.training.clip_norm = clip_norm;
  g.training.clip_value = clip_value;
  session::RunOptions options;
  options.train_subset = g.training.batch_size;  // one batch: one step
  session::TrainingRun run = session::make_training_run(g, options);
  const std::vector<float> before = parameters(*run.compiled.model);
  if (train_epochs(run).status != train::RunStatus::Completed) return {};  // the tests find it empty
  std::vector<float> step = parameters(*run.compiled.model);
  for (size_t i = 0; i < step.size(); ++i) step[i] -= before[i];
  return step;
}

float largest(const std::vector<float>& v) {
  float m = 0;
  for (const float x : v) m = std::max(m, std::fabs(x));
  return m;
}

double norm(const std::vector<float>& v) {
  double s = 0;
  for (const float x : v) s += double(x) * x;
  return std::sqrt(s);
}

}  // namespace

// clip_value: no element of the step is larger than it, and the largest is it (the unclipped
// gradient has larger elements).
TEST(aProjectsClipValueBoundsEveryElementOfTheGradient) {
  const std::vector<float> free = one_step(0, 0);
  const float clip = 1e-3f;
  VERIFY(!free.empty());
  VERIFY2(largest(free) > 10 * clip, "the unclipped gradient must have elements to clip");
  const std::vector<float> clipped = one_step(0, clip);
  VERIFY(!clipped.empty());
  const float m = largest(clipped);
  VERIFY2(m <= clip * (1 + 1e-5f) && m >= clip * (1 - 1e-5f), std::to_string(m).c_str());
}

// clip_norm: the step's whole norm is scaled down to it, its direction kept.
TEST(aProjectsClipNormScalesTheGradientToThatNorm) {
  const std::vector<float> free = one_step(0, 0);
  const double clip = 1e-2;
  VERIFY(!free.empty());
  VERIFY2(norm(free) > 10 * clip, "the unclipped gradient must be longer than the clip");
  const std::vector<float> clipped = one_step(clip, 0);
  COMPARE(clipped.size(), free.size());
  VERIFY2(std::fabs(norm(clipped) - clip) < 1e-4 * clip, std::to_string(norm(clipped)).c_str());
  const double scale = clip / norm(free);
  for (size_t i = 0; i < free.size(); ++i)
    VERIFY(std::fabs(clipped[i] - free[i] * scale) <= 1e-6 + 1e-3 * std::fabs(free[i] * scale));
}
